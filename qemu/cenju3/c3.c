/*
 * NEC Cenju-3 network interface (one per processing element, here a PCI device on the
 * x86 nodes) on a retrolink network of the `min` topology: the fabric models the
 * multistage network (4 stages of 4x4 switches, 40 MB/s links, 250 ns per stage).
 * Register map and rings: retrolink/regs/cenju3-regs.h; packets:
 * retrolink/proto/cenju3.h; behaviour and timing: docs/boards/cenju3.md.
 *
 * The interface is modelled from its components, each a timed resource (c3.h): the
 * PE's bus for the CPU's uncached accesses and cache operations (rl-bus), the request
 * engine with its DMA and packet stage (c3-tx.c), the receive side with its FIFO
 * (c3-rx.c), and the event ring (c3-evq.c). Everything runs as events at exact
 * virtual times (rl-sched), and everything but packets still in the network is saved.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "exec/address-spaces.h"
#include "system/dma.h"

#include "c3.h"
#include "hw/retrolink/trace.h"

/* ---- helpers ---------------------------------------------------------------------- */

bool c3_enabled(C3State *s)
{
    return s->ctrl & C3_CTRL_ENABLE;
}

/* Enabled, and start-us have passed: on the network, taking requests and packets. */
bool c3_ready(C3State *s)
{
    return c3_enabled(s) && c3_now() >= s->ready_at;
}

static bool c3_as_ram_ok(AddressSpace *as, uint64_t addr, uint64_t len, bool write)
{
    if (len == 0 || addr > UINT64_MAX - (len - 1)) {
        return false;
    }
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr xlat, plen = len;
        MemoryRegion *mr = address_space_translate(as, addr, &xlat, &plen, write,
                                                   MEMTXATTRS_UNSPECIFIED);
        if (!memory_region_is_ram(mr) || memory_region_is_romd(mr) ||
            (write && mr->readonly) || plen == 0) {
            return false;
        }
        plen = MIN(plen, len);
        addr += plen;
        len -= plen;
    }
    return true;
}

/* As the interface reaches memory: through its bus master (off: nothing is RAM). */
bool c3_ram_ok(C3State *s, uint64_t addr, uint64_t len, bool write)
{
    return c3_as_ram_ok(s->rl->dma_as, addr, len, write);
}

/* As the CPU sees memory: a cache operation is the CPU's, whatever the interface's DMA. */
bool c3_cpu_ram_ok(uint64_t addr, uint64_t len)
{
    return c3_as_ram_ok(&address_space_memory, addr, len, false);
}

/* ---- events ----------------------------------------------------------------------- */

static void c3_event(void *opaque, RlEvent *ev)
{
    C3State *s = opaque;

    switch (ev->kind) {
    case C3_EVK_READY:
        if (ev->gen == s->enable_gen && c3_ready(s)) {
            c3_tx_kick(s, c3_now());
            c3_rx_kick(s, c3_now());
        }
        break;
    case C3_EVK_TX_TAKE:
        if (ev->gen == s->tx_gen) {
            c3_tx_take(s);
        }
        break;
    case C3_EVK_TX_DMA:
        if (ev->gen == s->tx_gen) {
            c3_tx_dma_done(s, ev->arg);
        }
        break;
    case C3_EVK_TX_OUT:
        if (ev->gen == s->tx_gen) {
            c3_tx_out(s, ev->arg);
        }
        break;
    case C3_EVK_ARRIVE:
        c3_rx_push(s, ev->ptr);
        g_free(ev->ptr);
        break;
    case C3_EVK_RX_DONE:
        if (ev->gen == s->rx_gen) {
            c3_rx_done(s);
        }
        break;
    }
}

/* ---- the fabric side ---------------------------------------------------------------- */

static void c3_link_frame(void *opaque, uint64_t at, uint64_t seq, uint32_t src,
                          uint32_t flags, const uint8_t *data, uint32_t len)
{
    C3State *s = opaque;
    C3Packet *p = g_new(C3Packet, 1);
    const char *why = NULL;

    if (!c3_packet_decode(p, data, len, &why)) {
        /* the fabric's (or the peer board's) fault, not this guest's */
    } else if (p->src != src || src >= s->rl->nodes || p->dest != s->rl->node) {
        why = "whose source or destination is not the fabric's";
    }
    if (why) {
        warn_report("retrolink-cenju3 node %u: the fabric delivered a malformed packet from "
                    "node %u (%u bytes), %s: dropped", s->rl->node, src, len, why);
        g_free(p);
        return;
    }
    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_FRAME, seq, C3_EVK_ARRIVE, 0, 0, p);
}

