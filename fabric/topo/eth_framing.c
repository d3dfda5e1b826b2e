/* Ethernet framing parameters, shared by the hub and the Ethernet switch. */
#include <string.h>

#include "eth_framing.h"
#include "link_stats.h"

int eth_bits_ns(uint64_t bits, uint64_t rate, const char *what, uint64_t *out, char *err,
                size_t errlen)
{
    unsigned __int128 den = (unsigned __int128)8 * rate;
    unsigned __int128 ns = ((unsigned __int128)bits * 1000000000u + den - 1) / den;
    if (ns > TOPO_PARAM_MAX) {
        snprintf(err, errlen, "%s lasts more than 10^12 ns at rate=%llu", what,
                 (unsigned long long)rate);
        return -1;
    }
    *out = (uint64_t)ns;
    return 0;
}

int eth_framing_configure(struct eth_framing *e, uint64_t default_prop, char **keys,
                          char **vals, int n, bool *used, char *err, size_t errlen)
{
    uint64_t longest;

    e->prop = default_prop;
    e->mtu = 1514;            /* 6 + 6 + 2 header bytes + 1500 of payload, no FCS */
    e->preamble = 8;          /* 7 bytes of preamble and the SFD */
    e->fcs = 4;
    e->min_frame = 64;        /* FCS included: 512 bits, the slot time */
    e->ifg_bits = 96;
    if (topo_param(keys, vals, n, used, "rate", true, &e->rate, err, errlen) ||
        topo_param(keys, vals, n, used, "prop_ns", false, &e->prop, err, errlen) ||
        topo_param(keys, vals, n, used, "mtu", false, &e->mtu, err, errlen) ||
        topo_param(keys, vals, n, used, "preamble_bytes", false, &e->preamble, err, errlen) ||
        topo_param(keys, vals, n, used, "fcs_bytes", false, &e->fcs, err, errlen) ||
        topo_param(keys, vals, n, used, "min_frame_bytes", false, &e->min_frame, err, errlen) ||
        topo_param(keys, vals, n, used, "ifg_bits", false, &e->ifg_bits, err, errlen)) {
        return -1;
    }
    if (!e->rate) {
        snprintf(err, errlen, "rate must be > 0");
        return -1;
    }
    if (e->mtu > RL_MAX_PAYLOAD) {
        snprintf(err, errlen, "mtu=%llu: at most %d", (unsigned long long)e->mtu, RL_MAX_PAYLOAD);
        return -1;
    }
    /* every sum of these stays far below 2^64: each is at most 10^12 */
    return eth_bits_ns(8 * (e->preamble + max64(e->mtu + e->fcs, e->min_frame)), e->rate,
                       "the largest frame", &longest, err, errlen) ||
           eth_bits_ns(e->ifg_bits, e->rate, "the inter-frame gap", &e->ifg_ns, err, errlen);
}
