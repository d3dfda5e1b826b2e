/*
 * Ethernet framing on the wire, shared by the hub and the Ethernet switch
 * (docs/fabric.md): a FRAME carries an Ethernet frame without preamble and FCS
 * (destination MAC, source MAC, type, payload); on the wire it is preceded by
 * the preamble and SFD, padded to the minimum frame and followed by the FCS.
 */
#ifndef ETH_FRAMING_H
#define ETH_FRAMING_H

#include "fabric.h"

struct eth_framing {
    uint64_t rate;            /* bytes per second */
    uint64_t prop;            /* prop_ns */
    uint64_t mtu;             /* largest frame without FCS (1514) */
    uint64_t preamble;        /* preamble + SFD bytes (8) */
    uint64_t fcs;             /* FCS bytes (4) */
    uint64_t min_frame;       /* least frame, FCS included (64): shorter ones are padded */
    uint64_t ifg_bits;        /* inter-frame gap (96) */
    uint64_t ifg_ns;          /* ifg_bits at rate */
};

/* Parse rate (required), prop_ns (default default_prop), mtu, preamble_bytes,
 * fcs_bytes, min_frame_bytes and ifg_bits; 0, or -1 with err filled. */
int eth_framing_configure(struct eth_framing *e, uint64_t default_prop, char **keys,
                          char **vals, int n, bool *used, char *err, size_t errlen);

/* bits at rate bytes/s, rounded up to a whole ns; -1 with err filled if that is
 * beyond TOPO_PARAM_MAX ns. */
int eth_bits_ns(uint64_t bits, uint64_t rate, const char *what, uint64_t *out, char *err,
                size_t errlen);

/* The time a frame of len bytes (no FCS) holds the wire: preamble, the frame
 * padded to min_frame - fcs, FCS. */
static inline uint64_t eth_wire_ns(const struct eth_framing *e, uint64_t len)
{
    return bytes_ns(e->preamble + max64(len + e->fcs, e->min_frame), e->rate);
}

/* The shortest frame's time on the wire (an empty frame, padded). */
static inline uint64_t eth_min_wire_ns(const struct eth_framing *e)
{
    return eth_wire_ns(e, 0);
}

#endif
