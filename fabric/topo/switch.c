/*
 * A Fibre Channel style switch: every node has a full-duplex link to one
 * switch port; frames are stored and forwarded through per-output FIFO
 * queues, under buffer-to-buffer credit flow control (docs/fabric.md).
 *
 * Each link direction is a transmitter with a FIFO and a credit count. A
 * transmitter sends the frame at the head of its queue when its link is free
 * and it holds a credit; a frame of N bytes occupies the link for
 * ceil((max(N, min_frame_bytes) + overhead_bytes) / rate) and reaches the far
 * end prop_ns after it ends. Credits (bb_credit receive buffers at each end of every link) come
 * back as R_RDY (rrdy_bytes on the wire, then prop_ns) when the receiving
 * buffer is freed:
 *  - the switch frees an input buffer when the frame has left through its
 *    output link (store and forward: it is forwarded switch_delay_ns after
 *    being fully received);
 *  - a node frees its receive buffer as the frame arrives (the adapter
 *    takes it into its own memory at once).
 * Transmitters 0..N-1 are the nodes' (node -> switch), N..2N-1 the switch's
 * outputs (switch -> node).
 */
#include <stdlib.h>

#include "frame_fifo.h"
#include "link_stats.h"

enum { SW_AT_SWITCH, SW_CREDIT, SW_KICK };

struct sw_tx {
    struct frame_fifo queue;
    uint64_t credits;
    uint64_t free_at;         /* its link is busy until then */
    bool kick_planned;        /* an SW_KICK at free_at is already scheduled */
    struct link_stats stats;
};

struct sw {
    uint64_t rate, prop, overhead, mtu, min_frame, switch_delay, bb_credit, rrdy_bytes;
    uint32_t n;
    struct sw_tx *tx;         /* 2n transmitters */
};

static int sw_configure(struct network *net, char **keys, char **vals, int n, char *err,
                        size_t errlen)
{
    struct sw *s = xcalloc(1, sizeof(*s));
    bool used[64] = { false };

    s->mtu = 2112;            /* FC's largest frame payload */
    s->bb_credit = 1;
    s->rrdy_bytes = 4;        /* an ordered set */
    if (topo_param(keys, vals, n, used, "rate", true, &s->rate, err, errlen) ||
        topo_param(keys, vals, n, used, "prop_ns", false, &s->prop, err, errlen) ||
        topo_param(keys, vals, n, used, "overhead_bytes", false, &s->overhead, err, errlen) ||
        topo_param(keys, vals, n, used, "mtu", false, &s->mtu, err, errlen) ||
        topo_param(keys, vals, n, used, "switch_delay_ns", false, &s->switch_delay, err, errlen) ||
        topo_param(keys, vals, n, used, "bb_credit", false, &s->bb_credit, err, errlen) ||
        topo_param(keys, vals, n, used, "rrdy_bytes", false, &s->rrdy_bytes, err, errlen) ||
        topo_param(keys, vals, n, used, "min_frame_bytes", false, &s->min_frame, err, errlen) ||
        topo_unused(keys, n, used, "switch", err, errlen) ||
        topo_check_min_frame(s->min_frame, s->mtu, "switch", err, errlen)) {
        free(s);
        return -1;
    }
    if (!s->rate || !s->bb_credit) {
        snprintf(err, errlen, "switch needs rate > 0 and bb_credit > 0");
        free(s);
        return -1;
    }
    s->n = net->n;
    s->tx = xcalloc(2 * s->n, sizeof(*s->tx));
    for (uint32_t i = 0; i < 2 * s->n; i++) {
        s->tx[i].credits = s->bb_credit;
        if (i < s->n) {
            snprintf(s->tx[i].stats.name, sizeof(s->tx[i].stats.name), "switch:node%u->switch", i);
        } else {
            snprintf(s->tx[i].stats.name, sizeof(s->tx[i].stats.name), "switch:switch->node%u",
                     i - s->n);
        }
    }
    net->state = s;
    return 0;
}