static void c3_link_status(void *opaque, uint64_t at, uint32_t peer, bool up)
{
    C3State *s = opaque;

    /* the Cenju-3's network is reliable and has no notion of a peer's link: a trace */
    trace_retrolink_c3_peer(s->rl->node, peer, up, at);
}

/* The least time from the guest's doorbell (at 'go') to a packet on the network. */
static uint64_t c3_send_ns(C3State *s)
{
    return s->reg_access_ns + s->req_setup_ns + rl_bytes_ns(1, s->dma_rate) +
           s->packet_setup_ns;
}

/* The guest's part of a send (RlPortOps.lead): from its doorbell to the packet. */
static uint64_t c3_lead(void *opaque)
{
    return c3_send_ns(opaque);
}

/*
 * The earliest time a packet the interface already has leaves it (RL_TIME_NEVER:
 * none); its queue of events is all it has, and rl-board publishes this at each change:
 *  - a packet in the packet stage leaves at its event's time;
 *  - one whose DMA ends at its event passes the packet stage after;
 *  - a request being taken needs a DMA of a byte at least and the packet stage;
 *  - requests queued before the interface is on the network are taken at READY.
 */
static uint64_t c3_pending(void *opaque, uint64_t now)
{
    C3State *s = opaque;
    uint64_t p = RL_TIME_NEVER;

    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        switch (ev->kind) {
        case C3_EVK_TX_OUT:
            p = MIN(p, ev->time);
            break;
        case C3_EVK_TX_DMA:
            p = MIN(p, ev->time + s->packet_setup_ns);
            break;
        case C3_EVK_TX_TAKE:
            p = MIN(p, ev->time + rl_bytes_ns(1, s->dma_rate) + s->packet_setup_ns);
            break;
        case C3_EVK_READY:
            p = MIN(p, ev->time + c3_send_ns(s) - s->reg_access_ns);
            break;
        }
    }
    return p == RL_TIME_NEVER ? p : MAX(p, now);
}

/*
 * The earliest time a packet could leave the interface if none arrived (the interface
 * never answers a packet by itself: only the guest does): one it already has
 * (c3_pending), or one the guest, acting at guest_ns, sends with one register store
 * (REQ_TAIL) and a whole request, or, with the interface off, start-us first.
 */
static uint64_t c3_promise(void *opaque, uint64_t now, uint64_t guest_ns)
{
    C3State *s = opaque;
    uint64_t p = RL_TIME_NEVER;

    if (guest_ns != RL_TIME_NEVER) {
        p = rl_board_guest_go(s->rl, c3_enabled(s), s->ready_at, guest_ns) + c3_send_ns(s);
    }
    return MAX(MIN(p, c3_pending(s, now)), now);
}

/* The cluster started: node ids are 0 .. nodes - 1. */
static void c3_link_welcome(void *opaque, uint32_t nodes)
{
    C3State *s = opaque;

    s->rl->nodes = MIN(nodes, C3_MAX_NODES);
}

static const RlPortOps c3_link_ops = {
    .welcome = c3_link_welcome,
    .frame = c3_link_frame,
    .link = c3_link_status,
    .promise = c3_promise,
    .lead = c3_lead,
    .pending = c3_pending,
};

/*
 * Least delay from a packet arriving to a packet this port sends because of it: the
 * receive side's packet stage (the first the guest can see of it), the guest's
 * REQ_TAIL store, taking the request, and the transmit packet stage.
 */
static uint64_t c3_reaction_ns(void *dev)
{
    C3State *s = dev;

    return s->packet_setup_ns + c3_send_ns(s);
}

/* ---- reset --------------------------------------------------------------------------- */

static bool c3_keep_arrivals(void *opaque, RlEvent *ev)
{
    return ev->kind == C3_EVK_ARRIVE;
}

