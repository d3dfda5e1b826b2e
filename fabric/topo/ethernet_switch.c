/*
 * An Ethernet switch: full duplex, store and forward (docs/fabric.md).
 *
 * Node i has a full-duplex link to port i. Each link direction sends its
 * frames in order, an inter-frame gap apart: a frame that may go at t starts
 * at max(t, the previous frame's end + the gap) and holds the link for
 * preamble + the frame padded to min_frame_bytes + FCS at rate. It reaches the
 * far end prop_ns after its last bit. The switch stores it whole and
 * switch_delay_ns later queues it at its destination's output (a broadcast: a
 * copy at every other port's output), which sends it to the node the same way.
 * An output holds at most queue_frames frames, the one on the wire included;
 * a frame that finds it full is dropped ("queue full"). Unloaded:
 * 2 * (wire time + prop_ns) + switch_delay_ns.
 *
 * Every start is computed when the frame joins its link's FIFO, which is in
 * event order; frames reaching one output at the same instant are queued in
 * event order (the sender with the lower node id first, for frames ready
 * together).
 */
#include <stdlib.h>

#include "eth_framing.h"
#include "link_stats.h"

enum { ESW_AT_OUTPUT };      /* a frame was stored and is switched to its output */

#define ESW_QUEUE_MAX 4096   /* queue_frames at most: a sender's in-flight bound */

struct esw_link {            /* one direction of one link */
    uint64_t next_start;     /* the previous frame's end + the gap */
    uint64_t *ends;          /* an output's held frames: when each one's last bit goes */
    size_t head, held;       /* a ring of queue_frames */
    uint64_t drops;
    struct link_stats stats;
};

struct esw {
    struct eth_framing eth;
    uint64_t switch_delay, queue_frames;
    uint32_t n;
    struct esw_link *in, *out;   /* node -> switch, switch -> node, per node */
};

static int esw_configure(struct network *net, char **keys, char **vals, int n, char *err,
                         size_t errlen)
{
    struct esw *s = xcalloc(1, sizeof(*s));
    bool used[64] = { false };

    s->switch_delay = 5000;  /* our choice: a few microseconds to look up and forward */
    s->queue_frames = 64;
    /* 100 m of cable at 5 ns/m */
    if (eth_framing_configure(&s->eth, 500, keys, vals, n, used, err, errlen) ||
        topo_param(keys, vals, n, used, "switch_delay_ns", false, &s->switch_delay, err,
                   errlen) ||
        topo_param(keys, vals, n, used, "queue_frames", false, &s->queue_frames, err, errlen) ||
        topo_unused(keys, n, used, "ethernet_switch", err, errlen)) {
        free(s);
        return -1;
    }
    if (!s->queue_frames || s->queue_frames > ESW_QUEUE_MAX) {
        snprintf(err, errlen, "ethernet_switch needs queue_frames from 1 to %d", ESW_QUEUE_MAX);
        free(s);
        return -1;
    }
    s->n = net->n;
    s->in = xcalloc(s->n, sizeof(*s->in));
    s->out = xcalloc(s->n, sizeof(*s->out));
    for (uint32_t i = 0; i < s->n; i++) {
        snprintf(s->in[i].stats.name, sizeof(s->in[i].stats.name),
                 "ethernet_switch:node%u->switch", i);
        snprintf(s->out[i].stats.name, sizeof(s->out[i].stats.name),
                 "ethernet_switch:switch->node%u", i);
    }
    net->state = s;
    return 0;
}

/* Put fr on link direction l at the first moment from now; returns its end. */
static uint64_t send_on(struct network *net, const struct esw *s, struct esw_link *l,
                        struct frame *fr, uint64_t now)
{
    uint64_t start = max64(now, l->next_start);
    uint64_t end = start + eth_wire_ns(&s->eth, fr->len);

    l->next_start = end + s->eth.ifg_ns;
    link_count(&l->stats, fr, start - now);
    fabric_trace(net, start, "start", fr);
    return end;
}

static void esw_inject(struct network *net, struct frame *fr, uint64_t now)
{
    struct esw *s = net->state;

    if (fr->len > s->eth.mtu) {
        fabric_drop(net, fr, DROP_OVERSIZE);
        return;
    }
    uint64_t end = send_on(net, s, &s->in[fr->src], fr, now);
    fabric_schedule(net, end + s->eth.prop + s->switch_delay, ESW_AT_OUTPUT, fr, 0);
}

/* fr joins its destination's output now, unless that is full. */
static void to_output(struct network *net, struct esw *s, struct frame *fr, uint64_t now)
{
    struct esw_link *o = &s->out[fr->dst];

    if (!o->ends) {
        o->ends = xcalloc(s->queue_frames, sizeof(*o->ends));
    }
    while (o->held && o->ends[o->head] <= now) {     /* gone by now */
        o->head = (o->head + 1) % s->queue_frames;
        o->held--;
    }
    if (o->held == s->queue_frames) {
        o->drops++;
        fabric_drop(net, fr, DROP_QUEUE_FULL);
        return;
    }
    uint64_t end = send_on(net, s, o, fr, now);
    o->ends[(o->head + o->held++) % s->queue_frames] = end;
    fabric_deliver(net, fr, end + s->eth.prop);
}

static void esw_event(struct network *net, int kind, uint64_t now, void *ptr, uint64_t arg)
{
    struct esw *s = net->state;
    struct frame *fr = ptr;
    (void)kind, (void)arg;

    if (fr->dst != RL_NODE_BROADCAST) {
        to_output(net, s, fr, now);
        return;
    }
    for (uint32_t d = 0; d < s->n; d++) {
        if (d != fr->src) {
            to_output(net, s, fabric_copy(net, fr, d), now);
        }
    }
    fabric_discard(net, fr);
}

static uint64_t esw_link_latency(const struct esw *s)
{
    return eth_min_wire_ns(&s->eth) + s->eth.prop;
}

static uint64_t esw_min_latency(struct network *net)
{
    struct esw *s = net->state;
    return max64(1, 2 * esw_link_latency(s) + s->switch_delay);
}

/* A frame switched to its output is one link from its arrival. */
static uint64_t esw_event_latency(struct network *net, int kind, uint64_t arg)
{
    struct esw *s = net->state;
    (void)kind, (void)arg;
    return max64(1, esw_link_latency(s));
}

static void esw_stats(struct network *net, FILE *out)
{
    struct esw *s = net->state;
    for (uint32_t i = 0; i < s->n; i++) {
        link_print(out, &s->in[i].stats, i == 0);
        link_print_begin(out, &s->out[i].stats, 0);
        fprintf(out, ", \"drops_queue_full\": %llu}", (unsigned long long)s->out[i].drops);
    }
}

const struct topology_ops topo_eth_switch_ops = {
    .name = "ethernet_switch", .broadcast = true, .configure = esw_configure,
    .inject = esw_inject, .event = esw_event, .min_latency = esw_min_latency,
    .event_latency = esw_event_latency, .stats = esw_stats,
};
