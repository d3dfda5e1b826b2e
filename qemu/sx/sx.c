/*
 * SX message processor (SXM) board of the Fujitsu SURE SYSTEM2000, as a PCI
 * device on a retrolink FDDI ring. Register map: retrolink/regs/sx-regs.h; frames:
 * retrolink/proto/sx.h; behaviour and timing model: docs/boards/sx.md.
 *
 * The SXM is modelled from its components, each a timed resource:
 *  - the PM-SXM bus: 'bus-channels' DMA channels of 'bus-channel-rate' bytes/s,
 *    one channel per transfer;
 *  - the SXM control processor: one job at a time, firmware costs given as
 *    instruction budgets ('fw-*-insns') run at 'sxm-mips';
 *  - the network side: frames go to the fabric, which models the FDDI ring.
 * Send: doorbell -> bus DMA of the message -> send firmware -> frame on the ring.
 * Receive: frame arrives -> receive firmware -> bus DMA into an rx slot ->
 * interrupt, and a confirmation frame back to the sender, whose send then
 * completes. All of it runs as events at exact virtual times (rl-sched).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <math.h>
#include "qemu/cutils.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "retrolink/regs/sx-regs.h"
#include "retrolink/proto/sx.h"
#include "hw/retrolink/core/rl-fifo.h"
#include "hw/retrolink/core/rl-pci-board.h"
#include "hw/retrolink/trace.h"

#define TYPE_RETROLINK_SX "retrolink-sx"
OBJECT_DECLARE_SIMPLE_TYPE(SxState, RETROLINK_SX)

/* Header of every SX frame on the ring: retrolink/proto/sx.h */
typedef struct sx_wire_hdr SxWire;

enum SxEventKind {
    SX_EV_TX_BUS_DONE,  /* arg: tx slot */
    SX_EV_CPU_DONE,     /* ptr: SxJob */
    SX_EV_ARRIVE,       /* ptr: SxMsg */
    SX_EV_RX_BUS_DONE,  /* arg: rx slot, ptr: SxMsg */
    SX_EV_TIMEOUT,      /* arg: tx slot */
    SX_EV_LINK,         /* arg: peer | up << 31 */
};

enum SxJobKind { SX_JOB_SEND, SX_JOB_RECV, SX_JOB_CONFIRM };

typedef struct SxMsg {
    uint32_t src;
    uint32_t len;       /* payload after the SxWire header */
    SxWire wire;
    uint8_t data[];
} SxMsg;

typedef struct SxJob {
    enum SxJobKind kind;
    uint32_t slot;
    uint32_t gen;
    SxMsg *msg;
} SxJob;

enum SxTxState { SX_TX_IDLE, SX_TX_SENDING, SX_TX_AWAIT_CONFIRM };
enum SxRxState { SX_RX_FREE, SX_RX_DMA, SX_RX_HOST };

#define SX_TXC_DEPTH  (SX_TX_SLOTS * 4)

#define SX_IRQ_ALL    (SX_IRQ_RX | SX_IRQ_TXDONE | SX_IRQ_ERROR | SX_IRQ_LINK)

struct SxState {
    RlPciBoard parent_obj;
    RlBoard *rl;                        /* the board core: fabric, node, interrupts, events */
    MemoryRegion regs;
    MemoryRegion window;
    uint8_t *win;                       /* host pointer to the window RAM */

    /* properties (and the core's: fabric, node, network, start-us) */
    char *sxm_mips_str;
    uint64_t send_insns, recv_insns, confirm_insns;
    uint32_t confirm_bytes;
    uint64_t confirm_timeout_us;
    uint32_t bus_channels;
    uint64_t bus_rate;

    /* derived timing, ns */
    double sxm_mips;
    uint64_t send_ns, recv_ns, confirm_ns, start_ns;

    /* guest-visible state (in VMState, as is everything below but 'waiting' and 'port') */
    uint32_t ctrl, error;
    uint64_t ready_at;                  /* the SXM has started (valid while enabled) */
    uint32_t peers_up;
    uint32_t tx_msgs, rx_msgs, tx_errors, bad_doorbells;
    uint32_t tx_state[SX_TX_SLOTS];
    uint32_t tx_gen[SX_TX_SLOTS];
    uint32_t tx_dst[SX_TX_SLOTS];
    uint32_t rx_state[SX_RX_SLOTS];
    RlFifo txc;                         /* TX_COMPLETE: slot | status << 8 | valid */
    RlFifo rxp;                         /* RX_POP: slot | valid */

    /* the board's internals */
    uint8_t tx_data[SX_TX_SLOTS][SX_MAX_MSG];
    SxWire tx_wire[SX_TX_SLOTS];
    GQueue waiting;                     /* received SxMsg waiting for a free rx slot */
    RlServer cpu;
    RlChannels bus;
};

/* ---- FIFOs --------------------------------------------------------------------- */

/* What the register FIFOs hold (rl-fifo.h): the valid bit, a slot, a status. */
static bool sx_fifo_word_ok(uint32_t v, uint32_t slots, uint32_t statuses)
{
    return (v & (1u << 31)) && !(v & 0x7fff0000) && (v & 0xff) < slots &&
           ((v >> 8) & 0xff) <= statuses;
}

static bool sx_txc_ok(void *opaque, uint32_t v)
{
    return sx_fifo_word_ok(v, SX_TX_SLOTS, SX_ERR_RX_SLOT);
}

