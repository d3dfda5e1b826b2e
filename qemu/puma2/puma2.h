/*
 * PUMA-II distributed shared memory board (retrolink-puma2): the state shared by its
 * files. Register map: retrolink/regs/puma2-regs.h; frames and the consistency
 * protocol: retrolink/proto/puma2.h; behaviour and timing: docs/boards/puma2.md.
 *
 *   puma2.c       the device: QOM, properties, realize, the fabric port, the promise,
 *                 events, migration
 *   puma2-regs.c  BAR0 (registers, FIFOs) and BAR1 (board memory): every access is a
 *                 VME transfer that holds the vCPU for its bus time (rl-bus)
 *   puma2-dsm.c   the board's controller: host commands, the consistency protocol
 *                 (IVY write-invalidate, fixed distributed manager), page copies
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RETROLINK_PUMA2_H
#define RETROLINK_PUMA2_H

#include "qom/object.h"

#include "retrolink/regs/puma2-regs.h"
#include "retrolink/proto/puma2.h"
#include "hw/retrolink/core/rl-bus.h"
#include "hw/retrolink/core/rl-fifo.h"
#include "hw/retrolink/core/rl-pci-board.h"

#define TYPE_RETROLINK_PUMA2 "retrolink-puma2"
OBJECT_DECLARE_SIMPLE_TYPE(Puma2State, RETROLINK_PUMA2)

typedef struct puma2_wire_hdr Puma2Wire;

/* this board's copy of a page */
enum { PUMA2_ACC_NONE = 0, PUMA2_ACC_READ = 1, PUMA2_ACC_WRITE = 2 };
/* a RECALL for a held page */
enum { PUMA2_RECALL_NONE = 0, PUMA2_RECALL_WANTED = 1, PUMA2_RECALL_SENT = 2 };
/* Puma2Page.pending: the host command's op, and this flag if the host was reset since */
#define PUMA2_PENDING_ORPHAN    0x80
/* ... and this one if it is counted in remote_waits (it went to the ring) */
#define PUMA2_PENDING_NET       0x40
#define PUMA2_PENDING_OP(p)     ((p) & 0xf)

enum Puma2EventKind {
    PUMA2_EV_CMD,       /* the controller has decoded the command at the FIFO's head */
    PUMA2_EV_ARRIVE,    /* ptr: Puma2Msg; a frame's last byte reached the board */
    PUMA2_EV_MSG,       /* ptr: Puma2Msg; the controller is done with a message */
    PUMA2_EV_COPIED,    /* ptr: Puma2Msg; the copy engine has moved its page in */
    PUMA2_EV_SEND,      /* ptr: Puma2Msg; the copy engine has the page in the tx buffer */
    PUMA2_EV_LINK,      /* arg: peer | up << 31 */
    PUMA2_EV_RELEASE,   /* arg: page; the controller lets a reset's deferred message go */
};

/* A protocol message inside the board (either way), with the page's bytes if any. */
typedef struct Puma2Msg {
    uint32_t peer;              /* source (received) or destination (to send) */
    Puma2Wire hdr;
    uint8_t data[];             /* PUMA2_PAGE bytes when hdr.flags has F_DATA */
} Puma2Msg;

/*
 * One page of the shared space as this board sees it (docs/boards/puma2.md,
 * "Consistency"): its copy, the host's hold, and the owner's and manager's parts.
 */
typedef struct Puma2Page {
    uint8_t access;             /* PUMA2_ACC_*: this board's copy */
    uint8_t hold;               /* 0 or PUMA2_OP_READ / _WRITE: the host holds it */
    uint8_t pending;            /* 0 or the op of a host command waiting on the ring */
    uint8_t recall;             /* PUMA2_RECALL_* */
    uint8_t deferred;           /* 0 or PUMA2_MSG_FWD / _INV waiting for the host */
    uint8_t deferred_op;        /* its op (FWD) */
    uint8_t deferred_from;      /* its requester (FWD) or the new owner (INV) */
    uint8_t acks_wanted;        /* a WRITE under way here: INV_ACKs still to come */
    uint32_t copyset;           /* owner: boards with read copies (bit n: board n) */
    /* manager's part (page % nodes == this board) */
    uint8_t owner;
    uint8_t mgr_busy;           /* a transaction of this page is under way */
    uint8_t mgr_last;           /* the last requester it served (round robin) */
    uint8_t is_owner;           /* this board owns the page (owner's part below) */
    uint32_t wait_read, wait_write;     /* requests waiting for the transaction */
} Puma2Page;

