/*
 * retrolink link port: a device's connection to the fabric (docs/fabric.md).
 *
 * One QEMU is one node with one connection to the fabric and one lock-step
 * clock, whatever its boards. Each board (or NIC, through the retrolink netdev)
 * attaches a *port*: its network, its protocol, and its frame/link/promise ops.
 * The connection keeps this QEMU's virtual clock in conservative lock-step with
 * the other nodes: one QEMU_CLOCK_VIRTUAL timer stops the clock at each grant,
 * reports the time and the node's promise (the least over its ports), and
 * blocks (holding the BQL) until the fabric grants more. Frames for this node
 * are handed to the port of their network ahead of time, with their exact
 * arrival time; the device schedules its own handling of them. Everything runs
 * in the vCPU thread, so times are exact.
 *
 * Devices realize one after another, and the fabric welcomes nobody before
 * every node has connected, so attaching never blocks: the connection says
 * HELLO and one ATTACH per port, and waits for WELCOME, once, when the machine
 * is ready (a machine-init-done notifier). Ports cannot be added after that.
 */
#ifndef RL_LINK_H
#define RL_LINK_H

#include "retrolink/wire.h"

typedef struct RlPort RlPort;

typedef struct RlPortOps {
    /*
     * The cluster started: node ids are 0 .. nodes - 1, every peer is up. Called
     * once, when the machine is ready, before the guest runs.
     */
    void (*welcome)(void *opaque, uint32_t nodes);
    /*
     * A frame will arrive at arrival_ns (>= now): schedule its handling.
     * seq is the fabric's delivery number: order same-time arrivals by it.
     */
    void (*frame)(void *opaque, uint64_t arrival_ns, uint64_t seq, uint32_t src,
                  uint32_t flags, const uint8_t *data, uint32_t len);
    /*
     * Only on a network that sends notices (rl_port_notices; NULL elsewhere): the
     * network has taken the port's earlier frame, and from at_ns (>= now) the port may
     * hand it the next; one per frame sent. seq orders it among same-time arrivals.
     */
    void (*notice)(void *opaque, uint64_t at_ns, uint64_t seq);
    /* A peer on this port's network went up or down at at_ns (>= now). */
    void (*link)(void *opaque, uint64_t at_ns, uint32_t peer, bool up);
    /*
     * The earliest ready time of any frame the device could still send if no
     * further frame arrived, given that the guest may next act at guest_ns
     * (now if it is running, its next timer if it is halted, RL_TIME_NEVER if
     * it has none). Must be >= now_ns; RL_TIME_NEVER if nothing could be sent.
     */
    uint64_t (*promise)(void *opaque, uint64_t now_ns, uint64_t guest_ns);
    /*
     * Optional: the least time from a guest action to the ready time of a frame it
     * makes the port send. With it, the node's peers may follow its live clock between
     * sync points (docs/fabric.md, "Live time"), provided every frame the port will
     * still send comes from a guest action from now on, is pending (below), or answers
     * a frame that arrives (reaction_ns). Without it, they wait for its sync points.
     */
    uint64_t (*lead)(void *opaque);
    /*
     * Optional, with lead: the port's pending floor, the earliest ready time of any
     * frame it has committed (a send the guest started, a frame inside the board) but
     * not yet handed to rl_port_send; RL_TIME_NEVER if none (and without this op: a
     * port that hands every frame over during the action that causes it). The port
     * calls rl_port_pending_changed whenever that may have changed.
     */
    uint64_t (*pending)(void *opaque, uint64_t now_ns);
} RlPortOps;

/*
 * Attach a port on network net (protocol: enum rl_protocol) to this node's
 * connection to the fabric at socket_path, connecting on the first port.
 * Every port of a QEMU must name the same socket and node, and each network
 * once. reaction_ns: least delay from a frame arriving here to a frame this
 * port sends because of it. Returns NULL with errp set on failure.
 */
RlPort *rl_port_attach(const char *socket_path, uint32_t node, uint32_t net,
                       uint32_t protocol, const char *name, uint64_t reaction_ns,
                       const RlPortOps *ops, void *opaque, Error **errp);

/* Hand the fabric a frame that is ready for the wire at ready_ns (>= now). */
void rl_port_send(RlPort *port, uint64_t ready_ns, uint32_t dst, uint32_t flags,
                  const void *data, uint32_t len);

/*
 * The port's pending sends changed (RlPortOps.pending): publish the node's pending
 * floor for its live clock. Call it before the vCPU goes on (within the access that
 * commits a send, the event that hands a frame over or schedules the next).
 */
void rl_port_pending_changed(RlPort *port);

/*
 * True if the port's network sends a notice for each frame it is handed (a hub,
 * docs/fabric.md): its device hands over a frame only once the one before has its
 * notice. Known from welcome on.
 */
bool rl_port_notices(RlPort *port);
/*
 * Wait in the vCPU thread, inside a device access (a non-transparent bridge's load, whose
 * data is in a peer's QEMU), until done(opaque): the node's clock stands still at now,
 * the vCPU being held. Each round reports a sync point with the node's promise (the
 * ports' promise ops: the device knows the access holds the guest), takes the fabric's
 * grant, reading and dispatching its DELIVERs, and calls progress(opaque, grant): no
 * frame can arrive before the grant any more, so the device runs its own events before
 * it (it must run them all, unless done) and raises its promise. The first round's sync
 * is at now, each later one at the last grant - 1 (rl_port_reached), which the node has
 * reached by then: the caller holds the vCPU past that (its bus) whatever the outcome.
 * Grants and sync times follow the lock-step's rules (its promise never below what the
 * node has sent). False if the link is lost, QEMU is quitting, the node is at
 * its boot barrier, a grant of never says nothing can come any more, or no grant has
 * moved for 30 s of host time (a peer that does not run: held at its boot barrier, which
 * this node has not reached; said on stderr): the access then fails.
 */
bool rl_port_wait(RlPort *port, bool (*done)(void *opaque),
                  void (*progress)(void *opaque, uint64_t grant), void *opaque);
/* How far the node's waits have run its events (0 before any): see rl_port_wait. */
uint64_t rl_port_reached(RlPort *port);

/* True while the node is connected to the fabric. */
bool rl_port_is_up(RlPort *port);

/*
 * Frames whose ready time had to be moved to a promise, and frames delivered after
 * their arrival time (see docs/fabric.md, "Live time"): 0 unless the guest was woken
 * from outside the model.
 */
uint64_t rl_port_causality_violations(RlPort *port);

/*
 * The boot barrier (docs/snapshots.md; the retrolink-barrier device): the guest has
 * booted. The node stops at once and is held, sending nothing, until every node has
 * arrived; then released(opaque, t) says the barrier's time t, and the node runs to
 * t, where it stops for a snapshot if the fabric asks for one. False if this QEMU has
 * no fabric connection (no barrier).
 */
bool rl_link_barrier_arrive(void (*released)(void *opaque, uint64_t t), void *opaque);

/* Detach the port; the last one says BYE and disconnects. */
void rl_port_close(RlPort *port);

#endif /* RL_LINK_H */
