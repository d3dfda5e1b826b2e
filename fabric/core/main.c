/*
 * retrolink-fabric: joins the nodes' devices, carries their frames through a
 * timed topology and grants each node how far its virtual clock may run.
 * Usage: retrolink-fabric CONFIG_FILE      (docs/fabric.md)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "fabric.h"
#include "proto.h"
#include "shard.h"
#include "stats.h"

#define MAX_PENDING 64
#define STR_(x) #x
#define STR(x) STR_(x)
#define MSG_MAX (sizeof(struct rl_frame) + RL_MAX_PAYLOAD)

static volatile sig_atomic_t stop_requested;
static uint8_t msgbuf[MSG_MAX + 1];


static void node_gone(struct fabric *f, struct node *n, const char *why);
static bool all_vm_nodes_gone(struct fabric *f);
static void handle_attach(struct fabric *f, struct node *n);

void fabric_send(struct fabric *f, struct node *n, const void *msg, size_t len)
{
    if (n->fd < 0) {
        return;
    }
    ssize_t r;
    do {
        r = send(n->fd, msg, len, MSG_NOSIGNAL);
    } while (r < 0 && errno == EINTR);
    if (r != (ssize_t)len) {
        node_gone(f, n, r < 0 ? strerror(errno) : "short write");
        return;
    }
    n->msgs_out++;      /* the node reads this many before it trusts the lock-step file */
}

/* The trace names nodes, not stations (and the network when there are several). */
void fabric_trace(struct network *net, uint64_t t, const char *what, const struct frame *fr)
{
    struct fabric *f = net->f;

    if (f->trace) {
        uint32_t dst = fr->dst == RL_NODE_BROADCAST ? RL_NODE_BROADCAST
                       : fr->dst == STATION_NONE ? fr->dst_node : net->station_node[fr->dst];
        fprintf(f->trace, "%llu %s src=%u dst=%u len=%u seq=%llu", (unsigned long long)t,
                what, net->station_node[fr->src], dst, fr->len,
                (unsigned long long)fr->sender_seq);
        fprintf(f->trace, f->nnets > 1 ? " net=%u\n" : "\n", net->id);
    }
}

void fabric_schedule(struct network *net, uint64_t time, int topo_kind, void *ptr, uint64_t arg)
{
    struct fabric *f = net->f;
    struct event ev = { .time = time, .kind = EV_TOPO, .node = net->id, .seq = f->event_seq++,
                        .net = net, .topo_kind = topo_kind, .ptr = ptr, .arg = arg };
    eq_push(&f->queue, &ev);
}

/* A frame leaves the fabric: its sender no longer has it in the fabric's hands. */
static void frame_done(struct fabric *f, struct frame *fr)
{
    struct node *src = &f->nodes[fr->net->station_node[fr->src]];
    src->held_frames--;
    src->held_bytes -= fr->len;
    free(fr->data);
    free(fr);
}

/* Arrivals that node n's clock has reached (or all, when n left) are no longer
 * in flight for their senders. */
static void arrivals_reached(struct fabric *f, struct node *n, uint64_t t)
{
    struct arrival a;
    while (pa_pop_before(&n->arrivals, t, &a)) {
        f->nodes[a.src].ahead--;
    }
    while (pa_pop_before(&n->holding_notices, t, &a)) {
        f->nodes[a.src].ahead--;
    }
}

static const char *const drop_trace_name[DROP_REASONS] = {
    [DROP_DEST_DOWN] = "drop:destination_down",
    [DROP_UNKNOWN_DEST] = "drop:unknown_destination",
    [DROP_OVERSIZE] = "drop:oversize",
    [DROP_BROADCAST_UNSUPPORTED] = "drop:broadcast_unsupported",
    [DROP_EXCESS_COLLISIONS] = "drop:excess_collisions",
    [DROP_QUEUE_FULL] = "drop:queue_full",
};

void fabric_drop(struct network *net, struct frame *fr, enum drop_reason why)
{
    struct fabric *f = net->f;

    if (!f->drop_logged[why]) {
        fabric_log("dropping frames: %s (first: node %u -> %u on network %u (%s), %u bytes); "
                   "counted in stats", drop_reason_name[why], net->station_node[fr->src],
                   fr->dst_node, net->id, net->name, fr->len);
        f->drop_logged[why] = true;
    }
    f->drops[why]++;
    fabric_trace(net, fr->ready, drop_trace_name[why], fr);
    frame_done(f, fr);
}