static bool sx_rxp_ok(void *opaque, uint32_t v)
{
    return sx_fifo_word_ok(v, SX_RX_SLOTS, 0);
}

static uint64_t sx_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void sx_tx_complete(SxState *s, uint32_t slot, uint32_t status)
{
    trace_retrolink_sx_tx_complete(s->rl->node, slot, status, sx_now());
    s->tx_state[slot] = SX_TX_IDLE;
    s->tx_gen[slot]++;
    if (status == SX_ERR_NONE) {
        s->tx_msgs++;
    } else {
        s->tx_errors++;
    }
    /* depth > slots, and a slot completes once per doorbell: never overflows */
    rl_fifo_push(&s->txc, SX_TXC_VALID | slot | (status << 8));
    rl_board_raise(s->rl, SX_IRQ_TXDONE);
}

static void sx_bad_doorbell(SxState *s, uint32_t err)
{
    trace_retrolink_sx_bad_doorbell(s->rl->node, err);
    s->bad_doorbells++;
    s->error = err;
    rl_board_raise(s->rl, SX_IRQ_ERROR);
}

static bool sx_peer_up(SxState *s, uint32_t peer)
{
    return peer < 32 ? (s->peers_up >> peer) & 1 : s->rl->port && rl_port_is_up(s->rl->port);
}

/* Enabled and started: takes doorbells and messages. */
static bool sx_ready(SxState *s)
{
    return (s->ctrl & SX_CTRL_ENABLE) && sx_now() >= s->ready_at;
}

static uint64_t sx_insns_ns(SxState *s, uint64_t insns)
{
    return (uint64_t)llround((double)insns * 1000.0 / s->sxm_mips);
}

/* ---- the pipeline -------------------------------------------------------------- */

static void sx_cpu_job(SxState *s, enum SxJobKind kind, uint32_t slot, SxMsg *msg,
                       uint64_t cost)
{
    SxJob *job = g_new0(SxJob, 1);

    job->kind = kind;
    job->slot = slot;
    job->gen = slot < SX_TX_SLOTS ? s->tx_gen[slot] : 0;
    job->msg = msg;
    uint64_t end = rl_server_run(&s->cpu, sx_now(), cost);
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, SX_EV_CPU_DONE, slot,
                 job->gen, job);
}

/* Move a received message into a free rx slot over the bus, if there is one. */
static void sx_place(SxState *s)
{
    while (!g_queue_is_empty(&s->waiting)) {
        int j;
        for (j = 0; j < SX_RX_SLOTS && s->rx_state[j] != SX_RX_FREE; j++) {
        }
        if (j == SX_RX_SLOTS) {
            return;
        }
        SxMsg *m = g_queue_pop_head(&s->waiting);
        s->rx_state[j] = SX_RX_DMA;
        uint64_t end = rl_channels_run(&s->bus, sx_now(), rl_bytes_ns(m->len, s->bus_rate));
        rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, SX_EV_RX_BUS_DONE, j, 0, m);
    }
}

static void sx_send_confirm(SxState *s, const SxMsg *m)
{
    uint8_t buf[SX_MAX_MSG] = { 0 };
    SxWire w = { .type = SX_WIRE_CONFIRM, .slot = m->wire.slot, .gen = m->wire.gen,
                 .tag = m->wire.tag };
    uint32_t len = MAX(s->confirm_bytes, (uint32_t)sizeof(w));

    memcpy(buf, &w, sizeof(w));
    trace_retrolink_sx_frame_out(s->rl->node, m->src, w.type, MIN(len, sizeof(buf)), sx_now());
    rl_port_send(s->rl->port, sx_now(), m->src, 0, buf, MIN(len, sizeof(buf)));
}

static void sx_rx_bus_done(SxState *s, uint32_t j, SxMsg *m)
{
    memcpy(s->win + SX_RX_BUF(j), m->data, m->len);
    stl_le_p(s->win + SX_RX_DESC(j) + SX_DESC_PEER, m->src);
    stl_le_p(s->win + SX_RX_DESC(j) + SX_DESC_LEN, m->len);
    stl_le_p(s->win + SX_RX_DESC(j) + SX_DESC_TAG, m->wire.tag);
    stl_le_p(s->win + SX_RX_DESC(j) + SX_DESC_RSVD, 0);
    s->rx_state[j] = SX_RX_HOST;
    rl_fifo_push(&s->rxp, SX_RXP_VALID | j);   /* one entry a slot: never full */
    s->rx_msgs++;
    trace_retrolink_sx_rx(s->rl->node, j, m->src, m->len, sx_now());
    sx_send_confirm(s, m);
    g_free(m);
    rl_board_raise(s->rl, SX_IRQ_RX);
}