static uint64_t wire_ns(const struct sw *s, uint64_t bytes)
{
    return bytes_ns(frame_wire_bytes(bytes, s->min_frame, s->overhead), s->rate);
}

/* Send what transmitter i can send now; plan a retry when its link frees. */
static void try_send(struct network *net, struct sw *s, uint32_t i, uint64_t now)
{
    struct sw_tx *t = &s->tx[i];
    struct frame *fr;

    while ((fr = fifo_peek(&t->queue)) && t->credits) {
        if (t->free_at > now) {
            if (!t->kick_planned) {
                fabric_schedule(net, t->free_at, SW_KICK, NULL, i);
                t->kick_planned = true;
            }
            return;
        }
        fifo_pop(&t->queue);
        t->credits--;
        uint64_t on_wire = wire_ns(s, fr->len);
        t->free_at = now + on_wire;
        link_count(&t->stats, fr, now - fr->queued);
        fabric_trace(net, now, "start", fr);
        if (i < s->n) {
            fabric_schedule(net, now + on_wire + s->prop + s->switch_delay, SW_AT_SWITCH, fr, 0);
        } else {
            uint64_t rrdy = bytes_ns(s->rrdy_bytes, s->rate) + s->prop;
            uint64_t arrival = now + on_wire + s->prop;
            /* the switch's input buffer is free once the frame has left it */
            fabric_schedule(net, now + on_wire + rrdy, SW_CREDIT, NULL, fr->src);
            /* the node's buffer is free as the frame arrives */
            fabric_schedule(net, arrival + rrdy, SW_CREDIT, NULL, i);
            fabric_deliver(net, fr, arrival);
        }
    }
}

static void sw_inject(struct network *net, struct frame *fr, uint64_t now)
{
    struct sw *s = net->state;

    if (fr->len > s->mtu) {
        fabric_drop(net, fr, DROP_OVERSIZE);
        return;
    }
    fr->queued = now;
    fifo_push(&s->tx[fr->src].queue, fr);
    try_send(net, s, fr->src, now);
}

static void sw_event(struct network *net, int kind, uint64_t now, void *ptr, uint64_t arg)
{
    struct sw *s = net->state;

    if (kind == SW_AT_SWITCH) {
        struct frame *fr = ptr;
        fr->queued = now;
        fifo_push(&s->tx[s->n + fr->dst].queue, fr);
        try_send(net, s, s->n + fr->dst, now);
        return;
    }
    if (kind == SW_CREDIT) {
        s->tx[arg].credits++;
    } else {
        s->tx[arg].kick_planned = false;
    }
    try_send(net, s, arg, now);
}

static uint64_t sw_min_latency(struct network *net)
{
    struct sw *s = net->state;
    return max64(1, 2 * (wire_ns(s, 0) + s->prop) + s->switch_delay);
}

/* A frame reaching the switch, or a switch output free to send, is one link
 * from its arrival; a node's transmitter (credit back, link free) is the
 * whole path away. */
static uint64_t sw_event_latency(struct network *net, int kind, uint64_t arg)
{
    struct sw *s = net->state;
    bool node_side = (kind == SW_CREDIT || kind == SW_KICK) && arg < s->n;
    return node_side ? sw_min_latency(net) : max64(1, wire_ns(s, 0) + s->prop);
}

static void sw_stats(struct network *net, FILE *out)
{
    struct sw *s = net->state;
    for (uint32_t i = 0; i < 2 * s->n; i++) {
        link_print(out, &s->tx[i].stats, i == 0);
    }
}

const struct topology_ops topo_switch_ops = {
    .name = "switch", .configure = sw_configure, .inject = sw_inject, .event = sw_event,
    .min_latency = sw_min_latency, .event_latency = sw_event_latency, .stats = sw_stats,
};
