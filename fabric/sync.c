/*
 * The grant computation of docs/fabric.md: for every node the earliest time
 * it could put a new frame on the wire (E), and the earliest time a frame not
 * yet delivered to it could arrive (A), which is its grant.
 *
 *   E_k = min(P_k, D_k + R_k, A_k + R_k)
 *   A_k = min(min over j != k of E_j + L, F)
 *
 * P: the node's promise; D: the earliest arrival already delivered to it that
 * its clock has not reached; R: its reaction time; L: the topology's least
 * latency; F: the earliest arrival a pending event could cause (each event's
 * time plus L, or less for a topology event nearer the arrival, such as a
 * frame at a switch); bounding by the event itself could stop every node at
 * that instant.
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
    uint64_t L = f->topo->min_latency(f);
    uint64_t F = topology_earliest_caused_arrival(f);

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
        /* the two smallest E, so that "min over j != k" is O(1) */
        uint64_t m1 = NEVER, m2 = NEVER;
        uint32_t arg1 = UINT32_MAX;
        for (uint32_t k = 0; k < f->nnodes; k++) {
            if (e[k] < m1) {
                m2 = m1;
                m1 = e[k];
                arg1 = k;
            } else if (e[k] < m2) {
                m2 = e[k];
            }
        }
        bool changed = false;
        for (uint32_t k = 0; k < f->nnodes; k++) {
            uint64_t others = k == arg1 ? m2 : m1;
            a[k] = min64(sat_add(others, L), F);
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
