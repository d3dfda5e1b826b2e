/*
 * retrolink lock-step in shared memory (docs/fabric.md, "Grants without a round trip").
 *
 * The socket carries frames; the grants of the lock-step need not cross it. The
 * fabric creates a file next to its socket (RL_LS_SUFFIX) holding:
 *  - what never changes once the cluster started (struct rl_ls_static): networks,
 *    their stations and least latencies, each node's reaction time;
 *  - one slot per node that the node writes at every sync point (struct rl_ls_node):
 *    its time, its promise, how many FRAMEs it had written to its socket by then,
 *    the grant it runs to;
 *  - one block the fabric writes after every step (struct rl_ls_fabric): what only
 *    it knows (frames consumed from each node, messages sent to each node, each
 *    node's earliest delivered arrival plus reaction, each network's earliest
 *    arrival a pending event could cause, who is alive).
 * A node at its grant computes its next grant itself, from a consistent reading of
 * all of it, with rl_ls_grants(): the same fixed point the fabric computes (its
 * sync_compute calls this function too). The reading is usable only if the fabric has
 * consumed every FRAME each node had written before its slot's publication and the
 * node has read every message the fabric sent it; else the node waits, and at last
 * falls back to SYNC and GRANT on the socket, which is always correct.
 *
 * Every slot and the fabric block are seqlocks (odd while being written), one
 * writer each; but a slot's grant and exec_grants, which only grow and which no grant
 * is computed from, are stored outside its seqlock (any value read is one it held).
 * Shared by the fabric (fabric/core/lockstep.c) and the QEMU link port
 * (qemu/core/rl-link.c).
 *
 * Anything that can open the file can write all of it. Neither side computes from
 * the file's static part: the fabric from its own (struct fabric's ls_static), a node
 * from a copy it takes once the cluster has started and that passed
 * rl_ls_static_check(); the rest of the file holds only times and counts, read
 * within bounds set by that copy (docs/fabric.md, "A file anyone can write").
 */
#ifndef RL_LOCKSTEP_H
#define RL_LOCKSTEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "retrolink/wire.h"

/* cdef-begin: plain C that cffi parses (src/retrolink/lockstep.py): literal sizes,
 * checked against the constants below; every struct a multiple of 64 bytes, so that
 * each slot has a cache line of its own. */
#define RL_LS_MAGIC 0x4b53534c
#define RL_LS_VERSION 4

struct rl_ls_static {
    uint32_t magic, version;
    uint32_t nnodes, nnets;
    uint32_t vm_nodes;                      /* QEMUs: how many may want a core */
    uint32_t notice_nets;                   /* networks (bit per id) that send a node
                                               notices of its own frames */
    uint32_t reserved[2];
    uint64_t latency[16];                   /* L_N: least latency of network N */
    uint64_t reaction[256];                 /* R_k; RL_TIME_NEVER for synthetic nodes */
    uint32_t stations[16];                  /* how many on network N */
    uint16_t station_node[16][256];
    uint8_t pad[32];
};

struct rl_ls_fabric {
    uint64_t seq;                           /* seqlock */
    uint64_t consumed[256];                 /* FRAMEs handled from each node */
    uint64_t sent[256];                     /* messages sent to each node, WELCOME on */
    uint64_t floor[256];                    /* a slot-publishing node: earliest delivered
                                               arrival + R (its promise is in its slot);
                                               another: its whole send floor (E before
                                               relaxation); RL_TIME_NEVER if gone */
    uint8_t alive[256];                     /* a VM node that may still react */
    uint64_t caused[16];                    /* F_N */
    uint64_t cap;                           /* no grant beyond this (the boot barrier's
                                               time while nodes run to it), else never */
    uint8_t pad[48];
};

