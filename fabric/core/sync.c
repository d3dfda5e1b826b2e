/*
 * The grant computation of docs/fabric.md: for every node the earliest time
 * it could put a new frame on the wire (E), and the earliest time a frame not
 * yet delivered to it could arrive (A), which is its grant.
 *
 *   E_k = min(P_k, D_k + R_k, A_k + R_k)
 *   A_k = min over the networks N that k is a station of:
 *           min(min over stations j != k of N of E_j + L_N, F_N)
 *
 * P: the node's promise; D: the earliest arrival already delivered to it that
 * its clock has not reached; R: its reaction time; L_N: network N's least
 * latency; F_N: the earliest arrival on N a pending event could cause (each
 * event's time plus L_N, or less for a topology event nearer the arrival, such
 * as a frame at a switch); bounding by the event itself could stop every node
 * at that instant. E is per node, not per network: a node's promise and
 * reaction cover all its ports (a frame arriving on one network may make the
 * guest send on another). A node on no network has A = never.
 * A shortest-path fixed point: E only decreases, so at most n rounds. The
 * networks, least latencies and reaction times are in the lock-step file's static
 * part (lockstep_start), so that the nodes' own computation reads the same ones; the
 * fabric reads its own copy of it (f->ls_static), never the file.
 */
#include <stdlib.h>

#include "fabric.h"

void sync_compute(struct fabric *f, uint64_t *e, uint64_t *a)
{
    topology_earliest_caused_arrivals(f, f->caused);
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        f->relaxed[k] = n->kind == NODE_VM && node_counts(n);
        e[k] = node_floor(n);
    }
    /* the nodes compute their own grants with the same function (lockstep.h) */
    rl_ls_grants(&f->ls_static, f->relaxed, f->caused, e, a);
}
