/* The topology registry and parameter helpers. */
#include <string.h>

#include "config.h"
#include "link_stats.h"

const struct topology_ops *topology_by_name(const char *name)
{
    static const struct topology_ops *all[] = { &topo_p2p_ops, &topo_ring_ops, &topo_switch_ops,
                                                     &topo_min_ops, &topo_hub_ops,
                                                     &topo_eth_switch_ops };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (!strcmp(all[i]->name, name)) {
            return all[i];
        }
    }
    return NULL;
}

uint64_t topology_least_event_latency(struct fabric *f)
{
    uint64_t L = f->topo->min_latency(f);
    return f->topo->event_latency ? min64(L, f->topo->event_latency(f, -1, 0)) : L;
}

/*
 * A frame being ready (a node's or a synthetic node's) arrives no sooner than
 * min_latency later; a topology's own event may be nearer its arrival (a
 * frame at a switch is one link from its node), so each one is asked. The
 * queue is short (a few events per node), so a scan is cheap.
 */
uint64_t topology_earliest_caused_arrival(struct fabric *f)
{
    uint64_t L = f->topo->min_latency(f);
    const struct event *next = eq_peek(&f->queue);

    if (!f->topo->event_latency) {
        return next ? sat_add(next->time, L) : NEVER;
    }
    uint64_t earliest = NEVER;
    for (size_t i = 0; i < f->queue.n; i++) {
        const struct event *ev = &f->queue.ev[i];
        uint64_t lat = ev->kind == EV_TOPO ? f->topo->event_latency(f, ev->topo_kind, ev->arg) : L;
        earliest = min64(earliest, sat_add(ev->time, min64(lat, L)));
    }
    return earliest;
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
