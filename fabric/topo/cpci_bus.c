/*
 * A CompactPCI backplane (docs/fabric.md, "cpci_bus"): one shared PCI bus that every
 * station's non-transparent bridge masters, one transaction at a time. A frame is one
 * transaction: the cpci board's header (header_bytes) stands for its address phase and
 * command, the bytes after it are its data.
 *
 * A frame ready at r is a request for the bus at r; the bus grants requests in order of
 * their ready times, then of their stations, then of each station's sequence (the order
 * the fabric runs its inject events in: (time, kind, node, network, seq)), so a FIFO
 * decided at inject is that order. Granted at start = max(r, the end of the transaction
 * before), a frame holds the bus for
 *   (arb_cycles + addr_cycles + phases + turnaround_cycles) * cycle_ns,
 * phases = max(1, ceil((len - header_bytes) / width_bytes)) (a PCI transaction has at
 * least one data phase: a doorbell's write, a read's request), and arrives at its
 * destination at the end of its last data phase plus the target bridge's bridge_ns.
 * rate is the bus's peak, width_bytes per cycle: it is checked, not a knob of its own.
 *
 * Credits (include/retrolink/proto/cpci.h): every frame a station hands the bus earns
 * its sender a notice (fabric_notice) when its data has left the sender's bridge, at
 * the end of its last data phase, but no earlier than the lookahead after its ready
 * time (a notice is an arrival at the sender); a frame dropped (over the mtu) earns one
 * at that lookahead. The bridge frees its posted-write buffer by them: they only ever
 * hold it back (notices_hold), so they set no arrival floor for its grants.
 */
#include <stdlib.h>

#include "link_stats.h"

struct cpci_bus {
    uint64_t rate, mtu, cycle_ns, width, arb, addr, turnaround, header, bridge_ns;
    uint64_t free_at;         /* the transaction granted last ends (turnaround included) */
    uint64_t transactions, busy_ns, data_phases;
    uint32_t n;
    struct link_stats *stats; /* per station: its transactions, and their waits for the bus */
};

static int cpci_bus_configure(struct network *net, char **keys, char **vals, int n,
                              char *err, size_t errlen)
{
    struct cpci_bus *b = xcalloc(1, sizeof(*b));
    bool used[64] = { false };

    b->rate = 133333333;      /* 4 bytes every 30 ns */
    b->mtu = 24;              /* the 16-byte header and an 8-byte access */
    b->cycle_ns = 30;
    b->width = 4;
    b->arb = 2;
    b->addr = 1;
    b->turnaround = 1;
    b->header = 16;
    b->bridge_ns = 240;
    if (topo_param(keys, vals, n, used, "rate", false, &b->rate, err, errlen) ||
        topo_param(keys, vals, n, used, "mtu", false, &b->mtu, err, errlen) ||
        topo_param(keys, vals, n, used, "cycle_ns", false, &b->cycle_ns, err, errlen) ||
        topo_param(keys, vals, n, used, "width_bytes", false, &b->width, err, errlen) ||
        topo_param(keys, vals, n, used, "arb_cycles", false, &b->arb, err, errlen) ||
        topo_param(keys, vals, n, used, "addr_cycles", false, &b->addr, err, errlen) ||
        topo_param(keys, vals, n, used, "turnaround_cycles", false, &b->turnaround, err,
                   errlen) ||
        topo_param(keys, vals, n, used, "header_bytes", false, &b->header, err, errlen) ||
        topo_param(keys, vals, n, used, "bridge_ns", false, &b->bridge_ns, err, errlen) ||
        topo_unused(keys, n, used, "cpci_bus", err, errlen)) {
        free(b);
        return -1;
    }
    if (!b->cycle_ns || !b->width || b->cycle_ns > 1000000 || b->width > 64 ||
        b->arb > 1000 || b->addr > 1000 || b->turnaround > 1000 || b->header > 65536 ||
        b->mtu > 65536 || b->bridge_ns > 1000000000) {
        snprintf(err, errlen, "cpci_bus needs cycle_ns 1..10^6, width_bytes 1..64, "
                 "arb_cycles, addr_cycles and turnaround_cycles at most 1000, header_bytes "
                 "and mtu at most 65536, bridge_ns at most 10^9");
        free(b);
        return -1;
    }
    if (b->rate != b->width * 1000000000u / b->cycle_ns) {
        snprintf(err, errlen, "cpci_bus: rate=%llu is not width_bytes per cycle_ns "
                 "(%llu bytes/s): set cycle_ns and width_bytes",
                 (unsigned long long)b->rate,
                 (unsigned long long)(b->width * 1000000000u / b->cycle_ns));
        free(b);
        return -1;
    }
    if (net->n > 8) {
        /* PICMG 2.0: a 33 MHz CompactPCI backplane segment has at most 8 slots */
        snprintf(err, errlen, "cpci_bus: %u stations, a backplane has at most 8 slots", net->n);
        free(b);
        return -1;
    }
    b->n = net->n;
    b->stats = xcalloc(b->n, sizeof(*b->stats));
    for (uint32_t i = 0; i < b->n; i++) {
        snprintf(b->stats[i].name, sizeof(b->stats[i].name), "cpci_bus:station%u", i);
    }
    net->state = b;
    return 0;
}

