/*
 * libFuzzer target for the lock-step file (include/retrolink/lockstep.h; meson
 * -Dfuzz=true, clang; docs/fuzzing.md "The fabric's fuzz targets"). Anything that can
 * open the file can write all of it: whatever it holds, neither a node nor the fabric
 * may read or write out of bounds.
 *
 * An input is a header (RL_LS_FUZZ_HEADER bytes: the node id, little-endian u32;
 * flags, FLAG_*; the node's granularity - 1) and then the file, struct rl_lockstep, truncated
 * or zero-padded. It runs what a QEMU node does with it (qemu/core/rl-lockstep.c):
 * refuse a node id of RL_MAX_NODES or more (rl_lockstep_open), copy the static part
 * and check the copy (rl_lockstep_start), and if it passed, compute the grant from
 * the file with rl_ls_compute_grant, the function QEMU calls. Then what the fabric
 * does with a cluster of that static part: lockstep_refresh of every node's slot
 * (fabric/core/lockstep.c, the real one), the fixed point on its own copy, and
 * lockstep_publish.
 *
 * Every array is its own allocation of exactly the entries the static part allows
 * (nnodes, nnets), so that ASan sees an index one past them. Built with
 * -DRL_LS_FUZZ_UNCHECKED, it is the code before the check: the grant computed from the
 * file's own static part with QEMU's arrays of RL_MAX_NODES; that build must crash
 * (tests/fabric/test_fuzz_lockstep.py), so this target is not vacuous.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

#define RL_LS_FUZZ_HEADER 6
enum {
    FLAG_READ_ALL = 1,          /* the node has read every message the block counts */
    FLAG_FABRIC_HAS_FRAMES = 2, /* the fabric has every FRAME each slot counts */
    FLAG_SYNTHETIC_ODD = 4,     /* odd nodes are synthetic ones (the fabric's view) */
    FLAG_HELD_AT_BARRIER = 8,   /* the barrier released even nodes at their slot's count
                                   and odd ones one sync before it (barrier.c) */
};

static void *alloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        abort();
    }
    return p;
}

/* The QEMU node's side: rl_lockstep_start, then rl_lockstep_grant. */
static void node_side(struct rl_lockstep *file, const struct rl_ls_static *s, uint32_t node,
                      uint8_t flags, uint64_t granularity)
{
#ifdef RL_LS_FUZZ_UNCHECKED
    size_t nodes = RL_MAX_NODES, nets = RL_MAX_NETWORKS;   /* QEMU's arrays */
#else
    size_t nodes = s->nnodes, nets = s->nnets;
#endif
    struct rl_ls_work w = {
        .e = alloc(nodes, sizeof(uint64_t)), .a = alloc(nodes, sizeof(uint64_t)),
        .F = alloc(nets, sizeof(uint64_t)), .floor = alloc(nodes, sizeof(uint64_t)),
        .consumed = alloc(nodes, sizeof(uint64_t)), .alive = alloc(nodes, 1),
    };
    uint64_t msgs_read = flags & FLAG_READ_ALL ? file->fab.sent[node] : 0;
    uint64_t grant = 0;

    int r = rl_ls_compute_grant(s, &file->fab, file->node, file->live, node, msgs_read,
                                granularity, &w, &grant);
    if (r == RL_LS_OK && grant > file->fab.cap) {
        abort();            /* the boot barrier's cap is never exceeded */
    }
    free(w.e), free(w.a), free(w.F), free(w.floor), free(w.consumed), free(w.alive);
}

/* The fabric's side, on a cluster whose static part is s: it reads every slot. */
static void fabric_side(struct rl_lockstep *file, const struct rl_ls_static *s, uint8_t flags)
{
    struct fabric *f = alloc(1, sizeof(*f));
    char why[256];

    f->ls = file;
    f->ls_static = *s;
    f->nnodes = s->nnodes;
    f->nnets = s->nnets;
    f->nodes = alloc(f->nnodes, sizeof(*f->nodes));
    f->e = alloc(f->nnodes, sizeof(uint64_t));
    f->a = alloc(f->nnodes, sizeof(uint64_t));
    f->relaxed = alloc(f->nnodes, 1);
    f->caused = alloc(f->nnets, sizeof(uint64_t));
    f->barrier.cap = NEVER;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        n->id = k;
        n->kind = flags & FLAG_SYNTHETIC_ODD && k % 2 ? NODE_SYNTHETIC : NODE_VM;
        n->alive = true;
        n->fd = -1;
        n->promise = NEVER;
        n->reaction = s->reaction[k];
        n->lockstep = n->kind == NODE_VM && rl_ls_load(&file->node[k].active) != 0;
        n->frames_in = flags & FLAG_FABRIC_HAS_FRAMES ? file->node[k].frames : 0;
        if (flags & FLAG_HELD_AT_BARRIER) {
            uint64_t syncs = rl_ls_load(&file->node[k].syncs);
            n->held_syncs = k % 2 && syncs ? syncs - 1 : syncs;
        }
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        why[0] = 0;
        if (!lockstep_refresh(f, &f->nodes[k], why, sizeof(why)) && !why[0]) {
            abort();        /* a refusal always says why */
        }
    }
    /* sync_compute but for the topologies' F (none pending here) */
    for (uint32_t k = 0; k < f->nnodes; k++) {
        f->relaxed[k] = f->nodes[k].kind == NODE_VM && node_counts(&f->nodes[k]);
        f->e[k] = node_floor(&f->nodes[k]);
    }
    for (uint32_t i = 0; i < f->nnets; i++) {
        f->caused[i] = NEVER;
    }
    rl_ls_grants(&f->ls_static, f->relaxed, f->caused, f->e, f->a);
    lockstep_publish(f);
    free(f->nodes), free(f->e), free(f->a), free(f->relaxed), free(f->caused), free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];

    if (size < RL_LS_FUZZ_HEADER) {
        return 0;
    }
    uint32_t node = data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
                    (uint32_t)data[3] << 24;
    uint8_t flags = data[4];
    uint64_t granularity = (uint64_t)data[5] + 1;
    data += RL_LS_FUZZ_HEADER;
    size -= RL_LS_FUZZ_HEADER;

    /* the mapping: exactly the file's size, so that ASan sees a slot past the last */
    struct rl_lockstep *file = alloc(1, sizeof(*file));
    memcpy(file, data, size < sizeof(*file) ? size : sizeof(*file));
    if (node >= RL_MAX_NODES) {         /* rl_lockstep_open refuses it */
        free(file);
        return 0;
    }
    /* the node's copy, in an allocation of its own */
    struct rl_ls_static *copy = alloc(1, sizeof(*copy));
    memcpy(copy, &file->s, sizeof(*copy));
#ifdef RL_LS_FUZZ_UNCHECKED
    (void)why;
    (void)fabric_side;
    /* as QEMU did: magic and version at rl_lockstep_open, then the file's static part */
    if (file->s.magic == RL_LS_MAGIC && file->s.version == RL_LS_VERSION) {
        node_side(file, &file->s, node, flags, granularity);
    }
#else
    why[0] = 0;
    bool node_ok = rl_ls_static_check(copy, node, why, sizeof(why));
    if (!node_ok && !why[0]) {
        abort();            /* a refusal always says why */
    }
    if (node_ok) {
        node_side(file, copy, node, flags, granularity);
    }
    if (node_ok || rl_ls_static_check(copy, 0, why, sizeof(why))) {
        fabric_side(file, copy, flags);     /* a cluster with this static part */
    }
#endif
    free(copy);
    free(file);
    return 0;
}