/* A frame, or a notice (a frame of its own, no payload), reaches its node. */
static void deliver(struct network *net, struct frame *fr, uint64_t arrival, bool notice)
{
    struct fabric *f = net->f;
    struct node *d = &f->nodes[net->station_node[fr->dst]];
    uint32_t src = net->station_node[fr->src];

    fabric_trace(net, arrival, notice ? "notice" : "arrive", fr);
    if (d->kind == NODE_SYNTHETIC) {
        d->frames_received += !notice;    /* a synthetic node is a sink */
        frame_done(f, fr);
        return;
    }
    /* another shard's node already past the arrival had it from its own shard (which
     * processed it first), even if it has left since; that shard's promises count
     * what it did about it */
    bool reached = d->remote && arrival < d->t;
    if (!d->alive && !reached) {
        fabric_drop(net, fr, DROP_DEST_DOWN);
        return;
    }
    if (arrival < d->t && !d->remote) {
        /* only if a node woke from outside the model (interactive use); another
         * shard's node is its shard's to count */
        f->causality_violations++;
        arrival = d->grant;
    }
    size_t len = sizeof(struct rl_frame) + fr->len;
    struct rl_frame *m = (void *)msgbuf;
    memset(m, 0, sizeof(*m));
    rl_msg_hdr_init(&m->h, RL_MSG_DELIVER, len, d->id, arrival);
    m->src = src;
    m->dst = fr->broadcast ? RL_NODE_BROADCAST : d->id;
    m->len = fr->len;
    m->flags = fr->flags;
    m->seq = f->deliver_seq++;
    m->net = net->id;
    memcpy(msgbuf + sizeof(*m), fr->data, fr->len);
    if (!reached) {
        pa_push(notice && net->topo->notices_hold ? &d->holding_notices : &d->arrivals,
                arrival, src);
        f->nodes[src].ahead++;
    }
    d->frames_received += !notice;
    d->bytes_received += fr->len;
    frame_done(f, fr);
    fabric_send(f, d, msgbuf, len);
}

void fabric_deliver(struct network *net, struct frame *fr, uint64_t arrival)
{
    deliver(net, fr, arrival, false);
}

void fabric_notice(struct network *net, uint32_t station, uint64_t arrival)
{
    struct frame *fr = xcalloc(1, sizeof(*fr));
    struct node *n = &net->f->nodes[net->station_node[station]];

    *fr = (struct frame){ .net = net, .src = station, .dst = station, .dst_node = n->id,
                          .ready = arrival, .data = xmalloc(1) };
    n->held_frames++;           /* as any frame of its, until delivered */
    deliver(net, fr, arrival, true);
}

struct frame *fabric_copy(struct network *net, const struct frame *fr, uint32_t dst)
{
    struct frame *c = xmalloc(sizeof(*c));
    struct node *src = &net->f->nodes[net->station_node[fr->src]];

    *c = *fr;
    c->dst = dst;
    c->dst_node = net->station_node[dst];
    c->broadcast = true;
    c->data = xmalloc(fr->len ? fr->len : 1);
    memcpy(c->data, fr->data, fr->len);
    src->held_frames++;
    src->held_bytes += fr->len;
    return c;
}

void fabric_discard(struct network *net, struct frame *fr)
{
    frame_done(net->f, fr);
}

void fabric_deliver_all(struct network *net, struct frame *fr, uint64_t arrival)
{
    for (uint32_t d = 0; d < net->n; d++) {
        if (d != fr->src) {
            fabric_deliver(net, fabric_copy(net, fr, d), arrival);
        }
    }
    fabric_discard(net, fr);
}

