/* Per-link counters, shared by the topologies. */
#ifndef LINK_STATS_H
#define LINK_STATS_H

#include <stdio.h>

#include "fabric.h"

struct link_stats {
    char name[48];
    uint64_t frames, bytes, queue_ns_total, queue_ns_max;
};

static inline void link_count(struct link_stats *s, const struct frame *fr, uint64_t queued)
{
    s->frames++;
    s->bytes += fr->len;
    s->queue_ns_total += queued;
    if (queued > s->queue_ns_max) {
        s->queue_ns_max = queued;
    }
}

/* The link's JSON object without its closing brace: a topology may add counters. */
static inline void link_print_begin(FILE *out, const struct link_stats *s, int first)
{
    fprintf(out, "%s\n    {\"name\": \"%s\", \"frames\": %llu, \"bytes\": %llu, "
            "\"queue_ns_total\": %llu, \"queue_ns_max\": %llu", first ? "" : ",", s->name,
            (unsigned long long)s->frames, (unsigned long long)s->bytes,
            (unsigned long long)s->queue_ns_total, (unsigned long long)s->queue_ns_max);
}

static inline void link_print(FILE *out, const struct link_stats *s, int first)
{
    link_print_begin(out, s, first);
    fputc('}', out);
}

/* No topology parameter (a time in ns, a rate in bytes/s, a count) is larger. */
#define TOPO_PARAM_MAX UINT64_C(1000000000000)

/*
 * The bytes a frame of len bytes holds a link for: its framing (overhead) and the frame,
 * padded to min_frame (min_frame_bytes: the least frame the protocol has, such as
 * Ethernet's 60 bytes without FCS or a header every frame carries). So no frame is
 * shorter on the wire than the protocol allows, and the network's least latency, the
 * lock-step's lookahead, counts the least frame.
 */
static inline uint64_t frame_wire_bytes(uint64_t len, uint64_t min_frame, uint64_t overhead)
{
    return max64(len, min_frame) + overhead;
}

/* min_frame_bytes no larger than mtu: 0, or -1 with err filled. */
int topo_check_min_frame(uint64_t min_frame, uint64_t mtu, const char *topo, char *err,
                         size_t errlen);

/* Look up key in parallel key/value arrays; marks it used. */
int topo_param(char **keys, char **vals, int n, bool *used, const char *key, bool required,
               uint64_t *out, char *err, size_t errlen);
/* Complain about the first key no topology parameter used. */
int topo_unused(char **keys, int n, const bool *used, const char *topo, char *err, size_t errlen);

#endif