static void sx_cpu_done(SxState *s, SxJob *job)
{
    uint32_t slot = job->slot;

    switch (job->kind) {
    case SX_JOB_SEND: {
        if (s->tx_state[slot] != SX_TX_SENDING || s->tx_gen[slot] != job->gen) {
            break;
        }
        uint32_t dst = s->tx_dst[slot];
        if (!sx_peer_up(s, dst)) {
            sx_tx_complete(s, slot, SX_ERR_LINK_DOWN);
            break;
        }
        uint8_t *buf = g_malloc(sizeof(SxWire) + SX_MAX_MSG);
        memcpy(buf, &s->tx_wire[slot], sizeof(SxWire));
        memcpy(buf + sizeof(SxWire), s->tx_data[slot], s->tx_wire[slot].len);
        trace_retrolink_sx_frame_out(s->rl->node, dst, SX_WIRE_MSG,
                                     sizeof(SxWire) + s->tx_wire[slot].len, sx_now());
        rl_port_send(s->rl->port, sx_now(), dst, 0, buf, sizeof(SxWire) + s->tx_wire[slot].len);
        g_free(buf);
        s->tx_state[slot] = SX_TX_AWAIT_CONFIRM;
        rl_sched_add(&s->rl->sched, sx_now() + s->confirm_timeout_us * 1000,
                     RL_EV_CLASS_INTERNAL, 0, SX_EV_TIMEOUT, slot, job->gen, NULL);
        break;
    }
    case SX_JOB_RECV:
        g_queue_push_tail(&s->waiting, job->msg);
        sx_place(s);
        break;
    case SX_JOB_CONFIRM:
        if (s->tx_state[slot] == SX_TX_AWAIT_CONFIRM && s->tx_gen[slot] == job->gen) {
            sx_tx_complete(s, slot, SX_ERR_NONE);
        }
        break;
    }
    g_free(job);
}

static void sx_arrive(SxState *s, SxMsg *m)
{
    if (m->wire.type == SX_WIRE_MSG) {
        if (!sx_ready(s)) {
            g_free(m);          /* board not started: no confirmation, the sender times out */
            return;
        }
        sx_cpu_job(s, SX_JOB_RECV, SX_TX_SLOTS, m, s->recv_ns);
        return;
    }
    uint32_t slot = m->wire.slot;
    if (slot < SX_TX_SLOTS && s->tx_state[slot] == SX_TX_AWAIT_CONFIRM &&
        s->tx_gen[slot] == m->wire.gen && s->tx_dst[slot] == m->src) {
        if (s->confirm_ns) {
            sx_cpu_job(s, SX_JOB_CONFIRM, slot, NULL, s->confirm_ns);
        } else {
            sx_tx_complete(s, slot, SX_ERR_NONE);
        }
    }
    g_free(m);
}

static void sx_link_event(SxState *s, uint32_t peer, bool up)
{
    if (peer < 32) {
        s->peers_up = up ? s->peers_up | (1u << peer) : s->peers_up & ~(1u << peer);
    }
    if (!up) {
        for (uint32_t i = 0; i < SX_TX_SLOTS; i++) {
            if (s->tx_state[i] == SX_TX_AWAIT_CONFIRM && s->tx_dst[i] == peer) {
                sx_tx_complete(s, i, SX_ERR_LINK_DOWN);
            }
        }
    }
    rl_board_raise(s->rl, SX_IRQ_LINK);
}

static void sx_event(void *opaque, RlEvent *ev)
{
    SxState *s = opaque;

    switch (ev->kind) {
    case SX_EV_TX_BUS_DONE:
        if (s->tx_state[ev->arg] == SX_TX_SENDING && s->tx_gen[ev->arg] == ev->gen) {
            sx_cpu_job(s, SX_JOB_SEND, ev->arg, NULL, s->send_ns);
        }
        break;
    case SX_EV_CPU_DONE:
        sx_cpu_done(s, ev->ptr);
        break;
    case SX_EV_ARRIVE:
        sx_arrive(s, ev->ptr);
        break;
    case SX_EV_RX_BUS_DONE:
        sx_rx_bus_done(s, ev->arg, ev->ptr);
        break;
    case SX_EV_TIMEOUT:
        if (s->tx_state[ev->arg] == SX_TX_AWAIT_CONFIRM && s->tx_gen[ev->arg] == ev->gen) {
            sx_tx_complete(s, ev->arg, SX_ERR_LINK_DOWN);
        }
        break;
    case SX_EV_LINK:
        sx_link_event(s, ev->arg & ~(1u << 31), ev->arg >> 31);
        break;
    }
}

/* ---- the fabric side --------------------------------------------------------- */

static void sx_link_frame(void *opaque, uint64_t at, uint64_t seq, uint32_t src,
                          uint32_t flags, const uint8_t *data, uint32_t len)
{
    SxState *s = opaque;
    SxWire w;

    if (len < sizeof(w)) {
        /* the fabric's (or the peer board's) fault, not this guest's */
        warn_report("retrolink-sx node %u: the fabric delivered a short frame from node %u "
                    "(%u bytes)", s->rl->node, src, len);
        return;
    }
    memcpy(&w, data, sizeof(w));
    uint32_t payload = len - sizeof(w);
    if ((w.type == SX_WIRE_MSG && (w.len != payload || w.len > SX_MAX_MSG)) ||
        (w.type != SX_WIRE_MSG && w.type != SX_WIRE_CONFIRM)) {
        warn_report("retrolink-sx node %u: the fabric delivered a malformed frame from "
                    "node %u (type %u, length %u for %u bytes)", s->rl->node, src, w.type, w.len,
                    payload);
        return;
    }
    trace_retrolink_sx_frame_in(s->rl->node, src, w.type, len, at);
    uint32_t keep = w.type == SX_WIRE_MSG ? payload : 0;
    SxMsg *m = g_malloc(sizeof(SxMsg) + keep);
    m->src = src;
    m->len = keep;
    m->wire = w;
    memcpy(m->data, data + sizeof(w), keep);
    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_FRAME, seq, SX_EV_ARRIVE, 0, 0, m);
}

