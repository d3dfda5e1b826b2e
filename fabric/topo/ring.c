/*
 * Token ring (FDDI timed token, or 802.5 with thtt_ns = 0): the stations are
 * the nodes in id order; one transmitter at a time.
 *
 * The token takes hop = station_delay_ns + token_bytes/rate to pass from one
 * station to the next. A station with frames seizes it when it arrives,
 * transmits frames back to back (each ceil((max(len, min_frame_bytes) +
 * overhead) / rate)) while its token holding time lasts (thtt_ns; 0 = one frame
 * per visit), and releases it when its last frame ends (early token release).
 * As in FDDI, a frame the holder queues while it transmits still goes out in
 * this visit if the holding time has not run out when the frame before it ends.
 * A frame reaches station d from station s after its transmission plus
 * ((d - s) mod N) station delays; a broadcast reaches every other station so,
 * each at its own distance.
 *
 * An idle ring costs nothing: the token's position is computed from where and
 * when it was last released, and only the next seizure is an event.
 */
#include <stdlib.h>

#include "frame_fifo.h"
#include "link_stats.h"

enum { RING_SEIZE, RING_RELEASE };

struct ring {
    uint64_t rate, station_delay, overhead, mtu, min_frame, token_bytes, thtt;
    uint64_t hop;             /* token passing time per station */
    uint32_t n;
    uint32_t released_at_station;
    uint64_t released_at;     /* the token left that station then */
    bool busy;
    uint32_t holder;          /* while busy: the transmitting station */
    uint64_t seized_at;       /* while busy: when it took the token */
    uint64_t tx_end;          /* while busy: when its last frame so far ends */
    uint64_t gen;             /* invalidates seizure events planned before a change */
    uint64_t release_gen;     /* invalidates a release moved later by another frame */
    struct frame_fifo *queue;
    struct link_stats *stats;
};

static int ring_configure(struct network *net, char **keys, char **vals, int n, char *err,
                          size_t errlen)
{
    struct ring *r = xcalloc(1, sizeof(*r));
    bool used[64] = { false };

    r->mtu = 4500;
    r->token_bytes = 11;
    if (topo_param(keys, vals, n, used, "rate", true, &r->rate, err, errlen) ||
        topo_param(keys, vals, n, used, "station_delay_ns", true, &r->station_delay, err, errlen) ||
        topo_param(keys, vals, n, used, "overhead_bytes", false, &r->overhead, err, errlen) ||
        topo_param(keys, vals, n, used, "mtu", false, &r->mtu, err, errlen) ||
        topo_param(keys, vals, n, used, "token_bytes", false, &r->token_bytes, err, errlen) ||
        topo_param(keys, vals, n, used, "thtt_ns", false, &r->thtt, err, errlen) ||
        topo_param(keys, vals, n, used, "min_frame_bytes", false, &r->min_frame, err, errlen) ||
        topo_unused(keys, n, used, "token_ring", err, errlen) ||
        topo_check_min_frame(r->min_frame, r->mtu, "token_ring", err, errlen)) {
        free(r);
        return -1;
    }
    if (!r->rate || !r->station_delay) {
        snprintf(err, errlen, "token_ring needs rate > 0 and station_delay_ns > 0");
        free(r);
        return -1;
    }
    r->n = net->n;
    r->hop = r->station_delay + bytes_ns(r->token_bytes, r->rate);
    r->released_at_station = r->n - 1;     /* at time 0 the token heads for station 0 */
    r->queue = xcalloc(r->n, sizeof(*r->queue));
    r->stats = xcalloc(r->n, sizeof(*r->stats));
    for (uint32_t i = 0; i < r->n; i++) {
        snprintf(r->stats[i].name, sizeof(r->stats[i].name), "ring:station%u", i);
    }
    net->state = r;
    return 0;
}

/* When the token, circulating freely, next reaches station s at or after t. */
static uint64_t token_reaches(const struct ring *r, uint32_t s, uint64_t t)
{
    uint64_t k = (s + r->n - r->released_at_station) % r->n;
    if (k == 0) {
        k = r->n;               /* the releasing station sees it after a full turn */
    }
    uint64_t first = r->released_at + k * r->hop, turn = (uint64_t)r->n * r->hop;
    if (first >= t) {
        return first;
    }
    return first + (t - first + turn - 1) / turn * turn;
}

