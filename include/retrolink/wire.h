/*
 * retrolink wire protocol: the messages between a node's link port (a QEMU
 * device, or a test's fake node) and the fabric process.
 *
 * This one header is shared by the QEMU devices (qemu/), the fabric
 * (fabric/) and the Python tests (src/retrolink/wire.py loads the part between
 * the cdef markers with cffi), so there is exactly one definition.
 *
 * Transport: a SOCK_SEQPACKET Unix socket per node, so each recv() returns
 * exactly one message. Every message starts with struct rl_msg_hdr; its
 * 'length' is the whole message (header + body + payload) and must equal the
 * number of bytes received. All integers are little-endian host order (nodes
 * and fabric run on one host). All times are virtual nanoseconds since the
 * cluster started (every node's QEMU_CLOCK_VIRTUAL starts at 0).
 *
 * Networks: one fabric serves every network of the cluster (docs/fabric.md). A node
 * has one connection, whatever its boards: HELLO announces how many ports follow, each
 * port says ATTACH (its network id and the protocol its board speaks), and FRAME,
 * DELIVER and LINK name the network they belong to. A node that attaches nothing
 * (HELLO with ports = 0) is on network 0. A frame never crosses networks.
 *
 * Synchronisation (docs/fabric.md has the full algorithm):
 *  - a node may run its virtual clock up to the last GRANT it received and
 *    never past it;
 *  - before it blocks at its grant it sends SYNC with its time and its
 *    "promise": the earliest wire time of any FRAME it could still send if no
 *    further frame arrived for it;
 *  - the fabric sends every DELIVER whose arrival time is below a grant before
 *    that GRANT, so a node always knows its arrivals in advance.
 */
#ifndef RL_WIRE_H
#define RL_WIRE_H

#include <stdint.h>

/* cdef-begin: this part is plain C that cffi parses (no expressions). */
#define RL_WIRE_MAGIC 0x4b4c5452
#define RL_WIRE_VERSION 4
#define RL_MAX_PAYLOAD 65536
#define RL_MAX_NODES 256
#define RL_MAX_NETWORKS 16
#define RL_NAME_LEN 32
#define RL_ERROR_TEXT_LEN 200
#define RL_TIME_NEVER 0xffffffffffffffff
/* FRAME dst: every other node of the network (Ethernet broadcast and multicast:
 * the receiving NIC filters by MAC). Each gets a copy whose DELIVER says this
 * dst too. Topologies without broadcast drop it (docs/fabric.md). */
#define RL_NODE_BROADCAST 0xffffffff

enum rl_msg_type {
    RL_MSG_HELLO = 1,    /* node -> fabric: first message after connect */
    RL_MSG_WELCOME = 2,  /* fabric -> node: accepted; h.time_ns = first grant */
    RL_MSG_FRAME = 3,    /* node -> fabric: frame ready for the wire at h.time_ns */
    RL_MSG_DELIVER = 4,  /* fabric -> node: frame arrives at h.time_ns; on a network
                            of WELCOME's notice_nets, one from the node itself with
                            no payload is a notice: the network has taken the node's
                            earlier frame, and from h.time_ns the node may hand it
                            the next (docs/fabric.md, "hub") */
    RL_MSG_SYNC = 5,     /* node -> fabric: reached h.time_ns, see promise_ns */
    RL_MSG_GRANT = 6,    /* fabric -> node: may run to the first instruction
                            boundary at or after h.time_ns */
    RL_MSG_LINK = 7,     /* fabric -> node: a peer went up/down at h.time_ns */
    RL_MSG_ERROR = 8,    /* fabric -> node: protocol error; fabric disconnects */
    RL_MSG_BYE = 9,      /* node -> fabric: leaving cleanly at h.time_ns */
    RL_MSG_ATTACH = 10,  /* node -> fabric: after HELLO, one per port */
    RL_MSG_PROGRESS = 11, /* node -> fabric: it moved on through the lock-step file
                            (lockstep.h) while a node waits for a GRANT; no reply */
    RL_MSG_BARRIER = 12, /* node -> fabric: the boot barrier (docs/snapshots.md), see
                            struct rl_barrier's flags */
    RL_MSG_BARRIER_AT = 13 /* fabric -> node: every node is held; run to h.time_ns,
                            the barrier's time, and stop there (flags) */
};

/* struct rl_barrier's flags */
enum rl_barrier_flag {
    RL_BARRIER_HELD = 1,    /* BARRIER: the guest reached the barrier at h.time_ns; the
                               node is held there, sending nothing, until BARRIER_AT */
    RL_BARRIER_STOPPED = 2, /* BARRIER: reached the barrier's time (h.time_ns >= it) and
                               stopped for a snapshot; it goes on when resumed */
    RL_BARRIER_SAVE = 4     /* BARRIER_AT: stop at the barrier's time for a snapshot */
};