static void sx_link_status(void *opaque, uint64_t at, uint32_t peer, bool up)
{
    SxState *s = opaque;

    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_LINK, peer, SX_EV_LINK,
                 (peer & 0x7fffffff) | ((uint32_t)up << 31), 0, NULL);
}

/*
 * The least time from a guest action to a frame it makes the board send
 * (RlPortOps.lead): none, since an RX_RELEASE lets a waiting message's confirmation go
 * at once (a doorbell's frame needs send_ns more). Every frame is ready at or after
 * what causes it, so 0 is always true.
 */
static uint64_t sx_lead(void *opaque)
{
    return 0;
}

/*
 * The earliest time a frame the board already has in its pipeline leaves it
 * (RL_TIME_NEVER: none): every pending stage's lower bound. Its queue of events is all
 * it has (messages waiting for an rx slot wait for the guest): rl-board publishes this
 * at each change of it.
 */
static uint64_t sx_pending(void *opaque, uint64_t now)
{
    SxState *s = opaque;
    uint64_t p = RL_TIME_NEVER;

    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        switch (ev->kind) {
        case SX_EV_TX_BUS_DONE:
            p = MIN(p, ev->time + s->send_ns);
            break;
        case SX_EV_CPU_DONE:
        case SX_EV_RX_BUS_DONE:
            p = MIN(p, ev->time);
            break;
        case SX_EV_ARRIVE:
            p = MIN(p, ev->time + s->recv_ns);
            break;
        }
    }
    return p == RL_TIME_NEVER ? p : MAX(p, now);
}

/*
 * The earliest time a frame could leave this board if none arrived: one in its
 * pipeline (sx_pending), and a doorbell at guest_ns, which is accepted only once the
 * SXM has started: a board not yet enabled promises start_ns more, which lets the
 * nodes boot with long grants.
 */
static uint64_t sx_promise(void *opaque, uint64_t now, uint64_t guest_ns)
{
    SxState *s = opaque;
    uint64_t doorbell = guest_ns;

    if (guest_ns != RL_TIME_NEVER) {
        doorbell = s->ctrl & SX_CTRL_ENABLE ? MAX(guest_ns, s->ready_at)
                                            : guest_ns + s->start_ns;
    }
    uint64_t p = doorbell == RL_TIME_NEVER ? RL_TIME_NEVER : doorbell + s->send_ns;

    if (!g_queue_is_empty(&s->waiting)) {
        p = MIN(p, guest_ns);           /* an RX_RELEASE lets a confirmation go */
    }
    return MAX(MIN(p, sx_pending(s, now)), now);
}

/* The cluster started: every other node of it is a peer, up. */
static void sx_link_welcome(void *opaque, uint32_t nodes)
{
    SxState *s = opaque;

    s->rl->nodes = nodes;
    for (uint32_t p = 0; p < MIN(s->rl->nodes, 32u); p++) {
        if (p != s->rl->node) {
            s->peers_up |= 1u << p;
        }
    }
}

static const RlPortOps sx_link_ops = {
    .welcome = sx_link_welcome,
    .frame = sx_link_frame,
    .link = sx_link_status,
    .promise = sx_promise,
    .lead = sx_lead,
    .pending = sx_pending,
};

/* ---- registers ------------------------------------------------------------- */

static void sx_doorbell(SxState *s, uint32_t slot)
{
    if (slot >= SX_TX_SLOTS) {
        sx_bad_doorbell(s, SX_ERR_SLOT);
        return;
    }
    if (!sx_ready(s)) {
        sx_bad_doorbell(s, SX_ERR_DISABLED);
        return;
    }
    if (s->tx_state[slot] != SX_TX_IDLE) {
        sx_bad_doorbell(s, SX_ERR_BUSY);
        return;
    }
    uint32_t dst = ldl_le_p(s->win + SX_TX_DESC(slot) + SX_DESC_PEER);
    uint32_t len = ldl_le_p(s->win + SX_TX_DESC(slot) + SX_DESC_LEN);
    uint32_t tag = ldl_le_p(s->win + SX_TX_DESC(slot) + SX_DESC_TAG);

    trace_retrolink_sx_doorbell(s->rl->node, slot, dst, len, sx_now());
    s->tx_state[slot] = SX_TX_SENDING;
    s->tx_dst[slot] = dst;
    if (len > SX_MAX_MSG) {
        s->error = SX_ERR_LENGTH;
        sx_tx_complete(s, slot, SX_ERR_LENGTH);
        return;
    }
    if (dst >= s->rl->nodes || dst == s->rl->node) {
        s->error = SX_ERR_DEST;
        sx_tx_complete(s, slot, SX_ERR_DEST);
        return;
    }
    if (!sx_peer_up(s, dst)) {
        sx_tx_complete(s, slot, SX_ERR_LINK_DOWN);
        return;
    }
    /* the bus DMA reads the slot; the host may not touch it until completion */
    memcpy(s->tx_data[slot], s->win + SX_TX_BUF(slot), len);
    s->tx_wire[slot] = (SxWire) { .type = SX_WIRE_MSG, .slot = slot, .tag = tag,
                                  .len = len, .gen = s->tx_gen[slot] };
    uint64_t end = rl_channels_run(&s->bus, sx_now(), rl_bytes_ns(len, s->bus_rate));
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, SX_EV_TX_BUS_DONE, slot,
                 s->tx_gen[slot], NULL);
}

