/*
 * A hub: half-duplex Ethernet through a repeater, CSMA/CD as in IEEE 802.3 at
 * 10 or 100 Mb/s (docs/fabric.md has the model, its parameters and formulas).
 *
 * Every station hears every other prop_ns later (through the hub, repeater
 * included). A transmission of a station s from start to end (its last bit,
 * the jam's if it collided) is carrier at every other station from
 * start + prop_ns to end + prop_ns. A station with a frame defers while it
 * senses carrier, and until the medium has been quiet for the inter-frame gap
 * (carrier during the gap starts it again; so does its own transmission); then
 * it sends preamble, the frame padded to min_frame_bytes, and the FCS.
 *
 * Transmissions of two stations collide when each starts before the other's
 * signal reaches it: their starts are less than prop_ns apart. Each detects
 * the collision when the first colliding signal reaches it, finishes its
 * preamble if it is still sending it, sends jam_bits and stops; for its n-th
 * collision it waits r slot times from the end of the jam, r uniform in
 * [0, 2^min(n, backoff_limit) - 1] from its own splitmix64 generator, and
 * tries again (deferring as above); after attempt_limit collisions the frame
 * is dropped ("excess collisions"). A frame sent whole arrives prop_ns after
 * its last bit: at its destination only (the NIC would filter by MAC
 * anyway), or at every other station for a broadcast.
 *
 * A hub has no queues: a station with a frame waiting for the medium holds the
 * frames after it in its NIC's ring. So every frame handed to the hub earns its
 * sender a notice (fabric_notice) once the hub has taken it: when it can no longer
 * collide (HUB_RESOLVE), or is dropped; from the notice on the station may hand over
 * its next frame, which then waits here for the medium while this one is on the
 * wire (the NIC fetches it into its FIFO meanwhile). The notice arrives the least
 * latency of any arrival the event causes after it (the lock-step's lookahead: the
 * shortest frame on the wire, plus prop_ns at an ATTEMPT). A station that waits for
 * its notices (the retrolink netdev) has at most one frame here; queue_frames bounds
 * one that does not (a synthetic station), and drops_queue_full counts what it loses.
 *
 * Decided without looking ahead (the fabric runs an event only when everything
 * earlier is known): the shortest transmission (a padded empty frame) must
 * last at least 2 * prop_ns, so both sides of a collision detect it while they
 * send, and a transmission collides exactly when another one starts less than
 * prop_ns before or after it. So a start collides with the transmissions that
 * began in the prop_ns before it, known when it starts, and it is whole if no
 * other one starts in the prop_ns after it, known prop_ns later (HUB_RESOLVE).
 * A collision is settled as soon as the second start is known: the first
 * colliding start fixes when each side detects it (a later one is heard
 * later), hence the jam's end and the backoff, which all lie after that start.
 * Whether a station may start at t depends only on signals that reached it by
 * t, from starts at or before t - prop_ns, all settled. No decision depends on
 * the order of events at one instant.
 */
#include <stdlib.h>

#include "eth_framing.h"
#include "frame_fifo.h"
#include "link_stats.h"

enum { HUB_ATTEMPT, HUB_RESOLVE };

/* One transmission on the medium. */
struct hub_tx {
    uint32_t station;
    uint64_t start;
    uint64_t end;             /* its last bit: the whole frame's, or once it collided the jam's */
    bool collided;
};

struct hub_station {
    struct frame_fifo queue;  /* its head is the frame being sent */
    bool busy;                /* an ATTEMPT or RESOLVE for it is planned */
    bool deferred;            /* the coming transmission was counted as deferred */
    uint64_t attempts;        /* collisions of the head frame so far */
    uint64_t next_free;       /* its own last transmission's end + the gap */
    uint64_t rng;             /* splitmix64 state */
    uint64_t collisions, deferrals, drops_excess, drops_full;
    uint64_t queue_peak;      /* the most frames its queue held */
    struct link_stats stats;
};

struct hub {
    struct eth_framing eth;
    uint64_t slot_bits, jam_bits, attempt_limit, backoff_limit, seed, queue_frames;
    uint64_t slot_ns, jam_ns, preamble_ns;
    uint32_t n;
    struct hub_station *st;
    struct hub_tx *tx;        /* transmissions still heard or still undecided, by start */
    size_t ntx, captx;
};