static bool c3_drop_event(void *opaque, RlEvent *ev)
{
    g_free(ev->ptr);
    return false;
}

/* Back to power-on: everything inside the interface is gone, but what the network is
 * still delivering (it arrives into the FIFO, and waits there until enabled). */
void c3_board_reset(C3State *s)
{
    uint32_t nodes = s->rl->nodes, tx_gen = s->tx_gen, rx_gen = s->rx_gen;
    uint32_t enable_gen = s->enable_gen;

    c3_tx_stop(s);
    c3_rx_flush(s);
    rl_sched_filter(&s->rl->sched, c3_keep_arrivals, s);
    s->ctrl = s->rl->irq_status = s->rl->irq_mask = s->error = 0;
    s->req_base_lo = s->req_base_hi = s->req_size = 0;
    s->evq_base_lo = s->evq_base_hi = s->evq_size = 0;
    s->rxt_base_lo = s->rxt_base_hi = s->rxt_slots = 0;
    s->req_tail = s->req_head = s->evq_tail = s->evq_head = 0;
    s->cache_addr_lo = s->cache_addr_hi = s->cache_len = s->now_hi = 0;
    s->tx_packets = s->rx_packets = s->req_errors = s->stalls = 0;
    s->cache_misses = s->rdma_errors = s->cache_ops = 0;
    s->ready_at = 0;
    s->ledger_next = s->ledger_count = 0;
    memset(s->ledger_addr, 0, sizeof(s->ledger_addr));
    memset(s->ledger_len, 0, sizeof(s->ledger_len));
    memset(&s->cur, 0, sizeof(s->cur));
    memset(s->rx_next_slot, 0, sizeof(s->rx_next_slot));
    s->rx_target = 0;
    s->rx_err = s->rx_slot = 0;
    s->evq_wait_n = s->evq_reserved = 0;
    s->stalled = false;
    s->rl->nodes = nodes;
    s->tx_gen = tx_gen;
    s->rx_gen = rx_gen;
    s->enable_gen = enable_gen + 1;
    rl_board_update_irq(s->rl);
}

/* ---- migration ------------------------------------------------------------------------ */

/*
 * Everything the behaviour depends on is saved, work in flight included (a request
 * half sent, packets in the FIFO, events waiting for room): only packets still in the
 * network (an arrival not yet due, or held past the FIFO) and a held vCPU refuse a
 * save, naming them. post_load checks every index, length and state that came from
 * the stream (docs/boards/cenju3.md, "Snapshots").
 */
static bool c3_event_check(void *opaque, const RlEvent *ev, Error **errp)
{
    if (ev->cls != RL_EV_CLASS_INTERNAL || ev->kind < C3_EVK_READY ||
        ev->kind > C3_EVK_RX_DONE || ev->kind == C3_EVK_ARRIVE ||
        ((ev->kind == C3_EVK_TX_DMA || ev->kind == C3_EVK_TX_OUT) && ev->arg >= C3_TXBUF)) {
        error_setg(errp, "kind %d, class %u: not an event of the interface's own, or its "
                   "buffer is not below %d", ev->kind, ev->cls, C3_TXBUF);
        return false;
    }
    return true;
}

static int c3_pre_save(void *opaque)
{
    C3State *s = opaque;
    g_autoptr(GString) what = g_string_new(NULL);

    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        if (ev->kind == C3_EVK_ARRIVE) {
            C3Packet *p = ev->ptr;
            g_string_append_printf(what, "; a packet from node %u in the network until %"
                                   PRIu64 " ns", p->src, ev->time);
        }
    }
    if (!g_queue_is_empty(&s->rx_held)) {
        g_string_append_printf(what, "; %u packets held in the network past the FIFO",
                               g_queue_get_length(&s->rx_held));
    }
    if (rl_bus_stalling(&s->bus)) {
        g_string_append_printf(what, "; the vCPU held by an access until %" PRIu64 " ns",
                               s->bus.free_at);
    }
    if (what->len) {
        error_report("retrolink-cenju3 node %u: cannot save the interface%s", s->rl->node,
                     what->str);
        return -EINVAL;
    }
    /* the FIFO, in order from its head */
    s->vm_fifo_count = s->rx_count;
    s->vm_fifo = g_new(C3Packet, MAX(s->rx_count, 1));
    for (uint32_t i = 0; i < s->rx_count; i++) {
        s->vm_fifo[i] = s->rx_fifo[(s->rx_first + i) % C3_RX_FIFO_MAX];
    }
    return 0;
}