static void send_error(struct fabric *f, struct node *n, const char *text)
{
    struct rl_error e;
    memset(&e, 0, sizeof(e));
    rl_msg_hdr_init(&e.h, RL_MSG_ERROR, sizeof(e), n->id, n->t);
    snprintf(e.text, sizeof(e.text), "%s", text);
    send(n->fd, &e, sizeof(e), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/*
 * Closing a Unix socket with unread messages makes the peer's next recv fail with
 * ECONNRESET before it can read the ERROR we just sent; read what is queued first.
 */
static void drain_input(int fd)
{
    static char sink[1];   /* SEQPACKET: a short read discards the rest */

    for (int i = 0; i < 1 << 16; i++) {
        if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0) {
            return;
        }
    }
}

/* A node left (BYE), died (EOF) or was disconnected for a protocol error. */
static void node_gone(struct fabric *f, struct node *n, const char *why)
{
    if (!n->alive) {
        return;
    }
    char ignored[1];
    lockstep_refresh(f, n, ignored, sizeof(ignored));   /* leaving anyway */
    if (why) {
        fabric_log("node %u (%s): %s; disconnected", n->id, n->name, why);
    } else {
        fabric_log("node %u (%s) left at %llu ns", n->id, n->name, (unsigned long long)n->t);
    }
    n->alive = false;
    n->gone = true;
    n->waiting = false;
    arrivals_reached(f, n, NEVER);
    if (n->fd >= 0) {
        if (why) {
            drain_input(n->fd);
        }
        close(n->fd);
        n->fd = -1;
    }
    /* tell the others on each of its networks, at a time none of them has passed:
     * its last time plus that network's L */
    for (uint32_t i = 0; i < f->nnets; i++) {
        struct network *net = &f->nets[i];
        if (net->node_station[n->id] == STATION_NONE) {
            continue;
        }
        uint64_t at = sat_add(n->t, net->topo->min_latency(net));
        for (uint32_t s = 0; s < net->n; s++) {
            struct node *o = &f->nodes[net->station_node[s]];
            if (o->alive && o->kind == NODE_VM) {
                /* the grant it runs to may be its own (a bad slot: cut off later) */
                lockstep_refresh(f, o, ignored, sizeof(ignored));
                struct rl_link_status m = { .peer = n->id, .up = 0, .net = net->id };
                rl_msg_hdr_init(&m.h, RL_MSG_LINK, sizeof(m), o->id, max64(at, o->grant));
                fabric_send(f, o, &m, sizeof(m));
            }
        }
    }
}

static void protocol_error(struct fabric *f, struct node *n, const char *why)
{
    if (n->alive) {
        stall_cut_off(f, n, why);   /* first: the status says so when the node hears it */
    }
    send_error(f, n, why);
    node_gone(f, n, why);
}

/* Adopt what n published in the lock-step file; a slot that breaks the protocol cuts
 * it off like a bad message. False if it was. */
static bool refresh(struct fabric *f, struct node *n)
{
    char why[RL_ERROR_TEXT_LEN];

    if (lockstep_refresh(f, n, why, sizeof(why))) {
        return true;
    }
    protocol_error(f, n, why);
    return false;
}

static void handle_frame(struct fabric *f, struct node *n, size_t len)
{
    const struct rl_frame *m = (const void *)msgbuf;
    uint64_t ready = m->h.time_ns;

    n->frames_in++;

    const char *early = barrier_refuses_frame(f, n);
    if (early) {
        protocol_error(f, n, early);
        return;
    }
    if (m->dst == n->id) {
        protocol_error(f, n, "frame addressed to itself");
        return;
    }
    if (m->net >= f->nnets || !(n->attached & (1u << m->net))) {
        char why[96];
        snprintf(why, sizeof(why), "FRAME on network %u, which this node did not attach",
                 m->net);
        protocol_error(f, n, why);
        return;
    }
    if (ready < n->last_ready[m->net]) {
        protocol_error(f, n, "frame ready time went backwards (on its network)");
        return;
    }
    if (n->held_frames + n->ahead >= MAX_IN_FLIGHT_FRAMES) {
        protocol_error(f, n, "more than " STR(MAX_IN_FLIGHT_FRAMES) " frames in flight "
                       "(sent, not yet reached by their receivers)");
        return;
    }
    if (n->held_bytes + m->len > (uint64_t)MAX_IN_FLIGHT_MIB << 20) {
        protocol_error(f, n, "more than " STR(MAX_IN_FLIGHT_MIB) " MiB in flight "
                       "(sent, not yet delivered)");
        return;
    }
    n->last_ready[m->net] = ready;
    uint64_t floor = max64(node_send_floor(n), f->horizon);
    if (ready < floor) {
        f->causality_violations++;
        /* the floor may be a promise of "none", or an arrival plus a reaction
         * time near the limit: the latencies still to add must not wrap */
        ready = min64(floor, TIME_LIMIT - 1);
    }
    (void)len;
    fabric_inject(f, n, m->net, m->dst, m->len, m->flags, m->seq, ready,
                  msgbuf + sizeof(*m));
}

void fabric_inject(struct fabric *f, struct node *n, uint32_t netid, uint32_t dst_node,
                   uint32_t len, uint32_t flags, uint64_t seq, uint64_t ready,
                   const uint8_t *data)
{
    struct network *net = &f->nets[netid];
    struct frame *fr = xcalloc(1, sizeof(*fr));
    fr->net = net;
    fr->src = net->node_station[n->id];
    fr->dst_node = dst_node;
    fr->dst = dst_node == RL_NODE_BROADCAST ? RL_NODE_BROADCAST
              : dst_node < f->nnodes ? net->node_station[dst_node] : STATION_NONE;
    fr->len = len;
    fr->flags = flags;
    fr->sender_seq = seq;
    fr->ready = ready;
    fr->data = xmalloc(len ? len : 1);
    memcpy(fr->data, data, len);
    n->frames_sent++;
    n->bytes_sent += len;
    n->held_frames++;
    n->held_bytes += len;
    if (!n->remote) {
        shard_sent(f, fr);
    }
    struct event ev = { .time = ready, .kind = EV_INJECT, .node = n->id, .seq = seq,
                        .net = net, .ptr = fr };
    eq_push(&f->queue, &ev);
}

void fabric_node_left(struct fabric *f, struct node *n)
{
    node_gone(f, n, NULL);
}

/* A node's clock is between its last report and its grant (which it may pass by
 * up to its granularity - 1); else it is cut off. */
static bool time_within_grant(struct fabric *f, struct node *n, const char *what, uint64_t t)
{
    if (t >= n->t && t <= sat_add(n->grant, n->granularity - 1)) {
        return true;
    }
    char why[128];
    snprintf(why, sizeof(why), "%s time %llu outside [%llu, grant %llu]", what,
             (unsigned long long)t, (unsigned long long)n->t, (unsigned long long)n->grant);
    protocol_error(f, n, why);
    return false;
}

static void handle_message(struct fabric *f, struct node *n, size_t len)
{
    char why[256];
    const struct rl_msg_hdr *h = (const void *)msgbuf;

    if (proto_check(msgbuf, len, n->id, why, sizeof(why))) {
        protocol_error(f, n, why);
        return;
    }
    if (!n->ready) {
        if (h->type == RL_MSG_ATTACH) {
            handle_attach(f, n);
        } else {
            protocol_error(f, n, "expected ATTACH (HELLO announced more ports)");
        }
        return;
    }
    switch (h->type) {
    case RL_MSG_HELLO:
        protocol_error(f, n, "second HELLO");
        return;
    case RL_MSG_ATTACH:
        protocol_error(f, n, "ATTACH after the ports HELLO announced");
        return;
    case RL_MSG_SYNC: {
        const struct rl_sync *s = (const void *)msgbuf;
        /* it may have granted itself past our last GRANT */
        if (!refresh(f, n) || !time_within_grant(f, n, "SYNC", h->time_ns)) {
            return;
        }
        if (s->promise_ns < h->time_ns) {
            protocol_error(f, n, "promise earlier than the node's own time");
            return;
        }
        n->t = h->time_ns;
        n->syncs++;
        n->last_sync_wall = wall_now();
        n->promise = s->promise_ns;
        n->waiting = true;
        arrivals_reached(f, n, n->t);
        return;
    }
    case RL_MSG_FRAME:
        handle_frame(f, n, len);
        return;
    case RL_MSG_BARRIER: {
        if (!refresh(f, n) || !time_within_grant(f, n, "BARRIER", h->time_ns)) {
            return;
        }
        const char *wrong = barrier_message(f, n, (const void *)msgbuf);
        if (wrong) {
            protocol_error(f, n, wrong);
        } else {
            arrivals_reached(f, n, n->t);
        }
        return;
    }
    case RL_MSG_PROGRESS:
        /* it moved on through the lock-step file while another node waits on the
         * socket: adopt its slot (advance() follows) */
        refresh(f, n);
        return;
    case RL_MSG_BYE:
        if (!refresh(f, n) || !time_within_grant(f, n, "BYE", h->time_ns)) {
            return;
        }
        n->t = h->time_ns;
        node_gone(f, n, NULL);
        return;
    }
}

static void synthetic_emit(struct fabric *f, struct node *n, uint64_t now)
{
    struct network *net = &f->nets[n->syn_net];
    struct frame *fr = xcalloc(1, sizeof(*fr));
    fr->net = net;
    fr->src = net->node_station[n->id];
    fr->dst = net->node_station[n->syn_dst];
    fr->dst_node = n->syn_dst;
    fr->len = n->syn_size;
    fr->sender_seq = n->frames_sent++;
    fr->ready = now;
    fr->data = xcalloc(1, n->syn_size ? n->syn_size : 1);
    n->bytes_sent += n->syn_size;
    n->held_frames++;
    n->held_bytes += n->syn_size;
    n->syn_left--;
    n->syn_next = n->syn_left ? sat_add(now, n->syn_interval) : NEVER;
    if (n->syn_left) {
        struct event ev = { .time = n->syn_next, .kind = EV_SYNTH, .node = n->id };
        eq_push(&f->queue, &ev);
    }
    fabric_trace(net, now, "ready", fr);
    net->topo->inject(net, fr, now);
}

/*
 * Queue each synthetic node's first frame. With a boot barrier, only once every node
 * has passed it (barrier.c), so that the boot is quiet: a station whose start_ns is
 * earlier starts at the barrier's time, in a cold run and from a snapshot alike.
 */
void synthetic_start(struct fabric *f)
{
    uint64_t not_before = f->barrier.on ? f->barrier.t : 0;

    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        n->syn_deferred = false;
        if (n->kind == NODE_SYNTHETIC && n->syn_left) {
            n->syn_next = max64(n->syn_next, not_before);
            struct event ev = { .time = n->syn_next, .kind = EV_SYNTH, .node = n->id };
            eq_push(&f->queue, &ev);
        }
    }
}

