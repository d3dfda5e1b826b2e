/*
 * retrolink link port: the node's side of the lock-step file; see rl-lockstep.h.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include <sys/mman.h>
#include <sched.h>

#include "hw/retrolink/core/rl-lockstep.h"

struct RlLockstep {
    struct rl_lockstep *map;
    char *path;
    uint32_t node;
    struct rl_ls_node *slot;     /* ours */
    struct rl_ls_live *live;     /* our live clock */
    bool live_shared;            /* QEMU's translated code stores into it */
    /*
     * From rl_lockstep_start on: our copy of the static part, checked, the only one
     * we compute with (the file's may change under us). usable false: before, or the
     * file failed the check; the grants come through the socket.
     */
    struct rl_ls_static s;
    bool usable;
    bool crowded;
    uint32_t nnodes;             /* the slots we look at (peer_waits); 0 before start */
    /* one reading, and the fixed point's work arrays */
    uint64_t e[RL_MAX_NODES], a[RL_MAX_NODES], F[RL_MAX_NETWORKS];
    uint64_t floor[RL_MAX_NODES], consumed[RL_MAX_NODES];
    uint8_t alive[RL_MAX_NODES];
    struct rl_ls_work work;      /* pointing at them */
    /*
     * The last look's answer, and the seqlock counts (the slots', then the fabric
     * block's) and messages read it came from: a node waiting for its grant looks
     * again and again, and while nobody has published, the answer is the same.
     */
    bool memo_valid;
    int memo_r;
    uint64_t memo_grant, memo_msgs;
    uint64_t memo_seq[RL_MAX_NODES + 1];
    uint64_t memo_live[RL_MAX_NODES];    /* each live clock's seq and decrementer */
    uint64_t memo_frames[RL_MAX_NODES];  /* and its count of frames */
    uint64_t memo_pending[RL_MAX_NODES]; /* and its pending floor */
};

static int rl_cores(void)
{
    cpu_set_t set;

    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        return MAX(CPU_COUNT(&set), 1);
    }
    return MAX(sysconf(_SC_NPROCESSORS_ONLN), 1);
}

RlLockstep *rl_lockstep_open(const char *socket_path, uint32_t node)
{
    g_autofree char *path = g_strconcat(socket_path, RL_LS_SUFFIX, NULL);
    const char *transport = getenv("RETROLINK_LOCKSTEP");
    struct stat st;

    /* "socket": the old way, every grant a round trip (to measure what this saves) */
    if (transport && !strcmp(transport, "socket")) {
        return NULL;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return NULL;
    }
    if (fstat(fd, &st) || st.st_size < (off_t)sizeof(struct rl_lockstep)) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, sizeof(struct rl_lockstep), PROT_READ | PROT_WRITE, MAP_SHARED,
                   fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        return NULL;
    }
    struct rl_lockstep *map = p;
    if (__atomic_load_n(&map->s.magic, __ATOMIC_ACQUIRE) != RL_LS_MAGIC ||
        map->s.version != RL_LS_VERSION || node >= RL_MAX_NODES) {
        warn_report("retrolink node %u: %s is not a lock-step file of this version; "
                    "grants come through the socket only", node, path);
        munmap(p, sizeof(struct rl_lockstep));
        return NULL;
    }
    RlLockstep *ls = g_new0(RlLockstep, 1);
    ls->map = map;
    ls->path = g_steal_pointer(&path);
    ls->node = node;
    ls->slot = &map->node[node];
    ls->live = &map->live[node];
    ls->crowded = true;
    ls->work = (struct rl_ls_work){ .e = ls->e, .a = ls->a, .F = ls->F, .floor = ls->floor,
                                    .consumed = ls->consumed, .alive = ls->alive };
    rl_ls_store(&ls->slot->active, 1);     /* before HELLO: the fabric reads it at start */
    return ls;
}

