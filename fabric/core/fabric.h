/*
 * retrolink fabric: shared state of the process (docs/fabric.md).
 */
#ifndef FABRIC_H
#define FABRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "retrolink/lockstep.h"
#include "retrolink/wire.h"

#define NEVER RL_TIME_NEVER

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > NEVER - b ? NEVER : a + b;
}

static inline uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Time to send bytes at rate bytes/s, rounded up to a whole ns. */
static inline uint64_t bytes_ns(uint64_t bytes, uint64_t rate)
{
    return (uint64_t)(((unsigned __int128)bytes * 1000000000u + rate - 1) / rate);
}

struct network;

/* A frame inside the fabric. src and dst are station indices of its network (what the
 * topologies work with); the nodes are net->station_node[src] and [dst]. */
struct frame {
    struct network *net;
    uint32_t src, dst, len, flags;   /* dst: a station, or RL_NODE_BROADCAST until copied,
                                        or STATION_NONE (not on the network) */
    uint32_t dst_node;       /* the node the sender named (for the trace) */
    bool broadcast;          /* a copy of a broadcast for dst: its DELIVER says broadcast */
    uint64_t sender_seq;
    uint64_t ready;          /* ready at the sender's interface */
    uint64_t queued;         /* joined its current queue (topologies' bookkeeping) */
    uint8_t *data;
};

enum node_kind { NODE_VM, NODE_SYNTHETIC };

/*
 * What one node may have in flight: frames it sent that the fabric still holds
 * (queued, on a link, in a switch) or has delivered ahead of their receiver's
 * clock. A real board keeps a few (the SX board has 8 transmit slots); a node
 * beyond either bound is cut off (docs/fabric.md, "Limits").
 */
#define MAX_IN_FLIGHT_FRAMES 4096
#define MAX_IN_FLIGHT_MIB 16          /* payload bytes the fabric holds for one sender */

struct arrival {
    uint64_t t;
    uint32_t src;            /* its sender, which has it in flight until then */
};

struct pending_arrivals {    /* arrivals delivered to a node, a min-heap by time */
    struct arrival *a;
    size_t n, cap;
};

#define STATION_NONE (UINT32_MAX - 1)  /* not a station of the network (!= broadcast) */

struct node {
    uint32_t id;
    char name[RL_NAME_LEN + 1];
    enum node_kind kind;
    int fd;                  /* -1 until connected, and after it left */
    bool hello, alive, gone, waiting;
    bool ready;              /* said HELLO and attached every port it announced */
    uint32_t nets;           /* the networks the configuration puts it on (bit per id) */
    uint32_t attached;       /* the networks it attached (ATTACH, or network 0 implicitly) */
    uint32_t ports;          /* ATTACH messages it announced in HELLO */
    uint32_t ports_seen;
    uint64_t t;              /* last reported time */
    uint64_t promise;        /* no frame earlier than this, unless one arrives */
    uint64_t reaction;       /* least delay from an arrival to a frame it causes */
    uint64_t granularity;    /* it stops up to granularity - 1 ns after a grant */
    uint64_t grant;          /* last grant sent */
    uint64_t last_ready[RL_MAX_NETWORKS];   /* per network, FRAME ready times must not
                                               go backwards */
    struct pending_arrivals arrivals;
    /* notices delivered on a network whose notices only hold back (topology_ops): in
     * flight for their sender like arrivals, but no floor for the grants */
    struct pending_arrivals holding_notices;
    uint64_t held_frames, held_bytes;   /* its frames the fabric holds */
    uint64_t ahead;          /* its frames delivered, not yet reached by the receiver */
    uint64_t frames_sent, frames_received, bytes_sent, bytes_received;
    uint64_t syncs;          /* SYNC messages: the lock-step exchanges through the socket */
    bool lockstep;           /* it publishes its sync points in the lock-step file */
    bool moved;              /* its slot showed progress since the last grant round */
    uint64_t sync_points;    /* every sync point, as its slot counts them */
    uint64_t frames_in;      /* FRAME messages handled from it (the slot's "frames") */
    uint64_t msgs_out;       /* messages sent to it, WELCOME on */
    double last_sync_wall;   /* wall clock of its last SYNC (or the start), for stall reports */
    bool stall_named;        /* named on stderr in the current stall */
    bool in_status;          /* listed in the status file as holding the cluster up */
    bool held;               /* at the boot barrier, until every node is (barrier.c) */
    uint64_t held_syncs;     /* its slot's sync points when the barrier released it: one
                                no later is its held publication, promising never */
    char cut_off[160];       /* why the fabric disconnected it while its QEMU ran on (a
                                protocol error), for the status file; "" if it did not */
    /* synthetic nodes: a station of network syn_net */
    uint32_t syn_net, syn_dst, syn_size;
    uint64_t syn_interval, syn_next, syn_left;
    bool syn_deferred;       /* not started: the cluster has yet to pass its boot barrier */
    /* shards (shard.c): the shard that serves it; remote: a VM node another shard
     * serves, its clock what that shard last said */
    uint32_t shard;
    bool remote;
};

