/* The topology registry and parameter helpers. */
#include <string.h>

#include "config.h"
#include "link_stats.h"

const struct topology_ops *topology_by_name(const char *name)
{
    static const struct topology_ops *all[] = { &topo_p2p_ops, &topo_ring_ops, &topo_switch_ops,
                                                     &topo_min_ops, &topo_hub_ops,
                                                     &topo_eth_switch_ops, &topo_cpci_bus_ops };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (!strcmp(all[i]->name, name)) {
            return all[i];
        }
    }
    return NULL;
}

uint64_t topology_least_event_latency(struct network *net)
{
    uint64_t L = net->topo->min_latency(net);
    return net->topo->event_latency ? min64(L, net->topo->event_latency(net, -1, 0)) : L;
}

struct network *event_network(struct fabric *f, const struct event *ev)
{
    switch (ev->kind) {
    case EV_INJECT:
        return ((const struct frame *)ev->ptr)->net;
    case EV_SYNTH:
        return &f->nets[f->nodes[ev->node].syn_net];
    default:
        return ev->net;
    }
}

/*
 * Per network: a frame being ready (a node's or a synthetic node's) arrives no
 * sooner than that network's min_latency later; a topology's own event may be
 * nearer its arrival (a frame at a switch is one link from its node), so each one
 * is asked. An event only causes arrivals on its own network. The queue is short
 * (a few events per node), so a scan is cheap.
 */
void topology_earliest_caused_arrivals(struct fabric *f, uint64_t *per_net)
{
    for (uint32_t i = 0; i < f->nnets; i++) {
        per_net[i] = NEVER;
    }
    for (size_t i = 0; i < f->queue.n; i++) {
        const struct event *ev = &f->queue.ev[i];
        struct network *net = event_network(f, ev);
        uint64_t L = net->topo->min_latency(net);
        uint64_t lat = ev->kind == EV_TOPO && net->topo->event_latency
                       ? min64(net->topo->event_latency(net, ev->topo_kind, ev->arg), L) : L;
        per_net[net->id] = min64(per_net[net->id], sat_add(ev->time, lat));
    }
}

int topo_param(char **keys, char **vals, int n, bool *used, const char *key, bool required,
               uint64_t *out, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        if (!strcmp(keys[i], key)) {
            used[i] = true;
            if (parse_u64(vals[i], out)) {
                snprintf(err, errlen, "%s=%s: expected a whole number", key, vals[i]);
                return -1;
            }
            if (*out > TOPO_PARAM_MAX) {
                /* the fabric adds these to times: keep every sum far from wrapping */
                snprintf(err, errlen, "%s=%s: at most 10^12", key, vals[i]);
                return -1;
            }
            return 0;
        }
    }
    if (required) {
        snprintf(err, errlen, "missing %s=", key);
        return -1;
    }
    return 0;
}

int topo_unused(char **keys, int n, const bool *used, const char *topo, char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        if (!used[i]) {
            snprintf(err, errlen, "topology %s has no parameter '%s'", topo, keys[i]);
            return -1;
        }
    }
    return 0;
}

int topo_check_min_frame(uint64_t min_frame, uint64_t mtu, const char *topo, char *err,
                         size_t errlen)
{
    if (min_frame > mtu) {
        snprintf(err, errlen, "%s: min_frame_bytes=%llu is larger than mtu=%llu", topo,
                 (unsigned long long)min_frame, (unsigned long long)mtu);
        return -1;
    }
    return 0;
}
