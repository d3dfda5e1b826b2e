/*
 * The fabric's own state at the boot barrier (docs/snapshots.md), beside each
 * node's QEMU snapshot. A boot is quiet (barrier.c), so at the barrier no frame
 * has been sent, no event is queued and every topology is as configured: what is
 * left is each node's clock and its counters. The file is text:
 *
 *   retrolink-fabric-state 1
 *   nodes N
 *   barrier T
 *   node K t=NS syncs=C sync_points=C      (one line per VM node)
 *
 * written whole or not at all (a temporary file, renamed), and read back strictly:
 * anything else is refused, naming the file and the line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric.h"
#include "proto.h"
#include "shard.h"

#define STATE_MAGIC "retrolink-fabric-state 1"

/*
 * A snapshot is optional: when the state cannot be written (its folder gone, because
 * the snapshot maker gave up; a full disk) the fabric says so and the cluster runs on.
 * The maker then finds no state and makes no snapshot.
 */
void state_save(struct fabric *f)
{
    const char *path = f->barrier.save_path;
    if (f->shard && f->shard->rank != 0) {
        return;      /* shard 0's state is every shard's (shard.c) */
    }
    char tmp[sizeof(f->barrier.save_path) + 8];

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fabric_log("cannot write the fabric's state %s: %s; no snapshot is made, the "
                   "cluster runs on", tmp, strerror(errno));
        return;
    }
    fprintf(out, STATE_MAGIC "\nnodes %u\nbarrier %" PRIu64 "\n", f->nnodes, f->barrier.t);
    for (uint32_t k = 0; k < f->nnodes; k++) {
        const struct node *n = &f->nodes[k];
        if (n->kind == NODE_VM) {
            fprintf(out, "node %u t=%" PRIu64 " syncs=%" PRIu64 " sync_points=%" PRIu64 "\n",
                    k, n->t, n->syncs, n->sync_points);
        }
    }
    bool bad = fflush(out) || fsync(fileno(out)) || ferror(out);
    bad = fclose(out) != 0 || bad;
    if (bad || rename(tmp, path)) {
        fabric_log("cannot write the fabric's state %s: %s; no snapshot is made, the "
                   "cluster runs on", path, strerror(errno));
        unlink(tmp);
    }
}

_Noreturn static void refuse(const char *path, int line, const char *what)
{
    fabric_fatal(EXIT_CONFIG, "the fabric's state %s:%d: %s (a snapshot made by another "
                 "retrolink, or damaged: boot with --cold)", path, line, what);
}

void state_restore(struct fabric *f)
{
    const char *path = f->barrier.restore_path;
    FILE *in = fopen(path, "r");
    char line[256];
    int lineno = 0;
    uint32_t nodes;
    uint64_t t;
    bool *seen = xcalloc(f->nnodes, sizeof(*seen));

    if (!in) {
        fabric_fatal(EXIT_CONFIG, "cannot read the fabric's state %s: %s", path,
                     strerror(errno));
    }
    if (!fgets(line, sizeof(line), in) || strcmp(line, STATE_MAGIC "\n")) {
        refuse(path, 1, "not a fabric state of this version");
    }
    lineno = 1;
    if (!fgets(line, sizeof(line), in) || sscanf(line, "nodes %" SCNu32, &nodes) != 1 ||
        nodes != f->nnodes) {
        refuse(path, 2, "its node count is not this cluster's");
    }
    if (!fgets(line, sizeof(line), in) || sscanf(line, "barrier %" SCNu64, &t) != 1 ||
        t >= TIME_LIMIT) {
        refuse(path, 3, "no barrier time below 2^63 ns");
    }
    f->barrier.t = t;
    lineno = 3;
    while (fgets(line, sizeof(line), in)) {
        uint32_t k;
        uint64_t nt, syncs, points;
        int end = 0;
        lineno++;
        if (sscanf(line, "node %" SCNu32 " t=%" SCNu64 " syncs=%" SCNu64 " sync_points=%"
                   SCNu64 "\n%n", &k, &nt, &syncs, &points, &end) != 4 || !end ||
            line[end] || k >= f->nnodes || f->nodes[k].kind != NODE_VM || seen[k] ||
            nt < t || nt >= TIME_LIMIT) {
            refuse(path, lineno, "not a line 'node K t=NS syncs=C sync_points=C' for a "
                   "VM node not named before, at or after the barrier");
        }
        struct node *n = &f->nodes[k];
        seen[k] = true;
        n->t = nt;
        n->promise = nt;
        n->syncs = syncs;
        n->sync_points = points;
    }
    fclose(in);
    for (uint32_t k = 0; k < f->nnodes; k++) {
        if (f->nodes[k].kind == NODE_VM && !seen[k]) {
            refuse(path, lineno, "a VM node of this cluster is missing");
        }
    }
    free(seen);
    f->barrier.done = true;
    fabric_log("started at the boot barrier, %" PRIu64 " ns, from %s", t, path);
}