static void plan_seizure(struct network *net, struct ring *r, uint64_t now)
{
    uint64_t best = NEVER;
    uint32_t who = 0;

    r->gen++;
    for (uint32_t s = 0; s < r->n; s++) {
        if (r->queue[s].n) {
            uint64_t t = token_reaches(r, s, now);
            if (t < best) {
                best = t;
                who = s;
            }
        }
    }
    if (best != NEVER) {
        fabric_schedule(net, best, RING_SEIZE, NULL, (r->gen << 16) | who);
    }
}

/* Put one frame of the token holder on the ring at `at`; returns when it ends. */
static uint64_t transmit(struct network *net, struct ring *r, struct frame *fr, uint64_t at)
{
    uint64_t tx = bytes_ns(frame_wire_bytes(fr->len, r->min_frame, r->overhead), r->rate);

    link_count(&r->stats[fr->src], fr, at - fr->ready);
    fabric_trace(net, at, "start", fr);
    if (fr->dst != RL_NODE_BROADCAST) {
        uint64_t hops = (fr->dst + r->n - fr->src) % r->n;
        fabric_deliver(net, fr, at + tx + hops * r->station_delay);
        return at + tx;
    }
    for (uint64_t hops = 1; hops < r->n; hops++) {
        uint32_t d = (fr->src + hops) % r->n;
        fabric_deliver(net, fabric_copy(net, fr, d), at + tx + hops * r->station_delay);
    }
    fabric_discard(net, fr);
    return at + tx;
}

static bool may_send_another(const struct ring *r)
{
    return r->thtt && r->tx_end - r->seized_at < r->thtt;
}

static void plan_release(struct network *net, struct ring *r)
{
    r->release_gen++;
    fabric_schedule(net, r->tx_end, RING_RELEASE, NULL, (r->release_gen << 16) | r->holder);
}

static void ring_inject(struct network *net, struct frame *fr, uint64_t now)
{
    struct ring *r = net->state;

    if (fr->len > r->mtu) {
        fabric_drop(net, fr, DROP_OVERSIZE);
        return;
    }
    if (r->busy && fr->src == r->holder && !r->queue[fr->src].n && may_send_another(r)) {
        /* the holder is still transmitting (tx_end >= now): this frame follows */
        r->tx_end = transmit(net, r, fr, r->tx_end);
        plan_release(net, r);
        return;
    }
    fifo_push(&r->queue[fr->src], fr);
    if (!r->busy) {
        plan_seizure(net, r, now);
    }
}

static void seize(struct network *net, struct ring *r, uint32_t s, uint64_t now)
{
    r->busy = true;
    r->holder = s;
    r->seized_at = now;
    r->tx_end = now;
    do {
        r->tx_end = transmit(net, r, fifo_pop(&r->queue[s]), r->tx_end);
    } while (r->queue[s].n && may_send_another(r));
    plan_release(net, r);
}

static void ring_event(struct network *net, int kind, uint64_t now, void *ptr, uint64_t arg)
{
    struct ring *r = net->state;
    (void)ptr;

    if (kind == RING_SEIZE) {
        if ((arg >> 16) == (r->gen & 0xffffffffffffull) && !r->busy) {
            seize(net, r, arg & 0xffff, now);
        }
    } else if ((arg >> 16) == (r->release_gen & 0xffffffffffffull)) {
        r->busy = false;
        r->released_at_station = arg & 0xffff;
        r->released_at = now;
        plan_seizure(net, r, now);
    }
}

static uint64_t ring_min_latency(struct network *net)
{
    struct ring *r = net->state;
    return bytes_ns(frame_wire_bytes(0, r->min_frame, r->overhead), r->rate) + r->station_delay;
}

static void ring_stats(struct network *net, FILE *out)
{
    struct ring *r = net->state;
    for (uint32_t i = 0; i < r->n; i++) {
        link_print(out, &r->stats[i], i == 0);
    }
}

const struct topology_ops topo_ring_ops = {
    .name = "token_ring", .broadcast = true, .configure = ring_configure, .inject = ring_inject,
    .event = ring_event, .min_latency = ring_min_latency, .stats = ring_stats,
};
