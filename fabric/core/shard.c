/*
 * The fabric in shards (docs/fabric.md, "Shards"). Each shard is one process with the
 * whole configuration: it serves the nodes the configuration gives it (their
 * sockets, their lock-step file) and keeps every other node as a stand-in whose
 * clock and promise are what that node's shard last said. Every frame goes to every
 * shard, and each shard runs every network's topology on it: the events are the same
 * everywhere and each shard processes them in the one order (time, kind, node, seq)
 * once no node anywhere can still send an earlier frame, so every shard makes the
 * one-host fabric's decisions, whatever its partners' speed.
 *
 * A stand-in's promise is stale but never too late: a node sends no frame before its
 * promise unless an arrival makes it, and every arrival is one of the frames every
 * shard times alike (delivered, or an event still queued, which the grant rule
 * counts). The shards exchange when none of this shard's nodes can go further: each
 * gives the frames its nodes sent since the last exchange and its nodes' clocks.
 *
 * The exchange is a list of 64-bit words: a header (RECORDS_MAGIC, stop, node count),
 * one record per node of the shard (NODE_WORDS), then the frames (FRAME_WORDS and
 * the payload, padded to whole words).
 */
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "shard.h"
#include "transport.h"

#define RECORDS_MAGIC 0x72746c6b73686172ull   /* "rtlkshar" */
#define HEADER_WORDS 3
#define NODE_WORDS 9
#define FRAME_WORDS 7

enum { NODE_READY = 1, NODE_GONE = 2, NODE_HELD = 4 };

static void put(struct shard *s, const void *p, size_t len)
{
    size_t padded = (len + 7) & ~(size_t)7;
    if (s->len + padded > s->cap) {
        s->cap = (s->len + padded) * 2;
        s->out = xreallocarray(s->out, s->cap, 1);
    }
    memset(s->out + s->len, 0, padded);
    memcpy(s->out + s->len, p, len);
    s->len += padded;
}

void shard_setup(struct fabric *f, int *argc, char ***argv)
{
    char why[256];
    uint32_t rank, size;

    if (f->shards <= 1) {
        return;
    }
    if (transport_init(argc, argv, &rank, &size, why, sizeof(why))) {
        fabric_fatal(EXIT_CONFIG, "%s", why);
    }
    if (size != f->shards) {
        fabric_fatal(EXIT_CONFIG, "the configuration has %u shards, but %u fabric processes "
                     "were started (mpirun -n %u)", f->shards, size, f->shards);
    }
    struct shard *s = f->shard = xcalloc(1, sizeof(*s));
    s->count = size;
    s->rank = rank;
    fabric_log_prefix(rank, transport_host());
    for (uint32_t k = 0; k < f->nnodes; k++) {
        f->nodes[k].remote = f->nodes[k].kind == NODE_VM && f->nodes[k].shard != rank;
    }
    /* each shard its own socket, lock-step file and status; one trace, stats and
     * state (shard 0's: every shard keeps the same events and clocks) */
    char suffix[16];
    snprintf(suffix, sizeof(suffix), ".%u", rank);
    if (strlen(f->socket_path) + strlen(suffix) >= sizeof(f->socket_path)) {
        fabric_fatal(EXIT_CONFIG, "socket path %s%s is too long", f->socket_path, suffix);
    }
    strcat(f->socket_path, suffix);
    if (f->status_path[0]) {
        strncat(f->status_path, suffix, sizeof(f->status_path) - strlen(f->status_path) - 1);
    }
    if (rank != 0) {
        f->trace_path[0] = 0;
        f->stats_path[0] = 0;
    }
}

void shard_sent(struct fabric *f, const struct frame *fr)
{
    struct shard *s = f->shard;
    if (!s) {
        return;
    }
    uint64_t w[FRAME_WORDS] = { fr->net->station_node[fr->src], fr->net->id, fr->dst_node,
                                fr->len, fr->flags, fr->sender_seq, fr->ready };
    put(s, w, sizeof(w));
    put(s, fr->data, fr->len);
}

/* This shard's part of an exchange: its frames (already in s->out) after a header
 * and its nodes' records. */
static uint8_t *pack(struct fabric *f, bool stop, size_t *len)
{
    struct shard *s = f->shard;
    uint32_t mine = 0;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        mine += f->nodes[k].kind == NODE_VM && !f->nodes[k].remote;
    }
    size_t head = (HEADER_WORDS + (size_t)mine * NODE_WORDS) * 8;
    uint64_t *w = xmalloc(head + s->len);
    w[0] = RECORDS_MAGIC;
    w[1] = stop;
    w[2] = mine;
    uint64_t *r = w + HEADER_WORDS;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        const struct node *n = &f->nodes[k];
        if (n->kind != NODE_VM || n->remote) {
            continue;
        }
        uint64_t flags = (n->ready ? NODE_READY : 0) | (n->gone ? NODE_GONE : 0) |
                         (n->held ? NODE_HELD : 0);
        uint64_t rec[NODE_WORDS] = { k, n->t, n->promise, n->syncs, n->sync_points, flags,
                                     n->reaction, n->granularity, 0 };
        memcpy(r, rec, sizeof(rec));
        r += NODE_WORDS;
    }
    if (s->len) {
        memcpy(r, s->out, s->len);
    }
    *len = head + s->len;
    s->len = 0;
    return (uint8_t *)w;
}