/* Data phases of a frame of len bytes: at least one. */
static uint64_t cpci_bus_phases(const struct cpci_bus *b, uint64_t len)
{
    uint64_t data = len > b->header ? len - b->header : 0;
    return data ? (data + b->width - 1) / b->width : 1;
}

/* A one-phase transaction on an idle bus. */
static uint64_t cpci_bus_min_latency(struct network *net)
{
    struct cpci_bus *b = net->state;
    return max64(1, (b->arb + b->addr + 1) * b->cycle_ns + b->bridge_ns);
}

static void cpci_bus_inject(struct network *net, struct frame *fr, uint64_t now)
{
    struct cpci_bus *b = net->state;

    uint32_t src = fr->src;

    if (fr->len > b->mtu) {
        fabric_drop(net, fr, DROP_OVERSIZE);
        fabric_notice(net, src, now + cpci_bus_min_latency(net));
        return;
    }
    uint64_t phases = cpci_bus_phases(b, fr->len);
    uint64_t start = max64(now, b->free_at);
    uint64_t last_data = start + (b->arb + b->addr + phases) * b->cycle_ns;
    uint64_t end = last_data + b->turnaround * b->cycle_ns;

    b->free_at = end;
    b->transactions++;
    b->data_phases += phases;
    b->busy_ns += end - start;
    link_count(&b->stats[fr->src], fr, start - now);
    fabric_trace(net, start, "start", fr);
    fabric_notice(net, src, max64(last_data, now + cpci_bus_min_latency(net)));
    if (fr->dst == RL_NODE_BROADCAST) {
        fabric_deliver_all(net, fr, last_data + b->bridge_ns);
    } else {
        fabric_deliver(net, fr, last_data + b->bridge_ns);
    }
}

static void cpci_bus_event(struct network *net, int kind, uint64_t now, void *ptr,
                           uint64_t arg)
{
    (void)net, (void)kind, (void)now, (void)ptr, (void)arg;
}

static void cpci_bus_stats(struct network *net, FILE *out)
{
    struct cpci_bus *b = net->state;
    for (uint32_t i = 0; i < b->n; i++) {
        link_print_begin(out, &b->stats[i], i == 0);
        if (i == 0) {
            fprintf(out, ", \"bus_transactions\": %llu, \"bus_data_phases\": %llu, "
                    "\"bus_busy_ns\": %llu", (unsigned long long)b->transactions,
                    (unsigned long long)b->data_phases, (unsigned long long)b->busy_ns);
        }
        fputc('}', out);
    }
}

const struct topology_ops topo_cpci_bus_ops = {
    .name = "cpci_bus", .broadcast = true, .notices = true, .notices_hold = true, .configure = cpci_bus_configure,
    .inject = cpci_bus_inject, .event = cpci_bus_event, .min_latency = cpci_bus_min_latency,
    .stats = cpci_bus_stats,
};
