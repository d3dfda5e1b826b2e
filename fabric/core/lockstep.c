/*
 * The fabric's side of the lock-step in shared memory (include/retrolink/lockstep.h,
 * docs/fabric.md "Grants without a round trip"): it creates the file, fills in
 * what never changes when the cluster starts, adopts what each node publishes in
 * its slot, and publishes what only the fabric knows after every step.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fabric.h"
#include "proto.h"

void lockstep_create(struct fabric *f)
{
    snprintf(f->lockstep_path, sizeof(f->lockstep_path), "%s" RL_LS_SUFFIX, f->socket_path);
    unlink(f->lockstep_path);
    int fd = open(f->lockstep_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct rl_lockstep))) {
        /* it is made first, beside the socket: a bad socket path shows here */
        fabric_fatal(EXIT_RUNTIME, "cannot listen on %s: cannot create the lock-step file "
                     "beside it: %s", f->socket_path, strerror(errno));
    }
    fabric_owns(f->lockstep_path);
    void *p = mmap(NULL, sizeof(struct rl_lockstep), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fabric_fatal(EXIT_RUNTIME, "cannot map %s: %s", f->lockstep_path, strerror(errno));
    }
    f->ls = p;
    /* a node checks magic and version before it uses anything else */
    f->ls->s.version = RL_LS_VERSION;
    __atomic_store_n(&f->ls->s.magic, RL_LS_MAGIC, __ATOMIC_RELEASE);
}

void lockstep_start(struct fabric *f)
{
    struct rl_ls_static *s = &f->ls_static;
    char why[160];

    /* built in our own memory, then copied out: what we compute with stays ours */
    memset(s, 0, sizeof(*s));
    s->magic = RL_LS_MAGIC;
    s->version = RL_LS_VERSION;
    s->nnodes = f->nnodes;
    s->nnets = f->nnets;
    for (uint32_t i = 0; i < f->nnets; i++) {
        struct network *net = &f->nets[i];
        s->latency[i] = net->topo->min_latency(net);
        s->stations[i] = net->n;
        s->notice_nets |= (uint32_t)net->topo->notices << i;
        for (uint32_t st = 0; st < net->n; st++) {
            s->station_node[i][st] = net->station_node[st];
        }
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        s->reaction[k] = n->kind == NODE_VM ? n->reaction : NEVER;
        s->vm_nodes += n->kind == NODE_VM;
        /* only a VM node's QEMU may publish (anyone can write "active" in a slot) */
        n->lockstep = n->kind == NODE_VM && rl_ls_load(&f->ls->node[k].active) != 0;
    }
    /* what the configuration allows always passes: a failure is the fabric's bug */
    if (!rl_ls_static_check(s, 0, why, sizeof(why))) {
        fabric_fatal(EXIT_RUNTIME, "internal error: the lock-step file's static part: %s", why);
    }
    memcpy(&f->ls->s, s, sizeof(*s));
}

/*
 * What node n published, if the fabric has every FRAME it wrote before that:
 * its time and promise then, and its grant (stored outside the seqlock: then or
 * since; it only grows). A publication a SYNC could not carry (a time
 * going back, a promise before its time, a time beyond TIME_LIMIT) is refused as
 * that SYNC would be: false, with why filled, and nothing adopted.
 */
bool lockstep_refresh(struct fabric *f, struct node *n, char *why, size_t whylen)
{
    if (!n->lockstep || !n->alive) {
        return true;
    }
    struct rl_ls_node *slot = &f->ls->node[n->id];
    uint64_t begun = rl_ls_read_begin(&slot->seq);
    uint64_t t = rl_ls_load(&slot->t), promise = rl_ls_load(&slot->promise);
    uint64_t frames = rl_ls_load(&slot->frames), grant = rl_ls_load(&slot->grant);
    uint64_t syncs = rl_ls_load(&slot->syncs);
    if (!rl_ls_read_valid(&slot->seq, begun) || frames != n->frames_in || !syncs) {
        /* being written, a FRAME of before it is still in the socket, or nothing
         * published yet (a node started from a snapshot is at its saved time) */
        return true;
    }
    if (syncs <= n->held_syncs) {
        /* its publication at the boot barrier, from before its release: the fabric's
         * promise for it since (its time) holds until it says more (barrier.c) */
        return true;
    }
    const char *bad = t < n->t ? "time went backwards"
                      : t >= TIME_LIMIT ? "time beyond the fabric's limit of 2^63 ns"
                      : promise < t ? "promise earlier than the node's own time"
                      : promise >= TIME_LIMIT && promise != NEVER ? "promise beyond 2^63 ns"
                      : NULL;
    if (bad) {
        snprintf(why, whylen, "lock-step slot: %s (time %llu, promise %llu)", bad,
                 (unsigned long long)t, (unsigned long long)promise);
        return false;
    }
    if (t > n->t || promise != n->promise) {
        n->t = t;
        n->promise = promise;
        n->last_sync_wall = wall_now();
        n->moved = true;
    }
    n->grant = max64(n->grant, grant);
    n->sync_points = max64(n->sync_points, syncs);
    return true;
}

void lockstep_publish(struct fabric *f)
{
    struct rl_ls_fabric *b = &f->ls->fab;

    rl_ls_write_begin(&b->seq);
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        /* a publishing node's promise is in its slot: give only what we add to it */
        bool own_promise = n->lockstep && node_counts(n);
        rl_ls_store(&b->floor[k], own_promise ? node_arrival_floor(n) : node_floor(n));
        rl_ls_store(&b->alive[k], (uint8_t)(n->kind == NODE_VM && n->alive));
        rl_ls_store(&b->consumed[k], n->frames_in);
        rl_ls_store(&b->sent[k], n->msgs_out);
    }
    for (uint32_t i = 0; i < f->nnets; i++) {
        rl_ls_store(&b->caused[i], f->caused[i]);
    }
    rl_ls_store(&b->cap, f->barrier.cap);
    rl_ls_write_end(&b->seq);
}
