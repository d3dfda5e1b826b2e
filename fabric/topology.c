/* The topology registry and parameter helpers. */
#include <string.h>

#include "config.h"
#include "link_stats.h"

const struct topology_ops *topology_by_name(const char *name)
{
    static const struct topology_ops *all[] = { &topo_p2p_ops, &topo_ring_ops, &topo_switch_ops,
                                                     &topo_min_ops };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (!strcmp(all[i]->name, name)) {
            return all[i];
        }
    }
    return NULL;
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
