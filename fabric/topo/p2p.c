/*
 * Point-to-point full-duplex link between nodes 0 and 1. Each direction is a
 * FIFO: a frame of N bytes ready at r starts at max(r, end of the previous
 * frame) and arrives ceil((max(N, min_frame_bytes) + overhead_bytes) * 1e9 / rate) +
 * prop_ns later (a frame shorter than min_frame_bytes is padded on the wire).
 * A broadcast goes to the other end, the only other node.
 */
#include <stdlib.h>

#include "link_stats.h"

struct p2p {
    uint64_t rate, prop, overhead, mtu, min_frame;
    uint64_t free_at[2];
    struct link_stats stats[2];
};

static int p2p_configure(struct network *net, char **keys, char **vals, int n, char *err,
                         size_t errlen)
{
    struct p2p *p = xcalloc(1, sizeof(*p));
    bool used[64] = { false };

    p->mtu = 4500;            /* as the machine schema (P2PLink.mtu) */
    if (topo_param(keys, vals, n, used, "rate", true, &p->rate, err, errlen) ||
        topo_param(keys, vals, n, used, "prop_ns", false, &p->prop, err, errlen) ||
        topo_param(keys, vals, n, used, "overhead_bytes", false, &p->overhead, err, errlen) ||
        topo_param(keys, vals, n, used, "mtu", false, &p->mtu, err, errlen) ||
        topo_param(keys, vals, n, used, "min_frame_bytes", false, &p->min_frame, err, errlen) ||
        topo_unused(keys, n, used, "p2p", err, errlen) ||
        topo_check_min_frame(p->min_frame, p->mtu, "p2p", err, errlen)) {
        free(p);
        return -1;
    }
    if (!p->rate || net->n != 2) {
        snprintf(err, errlen, "p2p needs rate > 0 and exactly 2 stations (has %u)", net->n);
        free(p);
        return -1;
    }
    snprintf(p->stats[0].name, sizeof(p->stats[0].name), "p2p:0->1");
    snprintf(p->stats[1].name, sizeof(p->stats[1].name), "p2p:1->0");
    net->state = p;
    return 0;
}

static void p2p_inject(struct network *net, struct frame *fr, uint64_t now)
{
    struct p2p *p = net->state;

    if (fr->len > p->mtu) {
        fabric_drop(net, fr, DROP_OVERSIZE);
        return;
    }
    if (fr->dst == RL_NODE_BROADCAST) {
        fr->dst = 1 - fr->src;
        fr->broadcast = true;
    }
    int dir = fr->src;
    uint64_t start = max64(now, p->free_at[dir]);
    uint64_t tx = bytes_ns(frame_wire_bytes(fr->len, p->min_frame, p->overhead), p->rate);
    p->free_at[dir] = start + tx;
    link_count(&p->stats[dir], fr, start - now);
    fabric_trace(net, start, "start", fr);
    fabric_deliver(net, fr, start + tx + p->prop);
}

static void p2p_event(struct network *net, int kind, uint64_t now, void *ptr, uint64_t arg)
{
    (void)net, (void)kind, (void)now, (void)ptr, (void)arg;
}

static uint64_t p2p_min_latency(struct network *net)
{
    struct p2p *p = net->state;
    return max64(1, bytes_ns(frame_wire_bytes(0, p->min_frame, p->overhead), p->rate) + p->prop);
}

static void p2p_stats(struct network *net, FILE *out)
{
    struct p2p *p = net->state;
    link_print(out, &p->stats[0], 1);
    link_print(out, &p->stats[1], 0);
}

const struct topology_ops topo_p2p_ops = {
    .name = "p2p", .broadcast = true, .configure = p2p_configure, .inject = p2p_inject, .event = p2p_event,
    .min_latency = p2p_min_latency, .stats = p2p_stats,
};
