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
 * A shortest-path fixed point: E only decreases, so at most n rounds.
 */
#include <stdlib.h>

#include "fabric.h"

uint64_t node_send_floor(const struct node *n)
{
    return min64(n->promise, sat_add(pa_min(&n->arrivals), n->reaction));
}

static bool counts(const struct node *n)
{
    return n->kind == NODE_SYNTHETIC ? n->syn_left > 0 : n->alive;
}

void sync_compute(struct fabric *f, uint64_t *e, uint64_t *a)
{
    uint64_t L[RL_MAX_NETWORKS];
    uint64_t *F = f->caused;

    topology_earliest_caused_arrivals(f, F);
    for (uint32_t i = 0; i < f->nnets; i++) {
        L[i] = f->nets[i].topo->min_latency(&f->nets[i]);
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        if (!counts(n)) {
            e[k] = NEVER;
        } else if (n->kind == NODE_SYNTHETIC) {
            e[k] = n->syn_next;
        } else {
            e[k] = node_send_floor(n);
        }
    }
    for (uint32_t round = 0; round <= f->nnodes; round++) {
        for (uint32_t k = 0; k < f->nnodes; k++) {
            a[k] = NEVER;
        }
        for (uint32_t i = 0; i < f->nnets; i++) {
            const struct network *net = &f->nets[i];
            /* the two smallest E on it, so that "min over j != k" is O(1) */
            uint64_t m1 = NEVER, m2 = NEVER;
            uint32_t arg1 = UINT32_MAX;
            for (uint32_t s = 0; s < net->n; s++) {
                uint64_t ej = e[net->station_node[s]];
                if (ej < m1) {
                    m2 = m1;
                    m1 = ej;
                    arg1 = s;
                } else if (ej < m2) {
                    m2 = ej;
                }
            }
            for (uint32_t s = 0; s < net->n; s++) {
                uint64_t others = s == arg1 ? m2 : m1;
                uint32_t k = net->station_node[s];
                a[k] = min64(a[k], min64(sat_add(others, L[i]), F[i]));
            }
        }
        bool changed = false;
        for (uint32_t k = 0; k < f->nnodes; k++) {
            struct node *n = &f->nodes[k];
            if (n->kind == NODE_VM && counts(n)) {
                uint64_t ek = min64(e[k], sat_add(a[k], n->reaction));
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