static int c3_post_save(void *opaque)
{
    C3State *s = opaque;

    g_free(s->vm_fifo);
    s->vm_fifo = NULL;
    s->vm_fifo_count = 0;
    return 0;
}

static int c3_pre_load(void *opaque)
{
    C3State *s = opaque;
    C3Packet *p;

    rl_sched_filter(&s->rl->sched, c3_drop_event, s);
    while ((p = g_queue_pop_head(&s->rx_held))) {
        g_free(p);
    }
    g_free(s->vm_fifo);
    s->vm_fifo = NULL;
    s->vm_fifo_count = 0;
    return 0;
}

/* Before the FIFO is allocated: a count from the stream is not trusted. */
static bool c3_fifo_count_ok(void *opaque, int version_id)
{
    C3State *s = opaque;

    if (s->vm_fifo_count < 0 || s->vm_fifo_count > C3_RX_FIFO_MAX) {
        error_report("retrolink-cenju3 node %u: the stream's FIFO holds %d packets, not "
                     "0..%d", s->rl->node, s->vm_fifo_count, C3_RX_FIFO_MAX);
        return false;
    }
    return true;
}

static bool c3_packet_ok(C3State *s, const C3Packet *p)
{
    return (p->kind == C3_PKT_MSG || p->kind == C3_PKT_RDMA) && p->len >= 1 &&
           p->len <= C3_PACKET_MAX && p->src < s->rl->nodes && p->dest < s->rl->nodes &&
           p->state <= C3_TXB_OUT;
}

static bool c3_ring_size_ok(uint32_t size)
{
    return size >= 2 && size <= C3_RING_MAX && is_power_of_2(size);
}

static int c3_check_loaded(C3State *s)
{
    if (s->ctrl & ~C3_CTRL_ENABLE) {
        return rl_board_refuse(s->rl, "ctrl 0x%x has bits other than ENABLE", s->ctrl);
    }
    if (s->error > C3_ERR_NO_SLOT || s->rx_err > C3_ERR_NO_SLOT) {
        return rl_board_refuse(s->rl, "error %u or rx_err %u is not a C3_ERR_*", s->error, s->rx_err);
    }
    if (s->ledger_count > C3_FLUSH_LEDGER || s->ledger_next >= C3_FLUSH_LEDGER) {
        return rl_board_refuse(s->rl, "flush ledger has %u entries, next %u, not at most %d",
                         s->ledger_count, s->ledger_next, C3_FLUSH_LEDGER);
    }
    if (s->evq_wait_n > C3_EVQ_WAIT_MAX || s->evq_reserved > 1) {
        return rl_board_refuse(s->rl, "event wait list has %u events and %u reserved, not at most "
                         "%d and 1", s->evq_wait_n, s->evq_reserved, C3_EVQ_WAIT_MAX);
    }
    if (c3_enabled(s)) {
        if (!c3_ring_size_ok(s->req_size) || !c3_ring_size_ok(s->evq_size) ||
            s->rxt_slots < 1 || s->rxt_slots > C3_MAX_SLOTS) {
            return rl_board_refuse(s->rl, "interface is enabled with rings of %u and %u entries and "
                             "%u slots per peer", s->req_size, s->evq_size, s->rxt_slots);
        }
        if (s->req_tail - s->req_head > s->req_size ||
            s->evq_head - s->evq_tail + s->evq_reserved > s->evq_size) {
            return rl_board_refuse(s->rl, "rings have request head %u tail %u of %u, event head %u "
                             "tail %u of %u", s->req_head, s->req_tail, s->req_size,
                             s->evq_head, s->evq_tail, s->evq_size);
        }
        for (uint32_t p = 0; p < C3_MAX_NODES; p++) {
            if (s->rx_next_slot[p] >= s->rxt_slots) {
                return rl_board_refuse(s->rl, "next slot %u of peer %u is not below %u",
                                 s->rx_next_slot[p], p, s->rxt_slots);
            }
        }
        if (s->rx_slot >= s->rxt_slots) {
            return rl_board_refuse(s->rl, "receive slot %u is not below %u", s->rx_slot,
                             s->rxt_slots);
        }
    } else if (s->tx_active || s->tx_take_pending || s->tx_dma_busy || s->rx_busy ||
               s->evq_wait_n || s->evq_reserved) {
        return rl_board_refuse(s->rl, "interface is off but has work under way");
    }
    if (s->tx_active && (s->cur.len == 0 || s->cur.len > C3_REQ_MAX ||
                         s->cur.off >= s->cur.len || s->cur.dest >= s->rl->nodes ||
                         (s->cur.op != C3_OP_MSG && s->cur.op != C3_OP_RDMA))) {
        return rl_board_refuse(s->rl, "request under way has op %u, %u of %u bytes, to node %u",
                         s->cur.op, s->cur.off, s->cur.len, s->cur.dest);
    }
    for (uint32_t b = 0; b < C3_TXBUF; b++) {
        if (s->txbuf[b].state != C3_TXB_FREE && !c3_packet_ok(s, &s->txbuf[b])) {
            return rl_board_refuse(s->rl, "transmit buffer %u holds a bad packet (kind %u, %u bytes, "
                             "state %u)", b, s->txbuf[b].kind, s->txbuf[b].len,
                             s->txbuf[b].state);
        }
    }
    for (int32_t i = 0; i < s->vm_fifo_count; i++) {
        if (!c3_packet_ok(s, &s->vm_fifo[i])) {
            return rl_board_refuse(s->rl, "FIFO packet %d is bad (kind %u, %u bytes, from node %u)", i,
                             s->vm_fifo[i].kind, s->vm_fifo[i].len, s->vm_fifo[i].src);
        }
    }
    if (s->rx_busy && s->vm_fifo_count == 0) {
        return rl_board_refuse(s->rl, "receive side is busy with an empty FIFO");
    }
    return 0;
}