static void sx_rx_release(SxState *s, uint32_t slot)
{
    if (slot >= SX_RX_SLOTS || s->rx_state[slot] != SX_RX_HOST) {
        sx_bad_doorbell(s, SX_ERR_RX_SLOT);
        return;
    }
    s->rx_state[slot] = SX_RX_FREE;
    sx_place(s);
}

static bool sx_keep_link_events(void *opaque, RlEvent *ev)
{
    switch (ev->kind) {
    case SX_EV_ARRIVE:
    case SX_EV_LINK:
        return true;
    case SX_EV_CPU_DONE: {
        SxJob *job = ev->ptr;
        g_free(job->msg);
        g_free(job);
        return false;
    }
    case SX_EV_RX_BUS_DONE:
        g_free(ev->ptr);
        return false;
    default:
        return false;
    }
}

/* Drop any event, freeing what it holds (unplug, and the state a migration replaces). */
static bool sx_drop_event(void *opaque, RlEvent *ev)
{
    if (ev->kind == SX_EV_ARRIVE) {
        g_free(ev->ptr);
        return false;
    }
    sx_keep_link_events(opaque, ev);   /* frees a job's or a DMA's message */
    return false;
}

/* Board reset: drop everything in flight except what the ring is delivering. */
static void sx_board_reset(SxState *s)
{
    rl_sched_filter(&s->rl->sched, sx_keep_link_events, s);
    SxMsg *m;
    while ((m = g_queue_pop_head(&s->waiting))) {
        g_free(m);
    }
    for (int i = 0; i < SX_TX_SLOTS; i++) {
        s->tx_state[i] = SX_TX_IDLE;
        s->tx_gen[i]++;
    }
    for (int j = 0; j < SX_RX_SLOTS; j++) {
        s->rx_state[j] = SX_RX_FREE;
    }
    s->ctrl = s->rl->irq_status = s->rl->irq_mask = s->error = 0;
    rl_fifo_reset(&s->txc);
    rl_fifo_reset(&s->rxp);
    s->cpu.free_at = 0;
    memset(s->bus.free_at, 0, sizeof(s->bus.free_at));
    rl_board_update_irq(s->rl);
}

/*
 * sx-regs.h: the registers take aligned 32-bit accesses only. Every other access
 * reaches the handlers whole (see sx_mmio_ops) and is refused here: logged, read as 0,
 * written nowhere, and without the side effects of the registers it overlaps.
 */
static bool sx_access_ok(hwaddr addr, unsigned size, bool write)
{
    if (size == 4 && !(addr & 3)) {
        return true;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "retrolink-sx: %u-byte %s at register offset 0x%"
                  HWADDR_PRIx " refused: the registers are 32-bit\n", size,
                  write ? "write" : "read", addr);
    return false;
}

/* For trace events (rl_reg_name). */
static const RlRegName sx_reg_names[] = {
    RL_REG(SX_REG_, ID),
    RL_REG(SX_REG_, VERSION),
    RL_REG(SX_REG_, NODE_ID),
    RL_REG(SX_REG_, NUM_NODES),
    RL_REG(SX_REG_, CTRL),
    RL_REG(SX_REG_, STATUS),
    RL_REG(SX_REG_, IRQ_STATUS),
    RL_REG(SX_REG_, IRQ_MASK),
    RL_REG(SX_REG_, TX_DOORBELL),
    RL_REG(SX_REG_, TX_COMPLETE),
    RL_REG(SX_REG_, RX_POP),
    RL_REG(SX_REG_, RX_RELEASE),
    RL_REG(SX_REG_, ERROR),
    RL_REG(SX_REG_, PEERS_UP),
    RL_REG(SX_REG_, TX_MSGS),
    RL_REG(SX_REG_, RX_MSGS),
    RL_REG(SX_REG_, TX_ERRORS),
    RL_REG(SX_REG_, BAD_DOORBELLS),
    { 0, NULL }
};

static uint64_t sx_reg_read(SxState *s, hwaddr addr)
{
    switch (addr) {
    case SX_REG_ID: return SX_ID_VALUE;
    case SX_REG_VERSION: return 1;
    case SX_REG_NODE_ID: return s->rl->node;
    case SX_REG_NUM_NODES: return s->rl->nodes;
    case SX_REG_CTRL: return s->ctrl;
    case SX_REG_STATUS:
        return (s->rl->port && rl_port_is_up(s->rl->port) ? SX_STATUS_LINK_UP : 0) |
               (sx_ready(s) ? SX_STATUS_READY : 0);
    case SX_REG_IRQ_STATUS: return s->rl->irq_status;
    case SX_REG_IRQ_MASK: return s->rl->irq_mask;
    case SX_REG_TX_COMPLETE:
        return rl_fifo_pop(&s->txc, 0);        /* empty: no valid bit */
    case SX_REG_RX_POP:
        return rl_fifo_pop(&s->rxp, 0);
    case SX_REG_ERROR: return s->error;
    case SX_REG_PEERS_UP: return s->peers_up;
    case SX_REG_TX_MSGS: return s->tx_msgs;
    case SX_REG_RX_MSGS: return s->rx_msgs;
    case SX_REG_TX_ERRORS: return s->tx_errors;
    case SX_REG_BAD_DOORBELLS: return s->bad_doorbells;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "retrolink-sx: read of unknown register 0x%"
                      HWADDR_PRIx "\n", addr);
        return 0;
    }
}