static int hub_configure(struct network *net, char **keys, char **vals, int n, char *err,
                         size_t errlen)
{
    struct hub *h = xcalloc(1, sizeof(*h));
    bool used[64] = { false };

    h->slot_bits = 512;
    h->jam_bits = 32;
    h->attempt_limit = 16;
    h->backoff_limit = 10;
    h->queue_frames = 256;
    /* 200 m of cable (two 100 m segments) at 5 ns/m, and 500 ns in the repeater */
    if (eth_framing_configure(&h->eth, 1500, keys, vals, n, used, err, errlen) ||
        topo_param(keys, vals, n, used, "slot_bits", false, &h->slot_bits, err, errlen) ||
        topo_param(keys, vals, n, used, "jam_bits", false, &h->jam_bits, err, errlen) ||
        topo_param(keys, vals, n, used, "attempt_limit", false, &h->attempt_limit, err, errlen) ||
        topo_param(keys, vals, n, used, "backoff_limit", false, &h->backoff_limit, err, errlen) ||
        topo_param(keys, vals, n, used, "seed", false, &h->seed, err, errlen) ||
        topo_param(keys, vals, n, used, "queue_frames", false, &h->queue_frames, err, errlen) ||
        topo_unused(keys, n, used, "hub", err, errlen) ||
        eth_bits_ns(h->slot_bits, h->eth.rate, "the slot time", &h->slot_ns, err, errlen) ||
        eth_bits_ns(h->jam_bits, h->eth.rate, "the jam", &h->jam_ns, err, errlen) ||
        eth_bits_ns(8 * h->eth.preamble, h->eth.rate, "the preamble", &h->preamble_ns, err,
                    errlen)) {
        free(h);
        return -1;
    }
    if (!h->eth.prop || !h->attempt_limit || h->backoff_limit > 16 || !h->queue_frames) {
        snprintf(err, errlen, "hub needs prop_ns > 0, attempt_limit > 0, backoff_limit <= 16 "
                 "and queue_frames > 0");
        free(h);
        return -1;
    }
    if (2 * h->eth.prop > eth_min_wire_ns(&h->eth)) {
        snprintf(err, errlen, "hub: a round trip (2 * prop_ns = %llu ns) is longer than the "
                 "shortest frame on the wire (%llu ns): a collision could go unnoticed",
                 (unsigned long long)(2 * h->eth.prop),
                 (unsigned long long)eth_min_wire_ns(&h->eth));
        free(h);
        return -1;
    }
    h->n = net->n;
    h->st = xcalloc(h->n, sizeof(*h->st));
    for (uint32_t i = 0; i < h->n; i++) {
        h->st[i].rng = h->seed * 256 + i;    /* i < RL_MAX_NODES = 256 */
        snprintf(h->st[i].stats.name, sizeof(h->st[i].stats.name), "hub:station%u", i);
    }
    net->state = h;
    return 0;
}