static int c3_post_load(void *opaque, int version_id)
{
    C3State *s = opaque;
    int ret = c3_check_loaded(s);

    if (ret == 0) {
        memcpy(s->rx_fifo, s->vm_fifo, s->vm_fifo_count * sizeof(C3Packet));
        s->rx_first = 0;
        s->rx_count = s->vm_fifo_count;
    }
    g_free(s->vm_fifo);
    s->vm_fifo = NULL;
    s->vm_fifo_count = 0;
    return ret;
}

static const VMStateDescription vmstate_c3_packet = {
    .name = "retrolink-cenju3-packet",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(kind, C3Packet),
        VMSTATE_UINT32(flags, C3Packet),
        VMSTATE_UINT32(src, C3Packet),
        VMSTATE_UINT32(dest, C3Packet),
        VMSTATE_UINT32(len, C3Packet),
        VMSTATE_UINT64(raddr, C3Packet),
        VMSTATE_UINT32(tag, C3Packet),
        VMSTATE_UINT32(req_len, C3Packet),
        VMSTATE_UINT32(state, C3Packet),
        VMSTATE_UINT32(req_index, C3Packet),
        VMSTATE_UINT32(req_flags, C3Packet),
        VMSTATE_BUFFER(data, C3Packet),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_c3_req = {
    .name = "retrolink-cenju3-req",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(index, C3Req),
        VMSTATE_UINT32(op, C3Req),
        VMSTATE_UINT32(dest, C3Req),
        VMSTATE_UINT32(len, C3Req),
        VMSTATE_UINT32(tag, C3Req),
        VMSTATE_UINT32(flags, C3Req),
        VMSTATE_UINT64(src, C3Req),
        VMSTATE_UINT64(raddr, C3Req),
        VMSTATE_UINT32(off, C3Req),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_c3_ev = {
    .name = "retrolink-cenju3-ev",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(kind, C3Ev),
        VMSTATE_UINT32(flags, C3Ev),
        VMSTATE_UINT32(src, C3Ev),
        VMSTATE_UINT32(info, C3Ev),
        VMSTATE_UINT32(tag, C3Ev),
        VMSTATE_UINT32(len, C3Ev),
        VMSTATE_UINT32(status, C3Ev),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_c3 = {
    .name = TYPE_RETROLINK_CENJU3,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = c3_pre_save,
    .post_save = c3_post_save,
    .pre_load = c3_pre_load,
    .post_load = c3_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_PCI_BOARD(C3State),
        VMSTATE_UINT32(ctrl, C3State),
        VMSTATE_UINT32(error, C3State),
        VMSTATE_UINT32(req_base_lo, C3State),
        VMSTATE_UINT32(req_base_hi, C3State),
        VMSTATE_UINT32(req_size, C3State),
        VMSTATE_UINT32(evq_base_lo, C3State),
        VMSTATE_UINT32(evq_base_hi, C3State),
        VMSTATE_UINT32(evq_size, C3State),
        VMSTATE_UINT32(rxt_base_lo, C3State),
        VMSTATE_UINT32(rxt_base_hi, C3State),
        VMSTATE_UINT32(rxt_slots, C3State),
        VMSTATE_UINT32(req_tail, C3State),
        VMSTATE_UINT32(req_head, C3State),
        VMSTATE_UINT32(evq_tail, C3State),
        VMSTATE_UINT32(evq_head, C3State),
        VMSTATE_UINT32(cache_addr_lo, C3State),
        VMSTATE_UINT32(cache_addr_hi, C3State),
        VMSTATE_UINT32(cache_len, C3State),
        VMSTATE_UINT32(now_hi, C3State),
        VMSTATE_UINT32(tx_packets, C3State),
        VMSTATE_UINT32(rx_packets, C3State),
        VMSTATE_UINT32(req_errors, C3State),
        VMSTATE_UINT32(stalls, C3State),
        VMSTATE_UINT32(cache_misses, C3State),
        VMSTATE_UINT32(rdma_errors, C3State),
        VMSTATE_UINT32(cache_ops, C3State),
        VMSTATE_UINT64(ready_at, C3State),
        VMSTATE_UINT32(enable_gen, C3State),
        VMSTATE_UINT64_ARRAY(ledger_addr, C3State, C3_FLUSH_LEDGER),
        VMSTATE_UINT32_ARRAY(ledger_len, C3State, C3_FLUSH_LEDGER),
        VMSTATE_UINT32(ledger_next, C3State),
        VMSTATE_UINT32(ledger_count, C3State),
        VMSTATE_BOOL(tx_take_pending, C3State),
        VMSTATE_BOOL(tx_active, C3State),
        VMSTATE_BOOL(tx_dma_busy, C3State),
        VMSTATE_STRUCT(cur, C3State, 1, vmstate_c3_req, C3Req),
        VMSTATE_STRUCT_ARRAY(txbuf, C3State, C3_TXBUF, 1, vmstate_c3_packet, C3Packet),
        VMSTATE_RL_SERVER(tx_stage, C3State),
        VMSTATE_UINT32(tx_gen, C3State),
        VMSTATE_BOOL(rx_busy, C3State),
        VMSTATE_BOOL(rx_stalled, C3State),
        VMSTATE_UINT64(rx_target, C3State),
        VMSTATE_UINT32(rx_err, C3State),
        VMSTATE_UINT32(rx_slot, C3State),
        VMSTATE_UINT32(rx_gen, C3State),
        VMSTATE_UINT32_ARRAY(rx_next_slot, C3State, C3_MAX_NODES),
        VMSTATE_STRUCT_ARRAY(evq_wait, C3State, C3_EVQ_WAIT_MAX, 1, vmstate_c3_ev, C3Ev),
        VMSTATE_UINT32(evq_wait_n, C3State),
        VMSTATE_UINT32(evq_reserved, C3State),
        VMSTATE_BOOL(stalled, C3State),
        VMSTATE_INT32(vm_fifo_count, C3State),
        VMSTATE_VALIDATE("FIFO count within the bound", c3_fifo_count_ok),
        VMSTATE_STRUCT_VARRAY_ALLOC(vm_fifo, C3State, vm_fifo_count, 0, vmstate_c3_packet,
                                    C3Packet),
        VMSTATE_RL_BUS(bus, C3State),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- QOM -------------------------------------------------------------------------------- */

/* Its own part of realize (rl-board.h): the properties, the BAR, the receive FIFO. */
static bool c3_realize(void *dev, Error **errp)
{
    C3State *s = dev;

    if (s->dma_rate == 0 || s->dma_rate > 1000000000000ull) {
        error_setg(errp, "retrolink-cenju3: dma-rate must be 1..10^12 bytes per second");
        return false;
    }
    if (s->reg_access_ns > 1000000000 || s->req_setup_ns > 1000000000 ||
        s->packet_setup_ns > 1000000000 || s->cache_op_ns > 1000000000 ||
        s->cache_line_ns > 1000000) {
        error_setg(errp, "retrolink-cenju3: reg-access-ns, req-setup-ns, packet-setup-ns "
                   "and cache-op-ns must be at most 1 s, cache-line-ns at most 1 ms");
        return false;
    }
    memory_region_init_io(&s->bar, OBJECT(s), &c3_bar_ops, s, "retrolink-cenju3",
                          C3_BAR_SIZE);
    s->rl->bar[0] = &s->bar;
    rl_bus_init(&s->bus, 0);            /* fixed-time accesses only: rl_bus_hold() */
    s->rx_fifo = g_new0(C3Packet, C3_RX_FIFO_MAX);
    g_queue_init(&s->rx_held);
    return true;
}

static void c3_unrealize(void *dev)
{
    C3State *s = dev;

    c3_board_reset(s);
    rl_sched_filter(&s->rl->sched, c3_drop_event, s);
    g_free(s->rx_fifo);
    s->rx_fifo = NULL;
    g_free(s->vm_fifo);
    s->vm_fifo = NULL;
    rl_bus_destroy(&s->bus);
}

static void c3_reset(void *dev)
{
    C3State *s = dev;

    c3_board_reset(s);
    rl_bus_release(&s->bus);
    s->bus.free_at = 0;
}

static const RlBoardInfo c3_board_info = {
    .name = TYPE_RETROLINK_CENJU3,
    .port_name = "cenju3",
    .protocol = RL_PROTO_CENJU3,
    .irq_all = C3_IRQ_ALL,
    .max_nodes = C3_MAX_NODES,
    .port_ops = &c3_link_ops,
    .event = c3_event,
    .event_check = c3_event_check,
    .realize = c3_realize,
    .reaction_ns = c3_reaction_ns,
    .unrealize = c3_unrealize,
    .reset = c3_reset,
};

/* Defaults and their sources: docs/boards/cenju3.md, "Timing". */
static const Property c3_properties[] = {
    DEFINE_PROP_UINT64("reg-access-ns", C3State, reg_access_ns, 200),
    DEFINE_PROP_UINT64("dma-rate", C3State, dma_rate, 100000000),
    DEFINE_PROP_UINT64("req-setup-ns", C3State, req_setup_ns, 1000),
    DEFINE_PROP_UINT64("packet-setup-ns", C3State, packet_setup_ns, 400),
    DEFINE_PROP_UINT64("cache-op-ns", C3State, cache_op_ns, 200),
    DEFINE_PROP_UINT64("cache-line-ns", C3State, cache_line_ns, 40),
    DEFINE_RL_BOARD_START_US(C3State, 10000),
};

static void c3_instance_init(Object *obj)
{
    RETROLINK_CENJU3(obj)->rl = rl_pci_board(obj);
}

static void c3_class_init(ObjectClass *klass, void *data)
{
    rl_pci_board_class_set(klass, &c3_board_info, C3_PCI_VENDOR_ID, C3_PCI_DEVICE_ID,
                           C3_VERSION,
                           "NEC Cenju-3 network interface on a retrolink multistage network",
                           &vmstate_c3);
    device_class_set_props(DEVICE_CLASS(klass), c3_properties);
}

static const TypeInfo c3_info = {
    .name = TYPE_RETROLINK_CENJU3,
    .parent = TYPE_RL_PCI_BOARD,
    .instance_size = sizeof(C3State),
    .instance_init = c3_instance_init,
    .class_init = c3_class_init,
};

static void c3_register_types(void)
{
    type_register_static(&c3_info);
}

type_init(c3_register_types)
