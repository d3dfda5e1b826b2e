/*
 * retrolink link port: a device's connection to the fabric (docs/fabric.md).
 *
 * The port keeps this QEMU's virtual clock in conservative lock-step with the
 * other nodes: a QEMU_CLOCK_VIRTUAL timer stops the clock at each grant,
 * reports the time and the device's promise, and blocks (holding the BQL)
 * until the fabric grants more. Frames for this node are handed to the device
 * ahead of time, with their exact arrival time; the device schedules its own
 * handling of them. Everything runs in the vCPU thread, so times are exact.
 */
#ifndef RL_LINK_H
#define RL_LINK_H

#include "rl-wire.h"

typedef struct RlLink RlLink;

typedef struct RlLinkOps {
    /*
     * A frame will arrive at arrival_ns (>= now): schedule its handling.
     * seq is the fabric's delivery number: order same-time arrivals by it.
     */
    void (*frame)(void *opaque, uint64_t arrival_ns, uint64_t seq, uint32_t src,
                  uint32_t flags, const uint8_t *data, uint32_t len);
    /* Peer's link went up or down at at_ns (>= now). */
    void (*link)(void *opaque, uint64_t at_ns, uint32_t peer, bool up);
    /*
     * The earliest ready time of any frame the device could still send if no
     * further frame arrived, given that the guest may next act at guest_ns
     * (now if it is running, its next timer if it is halted, RL_TIME_NEVER if
     * it has none). Must be >= now_ns; RL_TIME_NEVER if nothing could be sent.
     */
    uint64_t (*promise)(void *opaque, uint64_t now_ns, uint64_t guest_ns);
} RlLinkOps;

/*
 * Connect to the fabric at socket_path as node, say HELLO and wait (bounded)
 * for WELCOME, which comes once every node of the cluster has connected.
 * reaction_ns: least delay from a frame arriving here to a frame sent because
 * of it. Returns NULL with errp set on failure.
 */
RlLink *rl_link_connect(const char *socket_path, uint32_t node, const char *name,
                        uint64_t reaction_ns, const RlLinkOps *ops, void *opaque,
                        Error **errp);

/* Hand the fabric a frame that is ready for the wire at ready_ns (>= now). */
void rl_link_send(RlLink *link, uint64_t ready_ns, uint32_t dst, uint32_t flags,
                  const void *data, uint32_t len);

/* Number of nodes in the cluster (ids 0 .. n-1), from WELCOME. */
uint32_t rl_link_nodes(RlLink *link);

/* True while connected to the fabric. */
bool rl_link_is_up(RlLink *link);

/* Frames whose ready time had to be moved to a promise (see docs/fabric.md). */
uint64_t rl_link_causality_violations(RlLink *link);

/* Say BYE and disconnect. */
void rl_link_close(RlLink *link);

#endif /* RL_LINK_H */