struct fabric;
struct network;

/* A topology: how frames get from their sender's interface to their receiver. It sees
 * one network's stations, 0 .. net->n - 1, never node ids. */
struct topology_ops {
    const char *name;
    /* it delivers a frame for RL_NODE_BROADCAST to every other node; without,
     * the fabric drops such frames ("broadcast unsupported") */
    bool broadcast;
    /* it sends each sender a notice (fabric_notice) for every frame it was handed, when
     * it may hand over the next: a node's own frames cause arrivals at it (lock-step) */
    bool notices;
    /* its notices only ever hold a sender back (they free room it waits for, as the
     * cpci bridge's posted-write buffer): a notice never lets a node send sooner than
     * its promise says, so it sets no arrival floor (docs/fabric.md) */
    bool notices_hold;
    /* parse "key=value" parameters; return 0, or -1 with err filled */
    int (*configure)(struct network *net, char **keys, char **values, int n, char *err,
                     size_t errlen);
    /* a frame is ready at its sender's interface now (event time) */
    void (*inject)(struct network *net, struct frame *fr, uint64_t now);
    /* one of the topology's own events */
    void (*event)(struct network *net, int kind, uint64_t now, void *ptr, uint64_t arg);
    /* least time from a frame being ready to its arrival anywhere (>= 1) */
    uint64_t (*min_latency)(struct network *net);
    /* least time from one of the topology's own events (kind, arg) to an
     * arrival it causes (>= 1); kind < 0: the least over all of them. NULL if
     * that is always min_latency (a multi-hop topology's last hop is quicker
     * than the whole path). */
    uint64_t (*event_latency)(struct network *net, int kind, uint64_t arg);
    /* per-link counters as JSON objects (comma-separated, no brackets) */
    void (*stats)(struct network *net, FILE *out);
};

struct event {
    uint64_t time;
    uint32_t kind;           /* EV_* below; ties broken by (kind, node, network, seq) */
    uint32_t node;
    uint64_t seq;
    struct network *net;     /* EV_TOPO: whose topology; EV_INJECT: the frame's */
    int topo_kind;
    void *ptr;
    uint64_t arg;
};

enum { EV_INJECT = 1, EV_TOPO = 2, EV_SYNTH = 3 };

struct event_queue {
    struct event *ev;
    size_t n, cap;
};

/* Why a frame was dropped: one counter each in the stats. */
enum drop_reason {
    DROP_DEST_DOWN, DROP_UNKNOWN_DEST, DROP_OVERSIZE,
    DROP_BROADCAST_UNSUPPORTED,   /* RL_NODE_BROADCAST on a topology without it */
    DROP_EXCESS_COLLISIONS,       /* hub: attempt_limit collisions for one frame */
    DROP_QUEUE_FULL,              /* a bounded queue (hub station, switch output) was full */
    DROP_REASONS
};
extern const char *const drop_reason_name[DROP_REASONS];

/*
 * One network: a topology instance over some of the nodes, its stations. Station i is
 * node station_node[i] (the order of the configuration's station list: a token ring's
 * order); frames never leave their network. Every network shares the one virtual clock.
 */