static uint64_t sx_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    SxState *s = opaque;

    if (!sx_access_ok(addr, size, false)) {
        return 0;
    }
    uint64_t val = sx_reg_read(s, addr);
    trace_retrolink_sx_reg_read(s->rl->node, rl_reg_name(sx_reg_names, addr), addr, val);
    return val;
}

static void sx_mmio_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    SxState *s = opaque;

    if (!sx_access_ok(addr, size, true)) {
        return;
    }
    trace_retrolink_sx_reg_write(s->rl->node, rl_reg_name(sx_reg_names, addr), addr, val);
    switch (addr) {
    case SX_REG_CTRL:
        if (val & SX_CTRL_RESET) {
            sx_board_reset(s);
        } else {
            if ((val & SX_CTRL_ENABLE) && !(s->ctrl & SX_CTRL_ENABLE)) {
                /* the SXM boots its firmware and joins the ring */
                s->ready_at = sx_now() + s->start_ns;
            }
            s->ctrl = val & SX_CTRL_ENABLE;
        }
        break;
    case SX_REG_IRQ_STATUS:
        rl_board_ack(s->rl, val);
        break;
    case SX_REG_IRQ_MASK:
        rl_board_set_mask(s->rl, val);
        break;
    case SX_REG_TX_DOORBELL:
        sx_doorbell(s, val);
        break;
    case SX_REG_RX_RELEASE:
        sx_rx_release(s, val);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "retrolink-sx: write to read-only or unknown "
                      "register 0x%" HWADDR_PRIx "\n", addr);
        break;
    }
}

/*
 * Every width and alignment is valid and implemented here, so that the memory core
 * passes each access on whole: with a narrower .valid, a DMA-style access (qtest's
 * readq, address_space_rw) is split into 32-bit pieces that each have a register's
 * side effects, and the core logs refusals as invalid_mem, not guest_errors. The
 * handlers enforce sx-regs.h's 32-bit rule (sx_access_ok).
 */
static const MemoryRegionOps sx_mmio_ops = {
    .read = sx_mmio_read,
    .write = sx_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

/* ---- migration --------------------------------------------------------------- */

/*
 * Everything the board's behaviour depends on is saved, but not what holds a message:
 * a job in the SXM's firmware, a frame the ring is delivering, a DMA into an rx slot, a
 * message waiting for a free one. A snapshot is taken at a barrier where nothing is on
 * the ring, and a board with any of these refuses it, naming them. The fabric
 * connection (the port) is the link port's. post_load checks every index and length
 * that came from the stream, so that a corrupted stream cannot make the board reach
 * past an array: docs/boards/sx.md, "Snapshots".
 */

/* The kinds an event in the stream may have: those without ptr. */
static bool sx_event_check(void *opaque, const RlEvent *ev, Error **errp)
{
    switch (ev->kind) {
    case SX_EV_TX_BUS_DONE:
    case SX_EV_TIMEOUT:
        if (ev->cls != RL_EV_CLASS_INTERNAL || ev->arg >= SX_TX_SLOTS) {
            error_setg(errp, "class %u, tx slot %u: not an internal event of a slot below %d",
                       ev->cls, ev->arg, SX_TX_SLOTS);
            return false;
        }
        return true;
    case SX_EV_LINK: {
        uint32_t peer = ev->arg & ~(1u << 31);
        if (ev->cls != RL_EV_CLASS_LINK || ev->key != peer || peer >= RL_MAX_NODES) {
            error_setg(errp, "class %u, key %" PRIu64 ", peer %u: not a link event of a "
                       "node below %d", ev->cls, ev->key, peer, RL_MAX_NODES);
            return false;
        }
        return true;
    }
    default:
        error_setg(errp, "not a kind of event a snapshot holds (those carry a message)");
        return false;
    }
}

static const char *sx_job_name(enum SxJobKind kind)
{
    switch (kind) {
    case SX_JOB_SEND: return "send";
    case SX_JOB_RECV: return "receive";
    default: return "confirmation";
    }
}

static int sx_pre_save(void *opaque)
{
    SxState *s = opaque;
    g_autoptr(GString) what = g_string_new(NULL);
    uint32_t n = 0;

    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        if (!ev->ptr) {
            continue;
        }
        if (n++ >= 8) {
            continue;           /* counted, not listed */
        }
        g_string_append(what, n > 1 ? "; " : "");
        switch (ev->kind) {
        case SX_EV_CPU_DONE: {
            SxJob *job = ev->ptr;
            g_string_append_printf(what, "a %s job in the SXM firmware until %" PRIu64 " ns",
                                   sx_job_name(job->kind), ev->time);
            if (job->kind == SX_JOB_RECV) {
                g_string_append_printf(what, " (a message from node %u)", job->msg->src);
            } else {
                g_string_append_printf(what, " (tx slot %u)", job->slot);
            }
            break;
        }
        case SX_EV_ARRIVE: {
            SxMsg *m = ev->ptr;
            g_string_append_printf(what, "a %s from node %u arriving at %" PRIu64 " ns",
                                   m->wire.type == SX_WIRE_MSG ? "message" : "confirmation",
                                   m->src, ev->time);
            break;
        }
        case SX_EV_RX_BUS_DONE:
            g_string_append_printf(what, "a message from node %u in DMA to rx slot %u "
                                   "until %" PRIu64 " ns", ((SxMsg *)ev->ptr)->src, ev->arg,
                                   ev->time);
            break;
        default:
            g_string_append_printf(what, "an event of kind %d", ev->kind);
            break;
        }
    }
    if (n > 8) {
        g_string_append_printf(what, "; and %u more", n - 8);
    }
    if (!g_queue_is_empty(&s->waiting)) {
        g_string_append_printf(what, "%s%u received messages waiting for a free rx slot",
                               n ? "; " : "", g_queue_get_length(&s->waiting));
        n++;
    }
    if (n) {
        error_report("retrolink-sx node %u: cannot save the board with messages in "
                     "flight: %s", s->rl->node, what->str);
        return -EINVAL;
    }
    return 0;
}