static void run_event(struct fabric *f, struct event *ev)
{
    switch (ev->kind) {
    case EV_INJECT: {
        struct frame *fr = ev->ptr;
        struct network *net = fr->net;
        uint32_t src = fr->src;
        fabric_trace(net, ev->time, "ready", fr);
        if (fr->dst == RL_NODE_BROADCAST && !net->topo->broadcast) {
            fabric_drop(net, fr, DROP_BROADCAST_UNSUPPORTED);
        } else if (fr->dst == STATION_NONE) {
            /* not a node, or a node that is not on this network */
            fabric_drop(net, fr, DROP_UNKNOWN_DEST);
        } else {
            net->topo->inject(net, fr, ev->time);
            break;
        }
        if (net->topo->notices) {
            /* the topology never saw it: the sender may go on */
            fabric_notice(net, src, ev->time + net->topo->min_latency(net));
        }
        break;
    }
    case EV_TOPO:
        ev->net->topo->event(ev->net, ev->topo_kind, ev->time, ev->ptr, ev->arg);
        break;
    case EV_SYNTH:
        synthetic_emit(f, &f->nodes[ev->node], ev->time);
        break;
    }
}

/* A node overshoots a grant by up to its granularity - 1: leave room for it. */
static uint64_t node_grant(const struct node *n, uint64_t bound)
{
    return bound == NEVER ? NEVER : bound - min64(bound, n->granularity - 1);
}

