/*
 * A multistage interconnection network (Cenju-3 style): k^stages ports joined
 * by `stages` columns of k x k crossbar switches wired as an Omega network
 * (a perfect shuffle before every column), with destination-tag routing:
 * column j sends a packet out of the output named by digit j of its
 * destination, most significant first. Node i sits on port i.
 *
 * The switches are pipelined (cut-through): a packet's head takes prop_ns on
 * each link plus stage_delay_ns in each switch, and its body follows at the
 * link rate. A packet of N bytes holds each link it crosses for
 * ceil((max(N, min_frame_bytes) + overhead_bytes) / rate). Two packets that
 * want the same switch output are served first come first served (ties in
 * event order); the loser waits in the switch, whose buffers are not limited
 * (a documented choice: no back-pressure into earlier stages). An unloaded
 * packet arrives (stages + 1) * prop_ns + stages * stage_delay_ns + that time
 * on a link after it was ready.
 *
 * Links are numbered: port i's injection link is i; the output p of column j
 * is (j + 1) * ports + p (the last column's outputs lead to the nodes).
 */
#include <stdlib.h>

#include "link_stats.h"
#include "retrolink/proto/cenju3.h"
#include "retrolink/regs/cenju3-regs.h"

enum { MIN_HEAD };            /* a packet's head reaches a switch's input */

struct min {
    uint64_t rate, prop, overhead, mtu, min_frame, stage_delay, k, stages;
    uint64_t ports;           /* k^stages */
    uint64_t *free_at;        /* per link */
    struct link_stats *stats; /* per link, named lazily */
};

static int min_configure(struct network *net, char **keys, char **vals, int n, char *err,
                         size_t errlen)
{
    struct min *m = xcalloc(1, sizeof(*m));
    bool used[64] = { false };

    /* Cenju-3's largest packet: the interface's header and 508 bytes of data (the
     * frame the fabric sees includes the header; overhead_bytes is counted apart) */
    m->mtu = C3_WIRE_HDR_SIZE + C3_PACKET_MAX;
    m->k = 4;
    m->stages = 4;
    if (topo_param(keys, vals, n, used, "rate", true, &m->rate, err, errlen) ||
        topo_param(keys, vals, n, used, "stage_delay_ns", true, &m->stage_delay, err, errlen) ||
        topo_param(keys, vals, n, used, "k", false, &m->k, err, errlen) ||
        topo_param(keys, vals, n, used, "stages", false, &m->stages, err, errlen) ||
        topo_param(keys, vals, n, used, "prop_ns", false, &m->prop, err, errlen) ||
        topo_param(keys, vals, n, used, "overhead_bytes", false, &m->overhead, err, errlen) ||
        topo_param(keys, vals, n, used, "mtu", false, &m->mtu, err, errlen) ||
        topo_param(keys, vals, n, used, "min_frame_bytes", false, &m->min_frame, err, errlen) ||
        topo_unused(keys, n, used, "min", err, errlen) ||
        topo_check_min_frame(m->min_frame, m->mtu, "min", err, errlen)) {
        free(m);
        return -1;
    }
    m->ports = 1;
    for (uint64_t j = 0; j < m->stages && m->ports <= 65536; j++) {
        m->ports *= m->k;     /* no overflow: the loop stops once past 65536 */
    }
    if (!m->rate || m->k < 2 || m->stages < 1 || m->ports > 65536 || m->ports < net->n) {
        snprintf(err, errlen, "min needs rate > 0, k >= 2, stages >= 1 and k^stages ports "
                 "(at most 65536) for all %u stations", net->n);
        free(m);
        return -1;
    }
    size_t links = (m->stages + 1) * m->ports;
    m->free_at = xcalloc(links, sizeof(*m->free_at));
    m->stats = xcalloc(links, sizeof(*m->stats));
    net->state = m;
    return 0;
}

static uint64_t wire_ns(const struct min *m, uint64_t bytes)
{
    return bytes_ns(frame_wire_bytes(bytes, m->min_frame, m->overhead), m->rate);
}