struct Puma2State {
    RlPciBoard parent_obj;
    RlBoard *rl;                /* the board core: fabric, node, interrupts, events */
    MemoryRegion ctrl_bar;
    MemoryRegion mem_bar;       /* BAR1: the host's VME window onto board memory */
    MemoryRegion mem;           /* the board memory itself (a RAM block: migrated) */
    uint8_t *mem_ptr;

    /* properties (and the core's: fabric, node, network, start-us) */
    uint32_t memory_mib;        /* board memory = the shared space */
    uint64_t vme_overhead_ns;   /* each VME transaction: bridge and handshake */
    uint64_t vme_rate;          /* VME data phase, bytes/s (4 bytes a transaction) */
    uint64_t request_ns;        /* the controller: a command or a message */
    uint64_t copy_rate;         /* the page-copy engine: memory <-> ring buffer, bytes/s */

    /* guest-visible state (the interrupt registers are the core's) */
    uint32_t ctrl, error;
    uint64_t ready_at;          /* enabled: takes commands from then on */
    RlFifo cmd, resp;
    /* when each command's CMD store ended, by its slot in 'cmd' (not saved: the
     * command FIFO is empty in a snapshot) */
    uint64_t cmd_end[PUMA2_CMD_DEPTH];
    uint32_t npages;
    Puma2Page *pages;
    bool cmd_scheduled;         /* a PUMA2_EV_CMD is queued */
    uint32_t resp_reserved;     /* responses owed to commands taken (not saved) */
    uint32_t recalls_wanted;    /* pages whose RECALL waits for room (not saved) */

    /* counters (PUMA2_REG_*) */
    uint64_t bus_ns, net_ns;
    uint32_t remote_waits;      /* host commands waiting on another board */
    uint64_t net_since, bus_at_net_since;
    uint32_t pages_in, pages_out, msgs_in, msgs_out, invalidated;
    uint32_t hi_latch;

    /* the board's resources (docs/boards/puma2.md, "Timing") */
    RlBus bus;                  /* the VME bus as the host's PIO sees it */
    RlServer controller;        /* decodes commands, handles messages */
    RlServer copier;            /* the page-copy engine */
};

static inline uint64_t puma2_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* puma2.c */
bool puma2_ready(Puma2State *s);
uint64_t puma2_vme_ns(Puma2State *s, unsigned bytes);

/* puma2-regs.c */
extern const MemoryRegionOps puma2_ctrl_ops;
extern const MemoryRegionOps puma2_mem_ops;
uint64_t puma2_net_ns(Puma2State *s);

/* puma2-dsm.c */
void puma2_dsm_init(Puma2State *s);
void puma2_cmd_written(Puma2State *s, uint64_t end);
void puma2_cmd_event(Puma2State *s);
void puma2_resp_popped(Puma2State *s, uint64_t end);
void puma2_msg_arrive(Puma2State *s, Puma2Msg *m);
void puma2_msg_event(Puma2State *s, Puma2Msg *m);
void puma2_copied_event(Puma2State *s, Puma2Msg *m);
void puma2_send_event(Puma2State *s, Puma2Msg *m);
void puma2_release_event(Puma2State *s, uint32_t page);
void puma2_host_reset(Puma2State *s, uint64_t at);
bool puma2_msg_ok(Puma2State *s, const Puma2Msg *m, uint32_t len, const char **why);
int puma2_pages_check(Puma2State *s);
void puma2_recount(Puma2State *s);

#endif /* RETROLINK_PUMA2_H */
