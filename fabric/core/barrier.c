/*
 * The boot barrier (docs/snapshots.md): every node's guest, once booted and before
 * it reads its command, arrives (BARRIER, held). A held node stands still and sends
 * nothing, so the others' grants do not wait for it. When every VM node is held, the
 * barrier's time t is the latest arrival: every node is told (BARRIER_AT) and runs
 * to t, no grant going past it (the cap, in the lock-step file too). When every node
 * has reached t, and each that publishes in its slot has published there since the
 * release (until then its slot still says what it said when held, "never": a peer
 * reading it without the cap would run on unbounded), the barrier is done: the fabric
 * saves its state if asked to, and the cap goes. Nothing may be in flight at t, so a boot must be quiet on the networks:
 * a FRAME before the barrier is done breaks the protocol, and synthetic nodes start
 * sending only then (synthetic_start).
 */
#include <stdio.h>

#include "fabric.h"

static char why[RL_ERROR_TEXT_LEN];

static bool vm_node(const struct node *n)
{
    return n->kind == NODE_VM && n->alive;
}

/* Whether node n's slot (if it publishes there) says more than its held "never" */
static bool published_since_release(const struct node *n)
{
    return !n->lockstep || n->sync_points > n->held_syncs;
}

uint64_t barrier_cap(const struct fabric *f, uint64_t grant)
{
    return min64(grant, f->barrier.cap);
}

/* Every node held: run them all to the latest arrival. */
static void release(struct fabric *f)
{
    struct barrier *b = &f->barrier;

    for (uint32_t k = 0; k < f->nnodes; k++) {
        if (vm_node(&f->nodes[k])) {
            b->t = max64(b->t, f->nodes[k].t);
        }
    }
    b->released = true;
    b->cap = b->t;
    /* the cap is in the lock-step file before any node reads BARRIER_AT */
    lockstep_publish(f);
    fabric_log("boot barrier: every node has booted; running them to %llu ns",
               (unsigned long long)b->t);
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        if (!vm_node(n)) {
            continue;
        }
        struct rl_barrier m = { .flags = b->save_path[0] ? RL_BARRIER_SAVE : 0 };
        rl_msg_hdr_init(&m.h, RL_MSG_BARRIER_AT, sizeof(m), n->id, b->t);
        n->held = false;
        n->promise = n->t;       /* it may act again; its next sync point says more */
        /* the slot can change only once the node has read BARRIER_AT, sent below */
        n->held_syncs = n->lockstep ? rl_ls_load(&f->ls->node[k].syncs) : 0;
        n->grant = max64(n->grant, b->t);
        fabric_send(f, n, &m, sizeof(m));
    }
}

void barrier_release_if_held(struct fabric *f)
{
    if (!f->barrier.on || f->barrier.released) {
        return;
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        if (vm_node(&f->nodes[k]) && !f->nodes[k].held) {
            return;
        }
    }
    release(f);
}

const char *barrier_message(struct fabric *f, struct node *n, const struct rl_barrier *m)
{
    struct barrier *b = &f->barrier;
    uint64_t t = m->h.time_ns;

    if (!b->on) {
        return "BARRIER, but this cluster has no boot barrier";
    }
    if (m->flags == RL_BARRIER_HELD) {
        if (b->released || n->held) {
            return "a second arrival at the boot barrier";
        }
        n->t = t;
        n->held = true;
        n->promise = NEVER;      /* it stands still until every node is held */
        n->waiting = false;
        n->last_sync_wall = wall_now();
        /* in shards, every shard releases at the exchange that tells it the last
         * arrival (shard_exchange), so that all of them do it with the same arrivals
         * at the same exchange: a shard releasing here would unhold its nodes before
         * the others heard they were held, and they would wait for them for ever */
        if (!f->shard) {
            barrier_release_if_held(f);
        }
        return NULL;
    }
    /* RL_BARRIER_STOPPED: at the barrier's time, stopped for a snapshot */
    if (!b->released || !b->save_path[0] || t < b->t) {
        snprintf(why, sizeof(why), "BARRIER stopped at %llu ns, but the barrier %s",
                 (unsigned long long)t, !b->released ? "has not been released"
                 : !b->save_path[0] ? "takes no snapshot" : "is later");
        return why;
    }
    n->t = t;
    n->last_sync_wall = wall_now();
    return NULL;
}

const char *barrier_refuses_frame(struct fabric *f, struct node *n)
{
    if (!f->barrier.on || f->barrier.done) {
        return NULL;
    }
    snprintf(why, sizeof(why), "a FRAME before the boot barrier (node %u's clock %llu ns): "
             "a cluster's boot must be quiet on its networks (docs/snapshots.md)", n->id,
             (unsigned long long)n->t);
    return why;
}

void barrier_check(struct fabric *f)
{
    struct barrier *b = &f->barrier;

    if (!b->released || b->done) {
        return;
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        const struct node *n = &f->nodes[k];
        if (vm_node(n) && (n->t < b->t || !published_since_release(n))) {
            return;
        }
    }
    if (f->queue.n) {
        /* a quiet boot leaves nothing; this is a fabric defect, not the guest's */
        fabric_fatal(EXIT_RUNTIME, "boot barrier at %llu ns: %zu event(s) still queued",
                     (unsigned long long)b->t, f->queue.n);
    }
    b->done = true;
    b->cap = NEVER;
    if (b->save_path[0]) {
        state_save(f);
    }
    synthetic_start(f);
    fabric_log("boot barrier passed at %llu ns%s", (unsigned long long)b->t,
               b->save_path[0] ? "; state saved" : "");
}