/* What a port's frames are: the fabric refuses a port on a network that carries
 * another protocol (a board that could not understand its peers' frames). */
enum rl_protocol {
    RL_PROTO_ANY = 0,       /* a network: any port; a port: says nothing (tests) */
    /* then one per board, RL_PROTO_<PROTO> = number (boards.def) */
#define RL_BOARD(name, PROTO, number) RL_PROTO_##PROTO = number,
#include "boards.def"
#undef RL_BOARD
};

struct rl_msg_hdr {
    uint32_t magic;      /* RL_WIRE_MAGIC */
    uint16_t version;    /* RL_WIRE_VERSION */
    uint16_t type;       /* enum rl_msg_type */
    uint32_t length;     /* whole message in bytes, header included */
    uint32_t node;       /* node -> fabric: sender's node id; else recipient */
    uint64_t time_ns;    /* virtual time; meaning per type (see enum) */
};

struct rl_hello {
    struct rl_msg_hdr h;     /* h.time_ns = node's current time (0 at boot) */
    uint64_t reaction_ns;    /* least delay from a frame arriving at this node
                                to a frame this node sends because of it (any port) */
    uint32_t ports;          /* ATTACH messages that follow; 0: on network 0 */
    uint32_t granularity_ns; /* the node stops at the first instruction boundary
                                at or after its grant: up to this - 1 ns later */
    char name[32];           /* device/node name, NUL-padded, for logs */
};

struct rl_attach {
    struct rl_msg_hdr h;     /* h.time_ns = the node's time (as in HELLO) */
    uint32_t net;            /* network id, 0 .. RL_MAX_NETWORKS - 1 */
    uint32_t protocol;       /* enum rl_protocol */
};

struct rl_welcome {
    struct rl_msg_hdr h;     /* h.time_ns = first grant */
    uint32_t nodes;          /* node ids are 0 .. nodes-1 */
    uint32_t notice_nets;    /* networks (a bit per id) whose topology sends notices */
};

struct rl_frame {
    struct rl_msg_hdr h;     /* FRAME: ready time; DELIVER: arrival time */
    uint32_t src;            /* sending node */
    uint32_t dst;            /* receiving node, or RL_NODE_BROADCAST */
    uint32_t len;            /* payload bytes that follow this struct */
    uint32_t flags;          /* device-defined, carried end to end */
    uint64_t seq;            /* FRAME: sender's count; DELIVER: fabric's count */
    uint32_t net;            /* the network it travels on */
    uint32_t reserved;       /* 0 */
};

struct rl_sync {
    struct rl_msg_hdr h;     /* h.time_ns = the node's clock now */
    uint64_t promise_ns;     /* no FRAME earlier than this unless a frame
                                arrives; >= h.time_ns; RL_TIME_NEVER = none */
};

struct rl_link_status {
    struct rl_msg_hdr h;     /* h.time_ns = when the peer's state changed */
    uint32_t peer;
    uint32_t up;             /* 1 up, 0 down */
    uint32_t net;            /* on this network (one message per network shared) */
    uint32_t reserved;
};

struct rl_barrier {
    struct rl_msg_hdr h;
    uint32_t flags;          /* enum rl_barrier_flag */
    uint32_t reserved;       /* 0 */
};

struct rl_error {
    struct rl_msg_hdr h;
    char text[200];          /* NUL-terminated reason */
};
/* cdef-end */

/* Fill in a message header (fabric and link port alike). */
static inline void rl_msg_hdr_init(struct rl_msg_hdr *h, uint16_t type, uint32_t length,
                                   uint32_t node, uint64_t time_ns)
{
    h->magic = RL_WIRE_MAGIC;
    h->version = RL_WIRE_VERSION;
    h->type = type;
    h->length = length;
    h->node = node;
    h->time_ns = time_ns;
}

#if defined(__STDC_VERSION__) || defined(__cplusplus)
_Static_assert(sizeof(struct rl_msg_hdr) == 24, "rl_msg_hdr layout");
_Static_assert(sizeof(struct rl_hello) == 24 + 16 + RL_NAME_LEN, "rl_hello");
_Static_assert(sizeof(struct rl_attach) == 32, "rl_attach layout");
_Static_assert(sizeof(struct rl_welcome) == 32, "rl_welcome layout");
_Static_assert(sizeof(struct rl_frame) == 56, "rl_frame layout");
_Static_assert(sizeof(struct rl_sync) == 32, "rl_sync layout");
_Static_assert(sizeof(struct rl_link_status) == 40, "rl_link_status layout");
_Static_assert(sizeof(struct rl_barrier) == 32, "rl_barrier layout");
_Static_assert(RL_MAX_NETWORKS <= 32, "a node's networks fit a 32-bit set");
_Static_assert(sizeof(struct rl_error) == 24 + RL_ERROR_TEXT_LEN, "rl_error");
#endif

#endif /* RL_WIRE_H */