void rl_lockstep_close(RlLockstep *ls)
{
    if (ls && ls->live_shared) {
        /*
         * Translated code still stores the decrementer into our live clock: leave it
         * memory of its own, detached from the file, rather than a hole
         */
        mmap(ls->map, sizeof(struct rl_lockstep), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    } else if (ls) {
        munmap(ls->map, sizeof(struct rl_lockstep));
    }
    if (ls) {
        g_free(ls->path);
        g_free(ls);
    }
}

bool rl_lockstep_start(RlLockstep *ls, uint32_t nodes)
{
    char why[160];

    /* copy first, then check the copy: what is checked is what is used */
    memcpy(&ls->s, &ls->map->s, sizeof(ls->s));
    if (rl_ls_static_check(&ls->s, ls->node, why, sizeof(why))) {
        if (ls->s.nnodes == nodes) {
            ls->usable = true;
            ls->nnodes = ls->s.nnodes;
            ls->crowded = ls->s.vm_nodes > (uint32_t)rl_cores();
            return true;
        }
        snprintf(why, sizeof(why), "%u nodes, but WELCOME said %u", ls->s.nnodes, nodes);
    }
    warn_report("retrolink node %u: the lock-step file %s is not sane (%s); grants come "
                "through the socket for the rest of the run", ls->node, ls->path, why);
    /* the slot is still ours and still published: the fabric and the peers read it */
    ls->nnodes = MIN(nodes, RL_MAX_NODES);
    ls->crowded = true;         /* nothing to spin for */
    return false;
}

uint16_t *rl_lockstep_live_start(RlLockstep *ls, uint64_t ns_mult, uint64_t lead)
{
    if (!ls->usable || !ns_mult || lead >= RL_TIME_NEVER) {
        return NULL;
    }
    rl_ls_store(&ls->live->pending, RL_TIME_NEVER);    /* until a board says */
    rl_ls_store(&ls->live->lead, lead);
    rl_ls_store(&ls->live->ns_mult, ns_mult);
    ls->live_shared = true;
    return &ls->live->decr;
}

void rl_lockstep_live_budget(RlLockstep *ls, uint64_t now, uint64_t insns, uint64_t extra,
                             uint16_t decr)
{
    struct rl_ls_live *lv = ls->live;

    rl_ls_write_begin(&lv->seq);
    rl_ls_store(&lv->t0, now);
    rl_ls_store(&lv->insns, insns);
    rl_ls_store(&lv->extra, extra);
    rl_ls_store(&lv->decr, decr);
    rl_ls_write_end(&lv->seq);
}

void rl_lockstep_live_frames(RlLockstep *ls, uint64_t frames_sent)
{
    __atomic_store_n(&ls->live->frames, frames_sent, __ATOMIC_RELEASE);
}

void rl_lockstep_live_pending(RlLockstep *ls, uint64_t floor)
{
    __atomic_store_n(&ls->live->pending, floor, __ATOMIC_RELEASE);
}

bool rl_lockstep_crowded(RlLockstep *ls)
{
    return ls->crowded;
}

void rl_lockstep_publish(RlLockstep *ls, uint64_t now, uint64_t promise,
                         uint64_t frames_sent, uint64_t grant)
{
    struct rl_ls_node *slot = ls->slot;

    rl_ls_write_begin(&slot->seq);
    rl_ls_store(&slot->t, now);
    rl_ls_store(&slot->promise, promise);
    rl_ls_store(&slot->frames, frames_sent);
    rl_ls_store(&slot->grant, grant);
    rl_ls_store(&slot->syncs, slot->syncs + 1);
    rl_ls_write_end(&slot->seq);
}

bool rl_lockstep_peer_waits_fenced(RlLockstep *ls)
{
    /* a peer that set its waiting flag before this sees our slot, or we its flag */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return rl_lockstep_peer_waits(ls);
}

/*
 * The grant and the count of grants in the loop are stored outside the seqlock
 * (include/retrolink/lockstep.h): a change of seq would make every peer waiting on
 * us compute its grant again, for nothing, since no grant depends on them.
 */
void rl_lockstep_set_grant(RlLockstep *ls, uint64_t grant)
{
    rl_ls_store(&ls->slot->grant, grant);
}

void rl_lockstep_count_exec_grant(RlLockstep *ls)
{
    rl_ls_store(&ls->slot->exec_grants, ls->slot->exec_grants + 1);
}

void rl_lockstep_set_waiting(RlLockstep *ls, bool waiting)
{
    __atomic_store_n(&ls->slot->waiting, waiting, __ATOMIC_SEQ_CST);
}

bool rl_lockstep_peer_waits(RlLockstep *ls)
{
    for (uint32_t k = 0; k < ls->nnodes; k++) {
        if (k != ls->node && __atomic_load_n(&ls->map->node[k].waiting, __ATOMIC_SEQ_CST)) {
            return true;
        }
    }
    return false;
}

int rl_lockstep_grant(RlLockstep *ls, uint64_t msgs_read, uint64_t granularity,
                      uint64_t *grant)
{
    if (!ls->usable) {
        return RL_LS_OFF;
    }
    /*
     * The same seqlock counts as at the last look (each read before its data) and the
     * same messages read: nobody wrote since, so the same answer. A count read odd
     * (being written) never matches, since the memo only keeps counts it read even.
     */
    uint32_t n = ls->s.nnodes;
    bool same = ls->memo_valid && msgs_read == ls->memo_msgs, even = true;
    for (uint32_t k = 0; k <= n; k++) {
        uint64_t seq = __atomic_load_n(k < n ? &ls->map->node[k].seq : &ls->map->fab.seq,
                                       __ATOMIC_ACQUIRE);
        same = same && seq == ls->memo_seq[k];
        even = even && !(seq & 1);
        ls->memo_seq[k] = seq;
    }
    /* and the same live clocks: a peer's moves while it runs */
    for (uint32_t k = 0; k < n; k++) {
        const struct rl_ls_live *lv = &ls->map->live[k];
        uint64_t clock = __atomic_load_n(&lv->seq, __ATOMIC_ACQUIRE) << 16 |
                         __atomic_load_n(&lv->decr, __ATOMIC_RELAXED);
        uint64_t pending = __atomic_load_n(&lv->pending, __ATOMIC_RELAXED);
        uint64_t frames = __atomic_load_n(&lv->frames, __ATOMIC_RELAXED);
        same = same && clock == ls->memo_live[k] && frames == ls->memo_frames[k] &&
               pending == ls->memo_pending[k];
        ls->memo_live[k] = clock;
        ls->memo_frames[k] = frames;
        ls->memo_pending[k] = pending;
    }
    if (same) {
        *grant = ls->memo_grant;
        return ls->memo_r;
    }
    /* the block's and slots' values are times and counts, none an index: no clamping */
    uint64_t g = 0;
    int r = rl_ls_compute_grant(&ls->s, &ls->map->fab, ls->map->node, ls->map->live,
                                ls->node, msgs_read, granularity, &ls->work, &g);
    ls->memo_valid = even;
    ls->memo_r = r;
    ls->memo_grant = *grant = g;
    ls->memo_msgs = msgs_read;
    return r;
}