/* Process every event that no future message can precede, then grant. */
static void advance(struct fabric *f)
{
    uint64_t *e = f->e, *a = f->a;
    bool moved = false;

    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        refresh(f, n);
        if (n->moved) {
            arrivals_reached(f, n, n->t);
            n->moved = false;
            moved = true;
        }
    }
    barrier_check(f);

    for (;;) {
        sync_compute(f, e, a);
        /* synthetic nodes' emissions are themselves queued events: only VM nodes
         * can still add events earlier than the queue's head */
        uint64_t safe = NEVER;
        for (uint32_t k = 0; k < f->nnodes; k++) {
            if (f->nodes[k].kind == NODE_VM) {
                safe = min64(safe, e[k]);
            }
        }
        const struct event *next = eq_peek(&f->queue);
        if (!next || next->time >= safe) {
            break;
        }
        struct event ev;
        eq_pop(&f->queue, &ev);
        f->horizon = max64(f->horizon, ev.time);
        run_event(f, &ev);
    }
    bool granted = false;
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        uint64_t grant = barrier_cap(f, node_grant(n, a[k]));
        if (n->alive && n->waiting && grant > n->t) {
            struct rl_msg_hdr g;
            rl_msg_hdr_init(&g, RL_MSG_GRANT, sizeof(g), n->id, grant);
            n->grant = grant;
            n->waiting = false;
            granted = true;
            fabric_send(f, n, &g, sizeof(g));
        }
    }
    lockstep_publish(f);
    if (granted || moved) {
        stall_progress(f);
    }
}

/*
 * Shards: none of this shard's nodes can go further before the others say more
 * (each is gone, held at the boot barrier, or at the grant the rule gives it now),
 * or this shard was asked to stop: time to exchange (shard.c).
 */
static bool shard_blocked(struct fabric *f)
{
    if (stop_requested) {
        return true;
    }
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        if (n->kind == NODE_VM && !n->remote && n->alive && !n->held &&
            barrier_cap(f, node_grant(n, f->a[k])) > n->t) {
            return false;
        }
    }
    return true;
}

/* The run goes on: some VM node is still there (with shards: every shard agrees, at an
 * exchange), and nobody asked it to stop. */
static bool running(struct fabric *f)
{
    if (f->shard) {
        return f->started ? !f->shard->done : !stop_requested;
    }
    return !stop_requested && !(f->started && all_vm_nodes_gone(f));
}

/* With less lookahead than one instruction, no node could ever advance: refuse it,
 * at start (from the nodes' HELLOs) and in --check (from the configuration). */
