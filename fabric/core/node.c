/*
 * A node's floors for the grant computation (sync.c, docs/fabric.md "The
 * synchronisation rule"): apart from sync.c so that what reads only a node's state
 * (lockstep.c, and the lock-step file's fuzz target) links without the topologies.
 */
#include "fabric.h"

uint64_t node_arrival_floor(const struct node *n)
{
    return sat_add(pa_min(&n->arrivals), n->reaction);
}

uint64_t node_send_floor(const struct node *n)
{
    return min64(n->promise, node_arrival_floor(n));
}

bool node_counts(const struct node *n)
{
    return n->kind == NODE_SYNTHETIC ? n->syn_left > 0 && !n->syn_deferred : n->alive;
}

uint64_t node_floor(const struct node *n)
{
    if (!node_counts(n)) {
        return NEVER;
    }
    return n->kind == NODE_SYNTHETIC ? n->syn_next : node_send_floor(n);
}