struct network {
    struct fabric *f;
    uint32_t id;
    char name[RL_NAME_LEN + 1];
    uint32_t protocol;        /* enum rl_protocol: what its ports must say in ATTACH */
    const struct topology_ops *topo;
    void *state;              /* the topology's */
    uint32_t n;               /* stations */
    uint32_t *station_node;   /* station -> node id */
    uint32_t *node_station;   /* node id -> station, or STATION_NONE */
};

/* The boot barrier (barrier.c, docs/snapshots.md). */
struct barrier {
    bool on;                  /* the nodes' guests arrive at it; frames refused before */
    bool released;            /* every node arrived: they run to t */
    bool done;                /* every node reached t (or the cluster started at it) */
    uint64_t t;               /* the barrier's time: the latest arrival */
    uint64_t cap;             /* no grant past this while the nodes run to t; else never */
    char save_path[4096];     /* write the fabric's state here at t */
    char restore_path[4096];  /* start at the barrier, from this state */
};

struct fabric {
    char socket_path[108];
    char stats_path[4096], trace_path[4096], status_path[4096];
    FILE *trace;
    uint32_t nnodes;
    struct node *nodes;
    uint32_t nnets;
    struct network *nets;
    struct event_queue queue;
    uint64_t event_seq;       /* for topology events */
    uint64_t deliver_seq;     /* DELIVER numbering, in event order: deterministic */
    uint64_t horizon;         /* every event before this has been processed */
    uint64_t causality_violations;
    uint64_t drops[DROP_REASONS];
    bool drop_logged[DROP_REASONS]; /* its first drop has been logged */
    bool started;             /* every VM node said HELLO */
    uint64_t stall_report_s;  /* report a stall after this many wall seconds; 0: never */
    double last_progress;     /* wall clock of the last grant */
    uint64_t *e, *a;          /* per node, sync_compute's E and A (from the start) */
    uint64_t *caused;         /* per network, sync_compute's F */
    uint8_t *relaxed;         /* per node, sync_compute: an alive VM node (it may react) */
    struct rl_lockstep *ls;   /* the lock-step file, shared with the nodes */
    struct rl_ls_static ls_static; /* its static part, our own copy: the one we compute
                                      with (anyone with the file can write the file's) */
    char lockstep_path[4096 + 16];
    bool stalled;             /* a stall has been reported and goes on */
    struct barrier barrier;
    uint32_t shards;          /* the configuration's; 0 or 1: no shards */
    struct shard *shard;      /* this process's part, NULL without shards (shard.c) */
};

/* log.c: a line on stderr, prefixed "fabric: "; fatal errors (docs/fabric.md,
 * "Exit status"): the reason as the last line, the socket removed, exit */