/* The stream replaces the board's state: drop what it holds now. */
static int sx_pre_load(void *opaque)
{
    SxState *s = opaque;
    SxMsg *m;

    rl_sched_filter(&s->rl->sched, sx_drop_event, s);
    while ((m = g_queue_pop_head(&s->waiting))) {
        g_free(m);
    }
    return 0;
}

static int sx_post_load(void *opaque, int version_id)
{
    SxState *s = opaque;

    if (s->ctrl & ~SX_CTRL_ENABLE) {
        return rl_board_refuse(s->rl, "ctrl 0x%x has bits other than ENABLE", s->ctrl);
    }
    if (s->error > SX_ERR_RX_SLOT) {
        return rl_board_refuse(s->rl, "error %u is not an SX_ERR_*", s->error);
    }
    if (s->bus.n != s->bus_channels) {
        return rl_board_refuse(s->rl, "bus has %u channels, this board bus-channels=%u", s->bus.n,
                         s->bus_channels);
    }
    for (uint32_t i = 0; i < SX_TX_SLOTS; i++) {
        if (s->tx_state[i] > SX_TX_AWAIT_CONFIRM) {
            return rl_board_refuse(s->rl, "tx_state[%u] %u is not a tx slot state", i, s->tx_state[i]);
        }
        if (s->tx_state[i] != SX_TX_IDLE && s->tx_dst[i] >= s->rl->nodes) {
            return rl_board_refuse(s->rl, "tx_dst[%u] %u is not a node below %u", i, s->tx_dst[i],
                             s->rl->nodes);
        }
        if (s->tx_wire[i].len > SX_MAX_MSG) {
            return rl_board_refuse(s->rl, "tx_wire[%u].len %u is more than %d", i, s->tx_wire[i].len,
                             SX_MAX_MSG);
        }
    }
    for (uint32_t j = 0; j < SX_RX_SLOTS; j++) {
        /* a DMA holds a message, which a snapshot does not: none is in the stream */
        if (s->rx_state[j] != SX_RX_FREE && s->rx_state[j] != SX_RX_HOST) {
            return rl_board_refuse(s->rl, "rx_state[%u] %u is not free or held by the host", j,
                             s->rx_state[j]);
        }
    }
    return 0;
}