/* Column j: shuffle (rotate the k-ary digits left), then set the last digit
 * to digit j of dst, most significant first. */
static uint64_t route(const struct min *m, uint64_t pos, uint32_t dst, uint64_t j)
{
    uint64_t shuffled = (pos * m->k) % m->ports + pos / (m->ports / m->k);
    uint64_t digit = dst;
    for (uint64_t i = j + 1; i < m->stages; i++) {
        digit /= m->k;
    }
    return shuffled - shuffled % m->k + digit % m->k;
}

/* Put fr on link l at the first moment from t it is free; return that time. */
static uint64_t claim(struct network *net, struct min *m, uint64_t l, struct frame *fr,
                      uint64_t t)
{
    struct link_stats *s = &m->stats[l];
    uint64_t start = max64(t, m->free_at[l]);

    m->free_at[l] = start + wire_ns(m, fr->len);
    if (!s->name[0]) {
        if (l < m->ports) {
            snprintf(s->name, sizeof(s->name), "min:node%llu->stage0", (unsigned long long)l);
        } else {
            snprintf(s->name, sizeof(s->name), "min:stage%llu.out%llu",
                     (unsigned long long)(l / m->ports - 1), (unsigned long long)(l % m->ports));
        }
    }
    link_count(s, fr, start - t);
    return start;
}

static void min_inject(struct network *net, struct frame *fr, uint64_t now)
{
    struct min *m = net->state;

    if (fr->len > m->mtu) {
        fabric_drop(net, fr, DROP_OVERSIZE);
        return;
    }
    uint64_t start = claim(net, m, fr->src, fr, now);
    fabric_trace(net, start, "start", fr);
    fabric_schedule(net, start + m->prop, MIN_HEAD, fr, fr->src);
}

/*
 * The head is at column j's input (arg: j in the high 32 bits, the port below);
 * it asks for its output stage_delay_ns later. Heads are handled in the order
 * they arrive, so every output serves its requests first come, first served.
 */
static void min_event(struct network *net, int kind, uint64_t now, void *ptr, uint64_t arg)
{
    struct min *m = net->state;
    struct frame *fr = ptr;
    uint64_t j = arg >> 32, pos = route(m, arg & 0xffffffffu, fr->dst, j);
    uint64_t start = claim(net, m, (j + 1) * m->ports + pos, fr, now + m->stage_delay);

    if (j + 1 == m->stages) {
        fabric_deliver(net, fr, start + wire_ns(m, fr->len) + m->prop);
    } else {
        fabric_schedule(net, start + m->prop, MIN_HEAD, fr, ((j + 1) << 32) | pos);
    }
}

static uint64_t min_min_latency(struct network *net)
{
    struct min *m = net->state;
    return max64(1, (m->stages + 1) * m->prop + m->stages * m->stage_delay + wire_ns(m, 0));
}

/* A head at column j's input still has stages - j switches and links to cross;
 * the least is a head at the last column. */
static uint64_t min_event_latency(struct network *net, int kind, uint64_t arg)
{
    struct min *m = net->state;
    uint64_t j = kind < 0 ? m->stages - 1 : arg >> 32;
    return max64(1, (m->stages - j) * (m->stage_delay + m->prop) + wire_ns(m, 0));
}

/* only the links that carried something: a 256-port network has 1280 */
static void min_stats(struct network *net, FILE *out)
{
    struct min *m = net->state;
    int first = 1;
    for (uint64_t l = 0; l < (m->stages + 1) * m->ports; l++) {
        if (m->stats[l].frames) {
            link_print(out, &m->stats[l], first);
            first = 0;
        }
    }
}

const struct topology_ops topo_min_ops = {
    .name = "min", .configure = min_configure, .inject = min_inject, .event = min_event,
    .min_latency = min_min_latency, .event_latency = min_event_latency, .stats = min_stats,
};