static void check_lookahead(struct fabric *f)
{
    for (uint32_t i = 0; i < f->nnets; i++) {
        struct network *net = &f->nets[i];
        uint64_t lookahead = topology_least_event_latency(net);
        for (uint32_t s = 0; s < net->n; s++) {
            struct node *n = &f->nodes[net->station_node[s]];
            if (n->kind != NODE_VM || n->granularity <= lookahead) {
                continue;
            }
            char which[64] = "";
            if (f->nnets > 1) {
                snprintf(which, sizeof(which), " of network %u (%s)", net->id, net->name);
            }
            fabric_fatal(EXIT_CONFIG, "the topology%s's least latency (%llu ns, last hop) is "
                         "shorter than node %u's instruction time (%llu ns): raise the link "
                         "latency (prop_ns, overhead_bytes) or the guest CPU speed "
                         "(cluster.cpu_mips)", which, (unsigned long long)lookahead, n->id,
                         (unsigned long long)n->granularity);
        }
    }
}

static void start_cluster(struct fabric *f)
{
    uint64_t *e = f->e = xcalloc(f->nnodes, sizeof(*e));
    uint64_t *a = f->a = xcalloc(f->nnodes, sizeof(*a));
    f->caused = xcalloc(f->nnets, sizeof(*f->caused));
    f->relaxed = xcalloc(f->nnodes, sizeof(*f->relaxed));

    f->started = true;
    check_lookahead(f);
    if (f->barrier.restore_path[0]) {
        state_restore(f);
    }
    lockstep_start(f);
    if (!f->barrier.on || f->barrier.done) {
        synthetic_start(f);
    } else {
        /* they start once the nodes have passed the boot barrier (barrier_check) */
        for (uint32_t k = 0; k < f->nnodes; k++) {
            f->nodes[k].syn_deferred = f->nodes[k].kind == NODE_SYNTHETIC;
        }
    }
    sync_compute(f, e, a);
    stall_start(f);
    for (uint32_t k = 0; k < f->nnodes; k++) {
        struct node *n = &f->nodes[k];
        if (n->kind == NODE_VM && n->alive) {
            struct rl_welcome w = { .nodes = f->nnodes, .notice_nets =
                                    f->ls_static.notice_nets };
            n->grant = node_grant(n, a[k]);
            rl_msg_hdr_init(&w.h, RL_MSG_WELCOME, sizeof(w), n->id, n->grant);
            fabric_send(f, n, &w, sizeof(w));
        }
    }
    lockstep_publish(f);
    fabric_log("all %u node(s) connected; cluster started", f->nnodes);
}

static bool all_vm_nodes_ready(struct fabric *f)
{
    for (uint32_t k = 0; k < f->nnodes; k++) {
        if (f->nodes[k].kind == NODE_VM && !f->nodes[k].remote && !f->nodes[k].ready) {
            return false;
        }
    }
    return true;
}

/*
 * Before the cluster starts, a node whose ports do not match the configuration is
 * refused as a connection is: ERROR, closed, its id free again. Nobody has been told
 * anything about it yet.
 */
static void refuse_node(struct node *n, const char *why)
{
    struct rl_error e;

    fabric_log("refusing node %u (%s): %s", n->id, n->name, why);
    memset(&e, 0, sizeof(e));
    rl_msg_hdr_init(&e.h, RL_MSG_ERROR, sizeof(e), n->id, 0);
    snprintf(e.text, sizeof(e.text), "%s", why);
    send(n->fd, &e, sizeof(e), MSG_NOSIGNAL | MSG_DONTWAIT);
    drain_input(n->fd);
    close(n->fd);
    n->fd = -1;
    n->hello = n->alive = n->ready = false;
    n->attached = n->ports_seen = 0;
}

/* Every port announced is attached: the networks must be the configuration's. */
static void node_ready(struct fabric *f, struct node *n)
{
    char why[RL_ERROR_TEXT_LEN];
    uint32_t missing = n->nets & ~n->attached;

    if (missing) {
        uint32_t i = __builtin_ctz(missing);
        snprintf(why, sizeof(why), "node %u does not attach network %u (%s), which the "
                 "configuration puts it on", n->id, i, f->nets[i].name);
        refuse_node(n, why);
        return;
    }
    n->ready = true;
    if (all_vm_nodes_ready(f)) {
        if (f->shard) {
            shard_start(f);       /* the other shards' nodes are ready too */
        }
        start_cluster(f);
    }
}

/* One port: a network the configuration puts this node on, each once, with a
 * board that speaks the network's protocol. */