enum { EXIT_NORMAL = 0, EXIT_RUNTIME = 1, EXIT_CONFIG = 2 };
void fabric_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fabric_log_prefix(uint32_t shard, const char *host);   /* "fabric shard N (host): " */
void fabric_owns(const char *path);    /* remove this file at a fatal error */
_Noreturn void fabric_fatal(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* allocations that end the fabric (EXIT_RUNTIME, "out of memory") when they fail */
void *xcalloc(size_t n, size_t size);
void *xmalloc(size_t size);
void *xreallocarray(void *p, size_t n, size_t size);

/* stall.c */
double wall_now(void);                 /* monotonic wall clock, seconds */
void stall_start(struct fabric *f);    /* the cluster started */
void stall_progress(struct fabric *f); /* some node was granted more time */
void stall_check(struct fabric *f);    /* report a stall if one is due */
void stall_cut_off(struct fabric *f, struct node *n, const char *why); /* in the status file */
int stall_poll_ms(const struct fabric *f, int longest);

/* events.c */
void eq_push(struct event_queue *q, const struct event *ev);
bool eq_pop(struct event_queue *q, struct event *out);
const struct event *eq_peek(const struct event_queue *q);
void pa_push(struct pending_arrivals *p, uint64_t t, uint32_t src);
/* Remove the earliest arrival if it is before t; false if there is none. */
bool pa_pop_before(struct pending_arrivals *p, uint64_t t, struct arrival *out);
uint64_t pa_min(const struct pending_arrivals *p);

/* main.c: a message to a node (it is cut off if the socket fails) */
void fabric_send(struct fabric *f, struct node *n, const void *msg, size_t len);
/* main.c: a frame from node n is ready at its interface (FRAME, or another shard's) */
void fabric_inject(struct fabric *f, struct node *n, uint32_t net, uint32_t dst_node,
                   uint32_t len, uint32_t flags, uint64_t seq, uint64_t ready,
                   const uint8_t *data);
/* main.c: another shard's node left (its shard said so) */
void fabric_node_left(struct fabric *f, struct node *n);
/* main.c: queue the synthetic nodes' first frames, none before the boot barrier's time */
void synthetic_start(struct fabric *f);

/* barrier.c: the boot barrier; NULL, or why the message breaks the protocol */
const char *barrier_message(struct fabric *f, struct node *n, const struct rl_barrier *m);
const char *barrier_refuses_frame(struct fabric *f, struct node *n);
void barrier_check(struct fabric *f);      /* every node at its time: done (and saved) */
void barrier_release_if_held(struct fabric *f);   /* every node held: release them */
uint64_t barrier_cap(const struct fabric *f, uint64_t grant);

/* state.c: the fabric's own state at the barrier (docs/snapshots.md) */
void state_save(struct fabric *f);         /* says so and runs on if it cannot */
void state_restore(struct fabric *f);      /* at start: every node at its saved time */

/* main.c: used by topologies and synthetic nodes */
void fabric_schedule(struct network *net, uint64_t time, int topo_kind, void *ptr, uint64_t arg);
void fabric_deliver(struct network *net, struct frame *fr, uint64_t arrival);
/* A notice to station's node (a DELIVER from itself, no payload): the network has
 * taken its earlier frame; from arrival on it may hand over the next. */
void fabric_notice(struct network *net, uint32_t station, uint64_t arrival);
void fabric_drop(struct network *net, struct frame *fr, enum drop_reason why);
void fabric_trace(struct network *net, uint64_t t, const char *what, const struct frame *fr);
/* Broadcast: a copy of fr for node dst, in flight for fr's sender like any frame
 * (the topology delivers or drops each copy); once copied, fr itself is
 * discarded. fabric_deliver_all: a copy for every node but the sender, all
 * arriving at once, and fr discarded. */
struct frame *fabric_copy(struct network *net, const struct frame *fr, uint32_t dst);
void fabric_discard(struct network *net, struct frame *fr);
void fabric_deliver_all(struct network *net, struct frame *fr, uint64_t arrival);

/* topologies */
extern const struct topology_ops topo_p2p_ops, topo_ring_ops, topo_switch_ops, topo_min_ops,
    topo_hub_ops, topo_eth_switch_ops, topo_cpci_bus_ops;
const struct topology_ops *topology_by_name(const char *name);
/* the least lookahead of any event: what a node's instruction time must not exceed */
uint64_t topology_least_event_latency(struct network *net);
/* per network, the earliest time a pending event could make a frame arrive on it */
void topology_earliest_caused_arrivals(struct fabric *f, uint64_t *per_net);
/* the network of an event in the queue */
struct network *event_network(struct fabric *f, const struct event *ev);

/* sync.c */
/* The earliest ready time node n may give a frame: its promise, or a reaction
 * to a frame already delivered to it. */
bool node_counts(const struct node *n);         /* alive VM, or synthetic with frames left */
uint64_t node_arrival_floor(const struct node *n); /* earliest delivered arrival + R */
uint64_t node_send_floor(const struct node *n);  /* min(promise, arrival floor) */
uint64_t node_floor(const struct node *n);       /* E before relaxation (NEVER: gone) */
void sync_compute(struct fabric *f, uint64_t *earliest_send, uint64_t *grant_for);

/* lockstep.c: the lock-step file (include/retrolink/lockstep.h) */
void lockstep_create(struct fabric *f);              /* before listening */
void lockstep_start(struct fabric *f);               /* the cluster starts */
/* adopt its slot, if complete; false (why filled) if the slot breaks the protocol */
bool lockstep_refresh(struct fabric *f, struct node *n, char *why, size_t whylen);
void lockstep_publish(struct fabric *f);             /* after every step */

#endif