struct rl_ls_node {
    uint64_t seq;            /* seqlock */
    uint32_t active;         /* the node's link port publishes here (0: it never does) */
    uint32_t waiting;        /* blocked on the socket for a GRANT: poke the fabric */
    uint64_t t;              /* its clock at its last sync point */
    uint64_t promise;        /* as a SYNC's */
    uint64_t frames;         /* FRAMEs written to its socket before this publication */
    uint64_t grant;          /* the grant it runs to (its own or the fabric's); no seq */
    uint64_t syncs;          /* sync points, every one */
    uint64_t exec_grants;    /* grants it took without leaving the vCPU loop (QEMU 0007); no seq */
};

/*
 * A node's live clock (docs/fabric.md, "Live time"): between its sync points, how far
 * its vCPU has got, for a waiting peer to read. The node writes the budget fields
 * (under seq) each time QEMU sets its vCPU's instruction budget, and QEMU's translated
 * code stores the decrementer at the start of every TB (QEMU patch 0008); frames is
 * stored at every FRAME it writes, pending whenever the sends its boards have committed
 * but not yet written change (before the decrementer moves on). ns_mult and lead are
 * written once, before its vCPU runs; ns_mult 0 or lead RL_TIME_NEVER: no live time.
 */
struct rl_ls_live {
    uint64_t seq;            /* seqlock over t0, insns, extra */
    uint64_t t0;             /* virtual ns when the budget was set */
    uint64_t insns;          /* the budget then, in instructions */
    uint64_t extra;          /* the part of it outside the decrementer */
    uint64_t ns_mult;        /* ns per instruction times 2^32 (QEMU's icount_ns_mult) */
    uint64_t frames;         /* FRAMEs written to its socket so far */
    uint64_t pending;        /* the pending floor: earliest ready time of a frame its
                                boards committed and have not written yet (never: none) */
    uint16_t decr;           /* the decrementer as the running TB started */
    uint16_t pad[3];
    /* a line of its own, written once: the first is written all the time */
    uint64_t lead;           /* least time from a guest action to a frame it commits */
    uint8_t pad2[56];
};

struct rl_lockstep {
    struct rl_ls_static s;
    struct rl_ls_fabric fab;
    struct rl_ls_node node[256];
    struct rl_ls_live live[256];
};
/* cdef-end */

#define RL_LS_SUFFIX ".lockstep"

#if defined(__STDC_VERSION__) || defined(__cplusplus)
_Static_assert(sizeof(((struct rl_ls_static *)0)->reaction) == 8 * RL_MAX_NODES, "nodes");
_Static_assert(sizeof(((struct rl_ls_static *)0)->latency) == 8 * RL_MAX_NETWORKS, "nets");
_Static_assert(sizeof(((struct rl_ls_static *)0)->station_node) ==
               2 * RL_MAX_NETWORKS * RL_MAX_NODES, "stations");
_Static_assert(sizeof(((struct rl_ls_fabric *)0)->alive) == RL_MAX_NODES, "alive");
_Static_assert(sizeof(((struct rl_ls_fabric *)0)->caused) == 8 * RL_MAX_NETWORKS, "caused");
_Static_assert(sizeof(struct rl_ls_static) % 64 == 0, "static: whole cache lines");
_Static_assert(sizeof(struct rl_ls_fabric) % 64 == 0, "fabric block: whole cache lines");
_Static_assert(sizeof(struct rl_ls_node) == 64, "a slot: one cache line");
_Static_assert(sizeof(struct rl_ls_live) == 128, "a live clock: two cache lines");
#endif

static inline uint64_t rl_ls_sat_add(uint64_t a, uint64_t b)
{
    return a > RL_TIME_NEVER - b ? RL_TIME_NEVER : a + b;
}