_Noreturn static void bad_exchange(uint32_t from, const char *what)
{
    fabric_fatal(EXIT_RUNTIME, "internal error: shard %u's exchange: %s", from, what);
}

/* A node of another shard, as its shard last saw it. */
static void node_record(struct fabric *f, uint32_t from, const uint64_t *rec)
{
    if (rec[0] >= f->nnodes || !f->nodes[rec[0]].remote || f->nodes[rec[0]].shard != from) {
        bad_exchange(from, "a node record for a node it does not run");
    }
    struct node *n = &f->nodes[rec[0]];
    uint64_t flags = rec[5];
    if (!n->ready && (flags & NODE_READY)) {
        n->hello = n->alive = n->ready = true;
        n->reaction = rec[6];
        n->granularity = rec[7] ? rec[7] : 1;
        n->attached = n->nets;
    }
    if (!n->alive) {
        return;
    }
    if (rec[1] > n->t || rec[2] != n->promise) {
        n->moved = true;
        n->last_sync_wall = wall_now();
    }
    n->t = max64(n->t, rec[1]);
    n->promise = rec[2];
    n->syncs = rec[3];
    n->sync_points = rec[4];
    n->held = flags & NODE_HELD;
    if (flags & NODE_GONE) {
        fabric_node_left(f, n);
    }
}

/* One shard's part; returns whether it asked to stop, and counts its nodes gone. */
static bool apply(struct fabric *f, uint32_t from, const uint8_t *p, size_t len,
                  uint32_t *alive)
{
    const uint64_t *w = (const void *)p;
    size_t words = len / 8;

    if (len % 8 || words < HEADER_WORDS || w[0] != RECORDS_MAGIC ||
        w[2] > (words - HEADER_WORDS) / NODE_WORDS) {
        bad_exchange(from, "malformed");
    }
    const uint64_t *rec = w + HEADER_WORDS;
    for (uint64_t i = 0; i < w[2]; i++, rec += NODE_WORDS) {
        if (from != f->shard->rank) {
            node_record(f, from, rec);
        }
        *alive += !(rec[5] & NODE_GONE);
    }
    const uint64_t *end = w + words;
    while (rec < end) {
        if (end - rec < FRAME_WORDS || rec[0] >= f->nnodes || rec[1] >= f->nnets ||
            rec[3] > RL_MAX_PAYLOAD || (uint64_t)(end - rec - FRAME_WORDS) < (rec[3] + 7) / 8) {
            bad_exchange(from, "a malformed frame record");
        }
        if (from != f->shard->rank) {
            fabric_inject(f, &f->nodes[rec[0]], rec[1], rec[2], rec[3], rec[4], rec[5], rec[6],
                          (const uint8_t *)(rec + FRAME_WORDS));
        }
        rec += FRAME_WORDS + (rec[3] + 7) / 8;
    }
    return w[1];
}

static void exchange(struct fabric *f, bool stop)
{
    struct shard *s = f->shard;
    size_t len, lens[RL_MAX_NODES];
    uint8_t *all;
    uint8_t *mine = pack(f, stop, &len);
    uint32_t alive = 0;
    bool stopping = false;

    double begun = wall_now();
    transport_allgather(mine, len, &all, lens);
    s->exchange_wall += wall_now() - begun;
    free(mine);
    size_t at = 0;
    for (uint32_t r = 0; r < s->count; r++) {
        stopping |= apply(f, r, all + at, lens[r], &alive);
        at += lens[r];
    }
    free(all);
    s->exchanges++;
    /* every shard had the same words: they agree on the end */
    s->done = stopping || !alive;
}

void shard_start(struct fabric *f)
{
    exchange(f, false);
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        if (n->remote) {
            /* no QEMU of this shard publishes in its slot; a waiting flag there makes
             * ours say PROGRESS at their sync points, so that this shard hears when
             * they reach their grants */
            __atomic_store_n(&f->ls->node[k].waiting, 1, __ATOMIC_SEQ_CST);
        }
    }
}

void shard_exchange(struct fabric *f, bool stop)
{
    exchange(f, stop);
    barrier_release_if_held(f);
}

void shard_finish(struct fabric *f)
{
    if (!f->shard) {
        return;
    }
    f->causality_violations = transport_sum(f->causality_violations);
    struct shard *s = f->shard;
    fabric_log("%llu exchanges with the other shards, %.3f s of wall time in them (%.1f us "
               "each)", (unsigned long long)s->exchanges, s->exchange_wall,
               s->exchanges ? s->exchange_wall * 1e6 / s->exchanges : 0.0);
    transport_finish();
}