static void handle_attach(struct fabric *f, struct node *n)
{
    const struct rl_attach *m = (const void *)msgbuf;
    char why[RL_ERROR_TEXT_LEN];
    const struct network *net = m->net < f->nnets ? &f->nets[m->net] : NULL;

    if (!net) {
        snprintf(why, sizeof(why), "node %u attaches network %u, but the configuration has "
                 "networks 0..%u", n->id, m->net, f->nnets - 1);
    } else if (!(n->nets & (1u << m->net))) {
        snprintf(why, sizeof(why), "node %u attaches network %u (%s), which the configuration "
                 "does not put it on", n->id, m->net, net->name);
    } else if (n->attached & (1u << m->net)) {
        snprintf(why, sizeof(why), "node %u attaches network %u (%s) twice (one port per "
                 "network)", n->id, m->net, net->name);
    } else if (net->protocol != RL_PROTO_ANY && m->protocol != net->protocol) {
        snprintf(why, sizeof(why), "node %u attaches network %u (%s) with a %s port, but that "
                 "network carries %s", n->id, m->net, net->name, protocol_name(m->protocol),
                 protocol_name(net->protocol));
    } else {
        n->attached |= 1u << m->net;
        if (++n->ports_seen == n->ports) {
            node_ready(f, n);
        }
        return;
    }
    refuse_node(n, why);
}

/* The first message on a new connection must be HELLO for a free VM node id. */
static void handle_hello(struct fabric *f, int fd)
{
    char why[256] = "";
    ssize_t len = recv(fd, msgbuf, sizeof(msgbuf), MSG_TRUNC);
    const struct rl_hello *h = (const void *)msgbuf;

    if (len <= 0) {
        close(fd);
        return;
    }
    if (proto_check(msgbuf, len, -1, why, sizeof(why)) == 0 && h->h.type != RL_MSG_HELLO) {
        snprintf(why, sizeof(why), "first message is not HELLO");
    } else if (!why[0] && (h->h.node >= f->nnodes || f->nodes[h->h.node].kind != NODE_VM)) {
        snprintf(why, sizeof(why), "HELLO from node %u, which is not a VM node of this cluster",
                 h->h.node);
    } else if (!why[0] && f->nodes[h->h.node].remote) {
        snprintf(why, sizeof(why), "HELLO from node %u, which shard %u serves (this is shard "
                 "%u)", h->h.node, f->nodes[h->h.node].shard, f->shard->rank);
    } else if (!why[0] && (f->nodes[h->h.node].hello)) {
        snprintf(why, sizeof(why), "a second HELLO for node %u", h->h.node);
    } else if (!why[0] && f->started) {
        snprintf(why, sizeof(why), "the cluster has already started");
    }
    if (why[0]) {
        fabric_log("refusing a connection: %s", why);
        struct rl_error e;
        memset(&e, 0, sizeof(e));
        rl_msg_hdr_init(&e.h, RL_MSG_ERROR, sizeof(e), 0, 0);
        snprintf(e.text, sizeof(e.text), "%s", why);
        send(fd, &e, sizeof(e), MSG_NOSIGNAL | MSG_DONTWAIT);
        close(fd);
        return;
    }
    struct node *n = &f->nodes[h->h.node];
    n->fd = fd;
    n->hello = n->alive = true;
    n->t = h->h.time_ns;
    n->reaction = h->reaction_ns;
    n->granularity = h->granularity_ns ? h->granularity_ns : 1;
    n->ports = h->ports;
    n->ports_seen = 0;
    n->attached = 0;
    char name[RL_NAME_LEN + 1] = { 0 };
    memcpy(name, h->name, RL_NAME_LEN);
    fabric_log("node %u (%s) connected as %s", n->id, n->name, name);
    if (!n->ports) {
        /* a connection that attaches nothing is one port on network 0 */
        if (n->nets & ~1u) {
            snprintf(why, sizeof(why), "node %u attaches no network (HELLO with no ports: "
                     "network 0), but the configuration puts it on other networks", n->id);
            refuse_node(n, why);
            return;
        }
        n->attached = n->nets & 1u;
        node_ready(f, n);
    }
}

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int listen_on(const char *path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

    strcpy(addr.sun_path, path);
    unlink(path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 64)) {
        fabric_fatal(EXIT_RUNTIME, "cannot listen on %s: %s", path, strerror(errno));
    }
    fabric_owns(path);
    return fd;
}