/* From a frame ready on a quiet medium: the shortest frame, then prop_ns. */
static uint64_t hub_min_latency(struct network *net)
{
    struct hub *h = net->state;
    return eth_min_wire_ns(&h->eth) + h->eth.prop;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Forget transmissions that can no longer collide with anything nor be heard. */
static void forget_old(struct hub *h, uint64_t now)
{
    uint64_t P = h->eth.prop;
    size_t k = 0;

    for (size_t i = 0; i < h->ntx; i++) {
        const struct hub_tx *t = &h->tx[i];
        /* it can collide with starts before start + P, and is heard until end + P */
        if (t->start + 2 * P > now || t->end + P + h->eth.ifg_ns > now) {
            h->tx[k++] = *t;
        }
    }
    h->ntx = k;
}

static void next_frame(struct network *net, struct hub *h, uint32_t s)
{
    struct hub_station *st = &h->st[s];

    if (st->queue.n) {
        fabric_schedule(net, st->next_free, HUB_ATTEMPT, NULL, s);
    } else {
        st->busy = false;
    }
}

/* Transmission t collided; its station detects it at `detect` (the first
 * colliding signal reaches it), sends the rest of its preamble and the jam,
 * and backs off, or gives the frame up. Every time planned here is after the
 * colliding start that the fabric is processing. */
static void collide(struct network *net, struct hub *h, struct hub_tx *t, uint64_t now,
                    uint64_t detect)
{
    uint32_t s = t->station;
    struct hub_station *st = &h->st[s];

    t->collided = true;
    t->end = max64(detect, t->start + h->preamble_ns) + h->jam_ns;
    st->next_free = t->end + h->eth.ifg_ns;
    st->collisions++;
    fabric_trace(net, detect, "collision", fifo_peek(&st->queue));
    if (++st->attempts >= h->attempt_limit) {
        st->attempts = 0;
        st->drops_excess++;
        fabric_drop(net, fifo_pop(&st->queue), DROP_EXCESS_COLLISIONS);
        fabric_notice(net, s, now + hub_min_latency(net));
        next_frame(net, h, s);
        return;
    }
    uint64_t k = min64(st->attempts, h->backoff_limit);
    uint64_t r = splitmix64(&st->rng) & ((UINT64_C(1) << k) - 1);
    fabric_schedule(net, t->end + r * h->slot_ns, HUB_ATTEMPT, NULL, s);
}

/* Station s wants to send its head frame now: defer, or start. */
static void attempt(struct network *net, struct hub *h, uint32_t s, uint64_t now)
{
    struct hub_station *st = &h->st[s];
    uint64_t P = h->eth.prop, go = max64(now, st->next_free);
    bool carrier = false;

    forget_old(h, now);
    for (size_t i = 0; i < h->ntx; i++) {
        const struct hub_tx *t = &h->tx[i];
        /* heard at s from start + P to end + P (settled by now), then the gap */
        if (t->station != s && t->start + P <= now && t->end + P + h->eth.ifg_ns > now) {
            carrier = true;
            go = max64(go, t->end + P + h->eth.ifg_ns);
        }
    }
    if (go > now) {
        if (carrier && !st->deferred) {
            st->deferred = true;
            st->deferrals++;
        }
        fabric_schedule(net, go, HUB_ATTEMPT, NULL, s);
        return;
    }
    struct frame *fr = fifo_peek(&st->queue);
    uint64_t detect = NEVER;
    st->deferred = false;
    fabric_trace(net, now, "start", fr);
    /* the starts in the last P collide with this one: each is heard here at
     * its start + P, and hears this one at now + P */
    for (size_t i = 0; i < h->ntx; i++) {
        struct hub_tx *o = &h->tx[i];
        if (o->station != s && o->start + P > now) {
            detect = min64(detect, o->start + P);
            if (!o->collided) {
                collide(net, h, o, now, now + P);
            }
        }
    }
    if (h->ntx == h->captx) {
        h->captx = h->captx ? 2 * h->captx : 16;
        h->tx = xreallocarray(h->tx, h->captx, sizeof(*h->tx));
    }
    struct hub_tx *t = &h->tx[h->ntx++];
    *t = (struct hub_tx){ .station = s, .start = now,
                          .end = now + eth_wire_ns(&h->eth, fr->len) };
    if (detect != NEVER) {
        collide(net, h, t, now, detect);
    } else {
        fabric_schedule(net, now + P, HUB_RESOLVE, NULL, s);
    }
}

/* prop_ns after station s started: nobody else can start into it any more. If
 * no other start collided with it, the frame goes through. */
static void resolved(struct network *net, struct hub *h, uint32_t s, uint64_t now)
{
    struct hub_station *st = &h->st[s];
    const struct hub_tx *t = NULL;

    for (size_t i = 0; i < h->ntx && !t; i++) {
        if (h->tx[i].station == s && h->tx[i].start + h->eth.prop == now) {
            t = &h->tx[i];
        }
    }
    if (t->collided) {
        return;               /* settled when the colliding start came */
    }
    struct frame *fr = fifo_pop(&st->queue);
    st->attempts = 0;
    st->next_free = t->end + h->eth.ifg_ns;
    link_count(&st->stats, fr, t->start - fr->queued);
    fabric_notice(net, s, now + eth_min_wire_ns(&h->eth));
    if (fr->dst == RL_NODE_BROADCAST) {
        fabric_deliver_all(net, fr, t->end + h->eth.prop);
    } else {
        fabric_deliver(net, fr, t->end + h->eth.prop);
    }
    next_frame(net, h, s);
}

static void hub_inject(struct network *net, struct frame *fr, uint64_t now)
{
    struct hub *h = net->state;
    struct hub_station *st = &h->st[fr->src];

    if (fr->len > h->eth.mtu || st->queue.n >= h->queue_frames) {
        uint32_t s = fr->src;
        st->drops_full += fr->len <= h->eth.mtu;
        fabric_drop(net, fr, fr->len > h->eth.mtu ? DROP_OVERSIZE : DROP_QUEUE_FULL);
        fabric_notice(net, s, now + hub_min_latency(net));
        return;
    }
    fr->queued = now;
    fifo_push(&st->queue, fr);
    st->queue_peak = max64(st->queue_peak, st->queue.n);
    if (!st->busy) {
        st->busy = true;
        attempt(net, h, fr->src, now);
    }
}

static void hub_event(struct network *net, int kind, uint64_t now, void *ptr, uint64_t arg)
{
    struct hub *h = net->state;
    (void)ptr;

    if (kind == HUB_ATTEMPT) {
        attempt(net, h, arg, now);
    } else {
        resolved(net, h, arg, now);
    }
}

/* A station about to try is a whole frame and prop_ns from an arrival; a
 * transmission at HUB_RESOLVE (prop_ns after it started) is the rest of it. */
static uint64_t hub_event_latency(struct network *net, int kind, uint64_t arg)
{
    struct hub *h = net->state;
    (void)arg;
    return kind == HUB_ATTEMPT ? hub_min_latency(net) : eth_min_wire_ns(&h->eth);
}

static void hub_stats(struct network *net, FILE *out)
{
    struct hub *h = net->state;
    for (uint32_t i = 0; i < h->n; i++) {
        const struct hub_station *st = &h->st[i];
        link_print_begin(out, &st->stats, i == 0);
        fprintf(out, ", \"collisions\": %llu, \"deferrals\": %llu, "
                "\"drops_excess_collisions\": %llu, \"drops_queue_full\": %llu, "
                "\"queue_peak\": %llu}",
                (unsigned long long)st->collisions, (unsigned long long)st->deferrals,
                (unsigned long long)st->drops_excess, (unsigned long long)st->drops_full,
                (unsigned long long)st->queue_peak);
    }
}

const struct topology_ops topo_hub_ops = {
    .name = "hub", .broadcast = true, .notices = true, .configure = hub_configure, .inject = hub_inject,
    .event = hub_event, .min_latency = hub_min_latency, .event_latency = hub_event_latency,
    .stats = hub_stats,
};