static const VMStateDescription vmstate_sx_wire = {
    .name = "retrolink-sx-wire",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(type, SxWire),
        VMSTATE_UINT8(slot, SxWire),
        VMSTATE_UINT16(rsvd, SxWire),
        VMSTATE_UINT32(tag, SxWire),
        VMSTATE_UINT32(len, SxWire),
        VMSTATE_UINT32(gen, SxWire),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_sx = {
    .name = TYPE_RETROLINK_SX,
    .version_id = 3,
    .minimum_version_id = 3,
    .pre_save = sx_pre_save,
    .pre_load = sx_pre_load,
    .post_load = sx_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_PCI_BOARD(SxState),
        VMSTATE_UINT32(ctrl, SxState),
        VMSTATE_UINT64(ready_at, SxState),
        VMSTATE_UINT32(error, SxState),
        VMSTATE_UINT32(peers_up, SxState),
        VMSTATE_UINT32(tx_msgs, SxState),
        VMSTATE_UINT32(rx_msgs, SxState),
        VMSTATE_UINT32(tx_errors, SxState),
        VMSTATE_UINT32(bad_doorbells, SxState),
        VMSTATE_UINT32_ARRAY(tx_state, SxState, SX_TX_SLOTS),
        VMSTATE_UINT32_ARRAY(tx_gen, SxState, SX_TX_SLOTS),
        VMSTATE_UINT32_ARRAY(tx_dst, SxState, SX_TX_SLOTS),
        VMSTATE_UINT32_ARRAY(rx_state, SxState, SX_RX_SLOTS),
        VMSTATE_RL_FIFO(txc, SxState),
        VMSTATE_RL_FIFO(rxp, SxState),
        /* the board's internals */
        VMSTATE_BUFFER_UNSAFE(tx_data, SxState, 0, sizeof(((SxState *)0)->tx_data)),
        VMSTATE_STRUCT_ARRAY(tx_wire, SxState, SX_TX_SLOTS, 0, vmstate_sx_wire, SxWire),
        VMSTATE_RL_SERVER(cpu, SxState),
        VMSTATE_RL_CHANNELS(bus, SxState),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- QOM ------------------------------------------------------------------- */

/* Its own part of realize (rl-board.h): the properties, the registers, the window. */
static bool sx_realize(void *dev, Error **errp)
{
    SxState *s = dev;

    if (!s->sxm_mips_str) {
        s->sxm_mips_str = g_strdup("1.9");      /* GMICRO/100: 1.9 VAX MIPS */
    }
    if (qemu_strtod_finite(s->sxm_mips_str, NULL, &s->sxm_mips) < 0 ||
        s->sxm_mips <= 0 || s->sxm_mips > 1e6) {
        error_setg(errp, "retrolink-sx: sxm-mips must be a number in (0, 1e6], not '%s'",
                   s->sxm_mips_str);
        return false;
    }
    if (s->bus_channels < 1 || s->bus_channels > RL_MAX_CHANNELS || s->bus_rate == 0) {
        error_setg(errp, "retrolink-sx: bus-channels must be 1..%d and bus-channel-rate > 0",
                   RL_MAX_CHANNELS);
        return false;
    }
    if (s->confirm_bytes < sizeof(SxWire) || s->confirm_bytes > SX_MAX_MSG ||
        s->confirm_timeout_us == 0) {
        error_setg(errp, "retrolink-sx: confirm-bytes must be %zu..%d and "
                   "confirm-timeout-us > 0", sizeof(SxWire), SX_MAX_MSG);
        return false;
    }
    s->send_ns = sx_insns_ns(s, s->send_insns);
    s->recv_ns = sx_insns_ns(s, s->recv_insns);
    s->confirm_ns = sx_insns_ns(s, s->confirm_insns);
    s->start_ns = s->rl->start_us * 1000;
    s->bus.n = s->bus_channels;
    g_queue_init(&s->waiting);
    rl_fifo_init(&s->txc, s->rl, "TX_COMPLETE", SX_TXC_DEPTH, sx_txc_ok, s);
    rl_fifo_init(&s->rxp, s->rl, "RX_POP", SX_RX_SLOTS, sx_rxp_ok, s);

    memory_region_init_io(&s->regs, OBJECT(s), &sx_mmio_ops, s, "retrolink-sx-regs", 4 * KiB);
    s->rl->bar[0] = &s->regs;
    if (!memory_region_init_ram(&s->window, OBJECT(s), "retrolink-sx-window",
                                SX_WINDOW_SIZE, errp)) {
        error_prepend(errp, "retrolink-sx: ");
        return false;
    }
    s->win = memory_region_get_ram_ptr(&s->window);
    s->rl->bar[2] = &s->window;
    s->rl->bar_flags[2] = PCI_BASE_ADDRESS_MEM_PREFETCH;
    return true;
}

/* The least delay from an arriving frame to one it causes (docs/boards/sx.md). */
static uint64_t sx_reaction_ns(void *dev)
{
    SxState *s = dev;

    return MIN(s->recv_ns, s->send_ns);
}

static void sx_unrealize(void *dev)
{
    SxState *s = dev;

    sx_board_reset(s);
    rl_sched_filter(&s->rl->sched, sx_drop_event, s);
}

static void sx_reset(void *dev)
{
    sx_board_reset(dev);
}

static const RlBoardInfo sx_board_info = {
    .name = TYPE_RETROLINK_SX,
    .port_name = "sx",
    .protocol = RL_PROTO_SX,
    .irq_all = SX_IRQ_ALL,
    .max_nodes = RL_MAX_NODES,
    .port_ops = &sx_link_ops,
    .event = sx_event,
    .event_check = sx_event_check,
    .realize = sx_realize,
    .reaction_ns = sx_reaction_ns,
    .unrealize = sx_unrealize,
    .reset = sx_reset,
};

/* Defaults are the paper's (sure-sx.md); machines/sure-sx.toml names each source. */
static const Property sx_properties[] = {
    DEFINE_PROP_STRING("sxm-mips", SxState, sxm_mips_str),
    DEFINE_PROP_UINT64("fw-send-insns", SxState, send_insns, 595),
    DEFINE_PROP_UINT64("fw-recv-insns", SxState, recv_insns, 701),
    DEFINE_PROP_UINT64("fw-confirm-insns", SxState, confirm_insns, 0),
    DEFINE_PROP_UINT32("confirm-bytes", SxState, confirm_bytes, 16),
    DEFINE_PROP_UINT64("confirm-timeout-us", SxState, confirm_timeout_us, 100000),
    DEFINE_RL_BOARD_START_US(SxState, 25000),
    DEFINE_PROP_UINT32("bus-channels", SxState, bus_channels, 4),
    DEFINE_PROP_UINT64("bus-channel-rate", SxState, bus_rate, 10000000),
};

static void sx_instance_init(Object *obj)
{
    RETROLINK_SX(obj)->rl = rl_pci_board(obj);
}

static void sx_class_init(ObjectClass *klass, void *data)
{
    rl_pci_board_class_set(klass, &sx_board_info, SX_PCI_VENDOR_ID, SX_PCI_DEVICE_ID, 1,
                           "SX message processor (SURE SYSTEM2000) on a retrolink FDDI ring",
                           &vmstate_sx);
    device_class_set_props(DEVICE_CLASS(klass), sx_properties);
}

static const TypeInfo sx_info = {
    .name = TYPE_RETROLINK_SX,
    .parent = TYPE_RL_PCI_BOARD,
    .instance_size = sizeof(SxState),
    .instance_init = sx_instance_init,
    .class_init = sx_class_init,
};

static void sx_register_types(void)
{
    type_register_static(&sx_info);
}

type_init(sx_register_types)
