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
    uint32_t node;
    struct rl_ls_node *slot;     /* ours */
    int crowded;                 /* -1: not known yet */
    /* one reading, and the fixed point's work arrays */
    uint64_t e[RL_MAX_NODES], a[RL_MAX_NODES], F[RL_MAX_NETWORKS];
    uint64_t floor[RL_MAX_NODES], consumed[RL_MAX_NODES];
    uint8_t alive[RL_MAX_NODES];
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
    ls->node = node;
    ls->slot = &map->node[node];
    ls->crowded = -1;
    rl_ls_store(&ls->slot->active, 1);     /* before HELLO: the fabric reads it at start */
    return ls;
}

void rl_lockstep_close(RlLockstep *ls)
{
    if (ls) {
        munmap(ls->map, sizeof(struct rl_lockstep));
        g_free(ls);
    }
}

bool rl_lockstep_crowded(RlLockstep *ls)
{
    /*
     * Once, at the first call (machine-init-done, after WELCOME, so the static
     * part is written): not a system call at every sync point.
     */
    if (ls->crowded < 0) {
        ls->crowded = ls->map->s.vm_nodes > (uint32_t)rl_cores();
    }
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
    /* a peer that set its waiting flag before this must see our slot, or we its flag */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void rl_lockstep_set_grant(RlLockstep *ls, uint64_t grant)
{
    struct rl_ls_node *slot = ls->slot;

    rl_ls_write_begin(&slot->seq);
    rl_ls_store(&slot->grant, grant);
    rl_ls_write_end(&slot->seq);
}

void rl_lockstep_set_waiting(RlLockstep *ls, bool waiting)
{
    __atomic_store_n(&ls->slot->waiting, waiting, __ATOMIC_SEQ_CST);
}

bool rl_lockstep_peer_waits(RlLockstep *ls)
{
    for (uint32_t k = 0; k < ls->map->s.nnodes; k++) {
        if (k != ls->node && __atomic_load_n(&ls->map->node[k].waiting, __ATOMIC_SEQ_CST)) {
            return true;
        }
    }
    return false;
}

int rl_lockstep_grant(RlLockstep *ls, uint64_t msgs_read, uint64_t granularity,
                      uint64_t *grant)
{
    const struct rl_ls_static *s = &ls->map->s;
    struct rl_ls_fabric *b = &ls->map->fab;
    uint32_t n = s->nnodes;

    uint64_t begun = rl_ls_read_begin(&b->seq);
    uint64_t sent = rl_ls_load(&b->sent[ls->node]);
    uint64_t cap = rl_ls_load(&b->cap);
    for (uint32_t k = 0; k < n; k++) {
        ls->floor[k] = rl_ls_load(&b->floor[k]);
        ls->consumed[k] = rl_ls_load(&b->consumed[k]);
        ls->alive[k] = rl_ls_load(&b->alive[k]);
    }
    for (uint32_t i = 0; i < s->nnets; i++) {
        ls->F[i] = rl_ls_load(&b->caused[i]);
    }
    if (!rl_ls_read_valid(&b->seq, begun)) {
        return RL_LS_NOT_YET;
    }
    if (sent != msgs_read) {
        /* a DELIVER (or LINK) the fabric counted is still in our socket */
        return sent > msgs_read ? RL_LS_UNREAD : RL_LS_NOT_YET;
    }
    for (uint32_t k = 0; k < n; k++) {
        struct rl_ls_node *slot = &ls->map->node[k];
        if (!rl_ls_load(&slot->active) || !ls->alive[k]) {
            ls->e[k] = ls->floor[k];        /* the fabric's whole view of it */
            continue;
        }
        uint64_t begun_k = rl_ls_read_begin(&slot->seq);
        uint64_t promise = rl_ls_load(&slot->promise), frames = rl_ls_load(&slot->frames);
        if (!rl_ls_read_valid(&slot->seq, begun_k) || frames != ls->consumed[k]) {
            /* being written, or a FRAME from before its promise is not consumed */
            return RL_LS_NOT_YET;
        }
        ls->e[k] = MIN(promise, ls->floor[k]);
    }
    rl_ls_grants(s, ls->alive, ls->F, ls->e, ls->a);
    uint64_t bound = ls->a[ls->node];
    /* a timer fires up to granularity - 1 ns late: leave room for it */
    *grant = bound == RL_TIME_NEVER ? RL_TIME_NEVER : bound - MIN(bound, granularity - 1);
    *grant = MIN(*grant, cap);      /* the boot barrier's time, while nodes run to it */
    return RL_LS_OK;
}