static bool all_vm_nodes_gone(struct fabric *f)
{
    for (uint32_t k = 0; k < f->nnodes; k++) {
        if (f->nodes[k].kind == NODE_VM && !f->nodes[k].gone) {
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    static struct fabric f;
    char err[1024];

    /* --check: refuse a bad configuration before any node starts, and exit */
    bool check_only = argc == 3 && !strcmp(argv[1], "--check");
    if (argc != 2 && !check_only) {
        fabric_fatal(EXIT_CONFIG, "usage: retrolink-fabric [--check] CONFIG_FILE   "
                     "(format: docs/fabric.md)");
    }
    if (config_load(&f, argv[argc - 1], err, sizeof(err))) {
        fabric_fatal(EXIT_CONFIG, "%s", err);
    }
    bool any_vm = false;
    for (uint32_t k = 0; k < f.nnodes; k++) {
        any_vm |= f.nodes[k].kind == NODE_VM;
    }
    if (!any_vm) {
        fabric_fatal(EXIT_CONFIG, "no VM nodes in the configuration");
    }
    if (check_only) {
        check_lookahead(&f);
        return 0;
    }
    shard_setup(&f, &argc, &argv);
    if (f.trace_path[0] && !(f.trace = fopen(f.trace_path, "w"))) {
        fabric_fatal(EXIT_CONFIG, "cannot write trace %s: %s", f.trace_path, strerror(errno));
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    lockstep_create(&f);     /* before listening: a node maps it before its HELLO */
    int lfd = listen_on(f.socket_path);
    int pending[MAX_PENDING], npending = 0;
    struct pollfd *pfd = xcalloc(1 + MAX_PENDING + f.nnodes, sizeof(*pfd));

    while (running(&f)) {
        /* a shard whose nodes wait only looks at what came in, then exchanges */
        bool exchange = f.shard && f.started && shard_blocked(&f);
        int n = 0;
        pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
        for (int i = 0; i < npending; i++) {
            pfd[n++] = (struct pollfd){ .fd = pending[i], .events = POLLIN };
        }
        for (uint32_t k = 0; k < f.nnodes; k++) {
            pfd[n++] = (struct pollfd){ .fd = f.nodes[k].fd, .events = POLLIN };
        }
        if (poll(pfd, n, exchange ? 0 : stall_poll_ms(&f, 1000)) < 0) {
            if (errno == EINTR) {
                continue;
            }
            fabric_fatal(EXIT_RUNTIME, "poll failed: %s", strerror(errno));
        }
        if (pfd[0].revents & POLLIN) {
            int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0 && npending < MAX_PENDING) {
                pending[npending++] = c;
            } else if (c >= 0) {
                close(c);
            }
        }
        int ready[MAX_PENDING], nready = 0, keep = 0;
        for (int i = 0; i < npending; i++) {
            if (pfd[1 + i].revents) {
                ready[nready++] = pending[i];
            } else {
                pending[keep++] = pending[i];
            }
        }
        int old_npending = npending;
        npending = keep;
        for (int i = 0; i < nready; i++) {
            handle_hello(&f, ready[i]);
        }
        int base = 1 + old_npending;
        for (uint32_t k = 0; k < f.nnodes; k++) {
            struct node *nd = &f.nodes[k];
            if (nd->fd < 0 || !(pfd[base + k].revents & (POLLIN | POLLHUP | POLLERR))) {
                continue;
            }
            /* drain everything this node has sent */
            for (;;) {
                ssize_t len = recv(nd->fd, msgbuf, sizeof(msgbuf), MSG_DONTWAIT | MSG_TRUNC);
                if (len < 0 && (errno == EAGAIN || errno == EINTR)) {
                    break;
                }
                if (len <= 0) {
                    node_gone(&f, nd, len == 0 ? "disconnected without BYE"
                                               : strerror(errno));
                    break;
                }
                if ((size_t)len > MSG_MAX) {
                    protocol_error(&f, nd, "message longer than the largest frame");
                    break;
                }
                handle_message(&f, nd, len);
                if (nd->fd < 0) {
                    break;
                }
            }
        }
        if (f.started) {
            advance(&f);
            if (f.shard && shard_blocked(&f)) {
                shard_exchange(&f, stop_requested);
                advance(&f);
            }
            stall_check(&f);
        }
    }
    shard_finish(&f);
    /* a normal end: every VM node gone, or SIGTERM/SIGINT */
    if (f.trace && (ferror(f.trace) | fclose(f.trace))) {
        fabric_fatal(EXIT_RUNTIME, "cannot write trace %s", f.trace_path);
    }
    if (stats_write(&f)) {
        fabric_fatal(EXIT_RUNTIME, "cannot write stats %s: %s", f.stats_path, strerror(errno));
    }
    unlink(f.socket_path);
    unlink(f.lockstep_path);
    return EXIT_NORMAL;
}