static inline uint64_t rl_ls_min(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/*
 * The fixed point of docs/fabric.md, "The synchronisation rule":
 *   E_k = min(floor_k, A_k + R_k)     (relaxed only for the alive VM nodes)
 *   A_k = min over networks N of k: min(min over stations j != k of E_j + L_N, F_N)
 * where on a network of notice_nets j = k counts too (a node's own frame makes a
 * notice arrive at it). e: in, each node's floor; out, E. a: out, A (each node's grant before
 * granularity). E only decreases, so at most nnodes + 1 rounds. s: the caller's own
 * copy, which rl_ls_static_check accepted (never the shared file): e, a and alive
 * have nnodes entries at least, F nnets.
 */
static inline void rl_ls_grants(const struct rl_ls_static *s, const uint8_t *alive,
                                const uint64_t *F, uint64_t *e, uint64_t *a)
{
    for (uint32_t round = 0; round <= s->nnodes; round++) {
        for (uint32_t k = 0; k < s->nnodes; k++) {
            a[k] = RL_TIME_NEVER;
        }
        for (uint32_t i = 0; i < s->nnets; i++) {
            /* the two smallest E on it, so that "min over j != k" is O(1) */
            uint64_t m1 = RL_TIME_NEVER, m2 = RL_TIME_NEVER;
            uint32_t arg1 = UINT32_MAX;
            for (uint32_t st = 0; st < s->stations[i]; st++) {
                uint64_t ej = e[s->station_node[i][st]];
                if (ej < m1) {
                    m2 = m1;
                    m1 = ej;
                    arg1 = st;
                } else if (ej < m2) {
                    m2 = ej;
                }
            }
            for (uint32_t st = 0; st < s->stations[i]; st++) {
                uint64_t others = st == arg1 && !(s->notice_nets >> i & 1) ? m2 : m1;
                uint32_t k = s->station_node[i][st];
                a[k] = rl_ls_min(a[k], rl_ls_min(rl_ls_sat_add(others, s->latency[i]), F[i]));
            }
        }
        bool changed = false;
        for (uint32_t k = 0; k < s->nnodes; k++) {
            if (alive[k]) {
                uint64_t ek = rl_ls_min(e[k], rl_ls_sat_add(a[k], s->reaction[k]));
                if (ek < e[k]) {
                    e[k] = ek;
                    changed = true;
                }
            }
        }
        if (!changed) {
            return;
        }
    }
}

/*
 * Seqlocks, one writer each: the writer makes seq odd, writes, makes it even; a
 * reader takes seq (odd: being written, try again), reads with rl_ls_load, and
 * keeps what it read only if seq has not changed (rl_ls_read_valid).
 */
static inline void rl_ls_write_begin(uint64_t *seq)
{
    __atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void rl_ls_write_end(uint64_t *seq)
{
    __atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

static inline uint64_t rl_ls_read_begin(const uint64_t *seq)
{
    return __atomic_load_n(seq, __ATOMIC_ACQUIRE);
}

static inline bool rl_ls_read_valid(const uint64_t *seq, uint64_t begun)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return !(begun & 1) && __atomic_load_n(seq, __ATOMIC_RELAXED) == begun;
}

#define rl_ls_load(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define rl_ls_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/*
 * The static part is safe to compute with for node (rl_ls_grants, rl_ls_compute_grant:
 * every index below the arrays' sizes and below nnodes, so that work arrays of nnodes
 * entries do): the right magic and version, 1 <= nnodes <= RL_MAX_NODES, node <
 * nnodes, nnets <= RL_MAX_NETWORKS, vm_nodes <= nnodes, and on each network at most
 * nnodes stations, each a node below nnodes. Else false, with why filled. It only
 * reads s: check a private copy, not the shared file, which may change meanwhile.
 */
static inline bool rl_ls_static_check(const struct rl_ls_static *s, uint32_t node, char *why,
                                      size_t len)
{
    const size_t max_nodes = sizeof(s->reaction) / sizeof(s->reaction[0]);
    const size_t max_nets = sizeof(s->stations) / sizeof(s->stations[0]);
    const size_t max_stations = sizeof(s->station_node[0]) / sizeof(s->station_node[0][0]);

    if (s->magic != RL_LS_MAGIC || s->version != RL_LS_VERSION) {
        snprintf(why, len, "magic %#x version %u, not %#x version %u", s->magic, s->version,
                 RL_LS_MAGIC, RL_LS_VERSION);
        return false;
    }
    if (s->nnodes < 1 || s->nnodes > max_nodes) {
        snprintf(why, len, "%u nodes, not 1 to %zu", s->nnodes, max_nodes);
        return false;
    }
    if (node >= s->nnodes) {
        snprintf(why, len, "%u nodes: no node %u", s->nnodes, node);
        return false;
    }
    if (s->nnets > max_nets) {
        snprintf(why, len, "%u networks, more than %zu", s->nnets, max_nets);
        return false;
    }
    if (s->vm_nodes > s->nnodes) {
        snprintf(why, len, "%u VM nodes of %u nodes", s->vm_nodes, s->nnodes);
        return false;
    }
    for (uint32_t i = 0; i < s->nnets; i++) {
        if (s->stations[i] > s->nnodes || s->stations[i] > max_stations) {
            snprintf(why, len, "network %u has %u stations, %u nodes", i, s->stations[i],
                     s->nnodes);
            return false;
        }
        for (uint32_t st = 0; st < s->stations[i]; st++) {
            if (s->station_node[i][st] >= s->nnodes) {
                snprintf(why, len, "network %u station %u is node %u of %u", i, st,
                         s->station_node[i][st], s->nnodes);
                return false;
            }
        }
    }
    return true;
}

/*
 * A node's grant from the file. RL_LS_OK: *grant is what the rule gives; RL_LS_UNREAD:
 * the fabric has sent messages the node has not read yet (read them, ask again);
 * RL_LS_NOT_YET: the reading is not usable (being written, or the fabric has not
 * consumed every FRAME a node wrote before its publication). RL_LS_OFF is the QEMU
 * link port's own: the static part failed rl_ls_static_check, the socket only.
 */
enum { RL_LS_OK, RL_LS_UNREAD, RL_LS_NOT_YET, RL_LS_OFF };

/*
 * The promise node k's live clock gives now (struct rl_ls_live), or 0 if it gives
 * none: being written, no live clock, or a FRAME it wrote is not in consumed (the
 * FRAMEs of k the fabric had handled, from a reading of its block made before this
 * call). The vCPU has executed at least insns - (decr + extra) instructions since t0,
 * each at least ns_mult / 2^32 ns, and whatever it does from now on commits a frame
 * ready no sooner than lead after it; every frame it committed before is either
 * written, and the fabric has handled them all, or pending, ready no sooner than the
 * pending floor. So the promise is the earlier of live + lead and that floor.
 * Reads in the order decrementer, floor, count; the node stores a floor that goes
 * down (a send committed) before the decrementer moves on, and one that goes up (a
 * frame written) after the count: a floor read after a decrementer is at least as
 * fresh as it, and a count read after a floor as fresh as that (x86 keeps both
 * orders), so a count that matches covers every frame the floor no longer does.
 */
static inline uint64_t rl_ls_live_promise(const struct rl_ls_live *lv, uint64_t consumed)
{
    uint64_t begun = rl_ls_read_begin(&lv->seq);
    uint64_t t0 = rl_ls_load(&lv->t0), insns = rl_ls_load(&lv->insns);
    uint64_t extra = rl_ls_load(&lv->extra), mult = rl_ls_load(&lv->ns_mult);
    uint64_t lead = rl_ls_load(&lv->lead);
    uint64_t left = __atomic_load_n(&lv->decr, __ATOMIC_ACQUIRE);
    uint64_t pending = __atomic_load_n(&lv->pending, __ATOMIC_ACQUIRE);
    uint64_t frames = __atomic_load_n(&lv->frames, __ATOMIC_ACQUIRE);

    if (!rl_ls_read_valid(&lv->seq, begun) || !mult || lead >= RL_TIME_NEVER ||
        frames != consumed || extra > insns || left > insns - extra) {
        return 0;
    }
    unsigned __int128 ns = (unsigned __int128)(insns - extra - left) * mult >> 32;
    if (ns >= RL_TIME_NEVER) {
        return 0;
    }
    return rl_ls_min(rl_ls_sat_add(rl_ls_sat_add(t0, (uint64_t)ns), lead), pending);
}

/* rl_ls_compute_grant's work arrays: nnodes entries each (F: nnets), at least */
struct rl_ls_work {
    uint64_t *e, *a, *F, *floor, *consumed;
    uint8_t *alive;
};

/*
 * The grant of node from one consistent reading of the fabric's block b and the
 * slots (RL_MAX_NODES of them: the file's), their live clocks (as many, or NULL: the
 * slots' promises only), and msgs_read, the messages the node has read from its
 * socket: the whole computation of a node at its sync point, but for where the file
 * is. s is the node's own copy of the static part, and it must have passed
 * rl_ls_static_check for node: nothing read from b or the slots is an index.
 */
static inline int rl_ls_compute_grant(const struct rl_ls_static *s,
                                      const struct rl_ls_fabric *b,
                                      const struct rl_ls_node *slots,
                                      const struct rl_ls_live *live, uint32_t node,
                                      uint64_t msgs_read, uint64_t granularity,
                                      const struct rl_ls_work *w, uint64_t *grant)
{
    uint32_t n = s->nnodes;

    uint64_t begun = rl_ls_read_begin(&b->seq);
    uint64_t sent = rl_ls_load(&b->sent[node]);
    uint64_t cap = rl_ls_load(&b->cap);
    for (uint32_t k = 0; k < n; k++) {
        w->floor[k] = rl_ls_load(&b->floor[k]);
        w->consumed[k] = rl_ls_load(&b->consumed[k]);
        w->alive[k] = rl_ls_load(&b->alive[k]);
    }
    for (uint32_t i = 0; i < s->nnets; i++) {
        w->F[i] = rl_ls_load(&b->caused[i]);
    }
    if (!rl_ls_read_valid(&b->seq, begun)) {
        return RL_LS_NOT_YET;
    }
    if (sent != msgs_read) {
        /* a DELIVER (or LINK) the fabric counted is still in our socket */
        return sent > msgs_read ? RL_LS_UNREAD : RL_LS_NOT_YET;
    }
    for (uint32_t k = 0; k < n; k++) {
        const struct rl_ls_node *slot = &slots[k];
        if (!rl_ls_load(&slot->active) || !w->alive[k]) {
            w->e[k] = w->floor[k];          /* the fabric's whole view of it */
            continue;
        }
        uint64_t begun_k = rl_ls_read_begin(&slot->seq);
        uint64_t promise = rl_ls_load(&slot->promise), frames = rl_ls_load(&slot->frames);
        if (!rl_ls_read_valid(&slot->seq, begun_k) || frames != w->consumed[k]) {
            /* being written, or a FRAME from before its promise is not consumed */
            return RL_LS_NOT_YET;
        }
        if (live) {
            /* both promise for the future: the later one holds */
            uint64_t lp = rl_ls_live_promise(&live[k], w->consumed[k]);
            promise = promise > lp ? promise : lp;
        }
        w->e[k] = rl_ls_min(promise, w->floor[k]);
    }
    rl_ls_grants(s, w->alive, w->F, w->e, w->a);
    uint64_t bound = w->a[node];
    /* a timer fires up to granularity - 1 ns late: leave room for it */
    *grant = bound == RL_TIME_NEVER ? RL_TIME_NEVER
             : bound - rl_ls_min(bound, granularity - 1);
    *grant = rl_ls_min(*grant, cap);   /* the boot barrier's time, while nodes run to it */
    return RL_LS_OK;
}

#endif /* RL_LOCKSTEP_H */
