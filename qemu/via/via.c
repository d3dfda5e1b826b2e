/*
 * The VIA NIC (a Giganet cLAN-like Virtual Interface Architecture adapter) on the PCI
 * bus of a PC, on a retrolink network whose `switch` topology models cLAN's switch.
 * Register map and behaviour: retrolink/regs/via-regs.h; frames: retrolink/proto/via.h;
 * timing: docs/boards/via.md. The NIC is modelled from its components, each a timed
 * resource (via.h): the PCI bus for the CPU's programmed I/O (rl-bus), the DMA engine
 * (the bus master) and the NIC's engine (descriptors and frames). Everything runs as
 * events at exact virtual times (rl-sched).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"

#include "via.h"
#include "hw/retrolink/trace.h"

/* ---- state and resources ---------------------------------------------------------- */

/* Enabled and on the switch: takes frames and sends them. */
bool via_ready(ViaState *s)
{
    return (s->ctrl & VIA_CTRL_ENABLE) && via_now() >= s->ready_at;
}

/* One DMA transfer of 'bytes': 'dma-setup-ns' and the bytes at 'dma-rate'. */
uint64_t via_dma_ns(ViaState *s, uint64_t bytes)
{
    return s->dma_setup_ns + rl_bytes_ns(bytes, s->dma_rate);
}

uint64_t via_dma(ViaState *s, uint64_t ready, uint64_t bytes)
{
    return rl_server_run(&s->dma, ready, via_dma_ns(s, bytes));
}

ViaFrame *via_frame_new(ViaState *s, uint32_t type, uint32_t peer, uint32_t len)
{
    ViaFrame *f = g_malloc0(sizeof(ViaFrame) + len);

    f->peer = peer;
    f->len = len;
    f->wire.type = type;
    f->wire.src_node = s->rl->node;
    return f;
}

void via_frame_out(ViaState *s, ViaFrame *f, uint64_t ready)
{
    uint64_t t = rl_server_run(&s->nic, ready, s->frame_ns);

    rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, VIA_EV_TX_OUT, 0, 0, f);
}

/* ---- events ------------------------------------------------------------------------ */

static void via_link_event(ViaState *s, uint32_t peer, bool up)
{
    if (peer < 32) {
        s->peers_up = up ? s->peers_up | (1u << peer) : s->peers_up & ~(1u << peer);
    }
    trace_retrolink_via_peer(s->rl->node, peer, up, via_now());
    rl_board_raise(s->rl, VIA_IRQ_LINK);
}

static void via_event(void *opaque, RlEvent *ev)
{
    ViaState *s = opaque;

    switch (ev->kind) {
    case VIA_EV_TX_START:
        if (s->vi[ev->arg].tx_busy && s->vi[ev->arg].tx_gen == ev->gen) {
            via_tx_start(s, ev->arg);
        }
        break;
    case VIA_EV_TX_DMA:
        if (s->vi[ev->arg].tx_busy && s->vi[ev->arg].tx_gen == ev->gen) {
            via_tx_dma(s, ev->arg);
        }
        break;
    case VIA_EV_TX_OUT:
        via_tx_out(s, ev->ptr);
        break;
    case VIA_EV_ARRIVE:
        via_rx_arrive(s, ev->ptr);
        break;
    case VIA_EV_RX_WRITE:
    case VIA_EV_RX_AGAIN:
        if (s->vi[ev->arg].rx_gen != ev->gen) {
            g_free(ev->ptr);
        } else if (ev->kind == VIA_EV_RX_WRITE) {
            via_rx_write(s, ev->arg, ev->ptr);
        } else {
            via_rx_again(s, ev->arg);
        }
        break;
    case VIA_EV_WB:
        via_wb_done(s, ev->ptr);
        break;
    case VIA_EV_CQE:
        via_cqe_done(s, ev->ptr);
        break;
    case VIA_EV_CM_IN:
        via_cm_in(s, ev->ptr);
        break;
    case VIA_EV_LINK:
        via_link_event(s, ev->arg & ~(1u << 31), ev->arg >> 31);
        break;
    }
}

/* ---- the fabric side ----------------------------------------------------------------- */

static void via_link_frame(void *opaque, uint64_t at, uint64_t seq, uint32_t src,
                           uint32_t flags, const uint8_t *data, uint32_t len)
{
    ViaState *s = opaque;
    ViaWire w;

    if (len < sizeof(w)) {
        warn_report("retrolink-via node %u: the fabric delivered a short frame from node %u "
                    "(%u bytes)", s->rl->node, src, len);
        return;
    }
    memcpy(&w, data, sizeof(w));
    uint32_t payload = len - sizeof(w);
    bool data_frame = w.type == VIA_F_DATA || w.type == VIA_F_DGRAM;
    if (w.type < VIA_F_DATA || w.type > VIA_F_BREAK ||
        (w.type == VIA_F_CM ? payload != VIA_CM_WORDS * 4
                            : data_frame ? payload > VIA_FRAME_PAYLOAD : payload != 0) ||
        (data_frame && (w.msg_len > VIA_MAX_MSG || w.offset > w.msg_len ||
                        payload > w.msg_len - w.offset ||
                        !(w.flags & VIA_FF_LAST) != (w.offset + payload < w.msg_len) ||
                        !(w.flags & VIA_FF_FIRST) != (w.offset != 0)))) {
        warn_report("retrolink-via node %u: the fabric delivered a malformed frame from "
                    "node %u (type %u, %u payload bytes)", s->rl->node, src, w.type, payload);
        return;
    }
    trace_retrolink_via_frame_in(s->rl->node, src, w.type, w.dst_vi, payload, at);
    ViaFrame *f = g_malloc0(sizeof(ViaFrame) + payload);
    f->peer = src;
    f->len = payload;
    f->wire = w;
    memcpy(f->data, data + sizeof(w), payload);
    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_FRAME, seq, VIA_EV_ARRIVE, 0, 0, f);
}

static void via_link_status(void *opaque, uint64_t at, uint32_t peer, bool up)
{
    ViaState *s = opaque;

    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_LINK, peer, VIA_EV_LINK,
                 (peer & 0x7fffffff) | ((uint32_t)up << 31), 0, NULL);
}

/*
 * The least time from a guest action to a frame it makes the NIC send (RlPortOps.lead).
 * Every access holds the PCI bus from the vCPU's time (rl_bus_hold); the quickest send
 * is CM_TX_GO, a frame built by the NIC's engine from the store's end (via_cm_send):
 * 'pio-write-ns' and 'frame-ns'. A doorbell adds the descriptor's fetch and the data's
 * DMA before the frame; a VI command or CTRL sends nothing; a load changes nothing that
 * sends. A NIC not yet on the switch adds its start (via_promise), so less is still true.
 */
static uint64_t via_lead(void *opaque)
{
    ViaState *s = opaque;

    return s->pio_write_ns + s->frame_ns;
}

/*
 * The earliest time a frame the NIC already has, or will make without the guest, could
 * leave (RL_TIME_NEVER: none). The NIC answers frames by itself (an ACK after a receive's
 * write-back, a BREAK), so every event but a link change may lead to one, no earlier
 * than its time: a frame built (VIA_EV_TX_OUT), a send's fetch or data DMA, a frame
 * arrived or being written, a write-back or CQ entry. Its queue of events is all it has:
 * rl-board publishes this at each change of it.
 */
static uint64_t via_pending(void *opaque, uint64_t now)
{
    ViaState *s = opaque;

    return rl_board_events_floor(s->rl, VIA_EV_LINK, now);
}

/*
 * The earliest a frame could leave if none arrived: one the NIC has (via_pending), or
 * one the guest, acting at guest_ns (once the NIC is on the switch), makes it send.
 */
static uint64_t via_promise(void *opaque, uint64_t now, uint64_t guest_ns)
{
    ViaState *s = opaque;

    return rl_board_promise(s->rl, s->ctrl & VIA_CTRL_ENABLE, s->ready_at, guest_ns,
                            via_lead(s), via_pending(s, now), now);
}

static void via_link_welcome(void *opaque, uint32_t nodes)
{
    ViaState *s = opaque;

    s->rl->nodes = nodes;
    for (uint32_t p = 0; p < MIN(s->rl->nodes, 32u); p++) {
        if (p != s->rl->node) {
            s->peers_up |= 1u << p;
        }
    }
}

static const RlPortOps via_link_ops = {
    .welcome = via_link_welcome,
    .frame = via_link_frame,
    .link = via_link_status,
    .promise = via_promise,
    .lead = via_lead,
    .pending = via_pending,
};

/* A frame's check and the next frame's build (an ACK, a BREAK) at least. */
static uint64_t via_reaction_ns(void *dev)
{
    ViaState *s = dev;

    return 2 * s->frame_ns;
}

/* ---- reset --------------------------------------------------------------------------- */

static bool via_keep_link_events(void *opaque, RlEvent *ev)
{
    if (ev->kind == VIA_EV_LINK || ev->kind == VIA_EV_ARRIVE) {
        return true;
    }
    g_free(ev->ptr);
    return false;
}

static bool via_drop_event(void *opaque, RlEvent *ev)
{
    g_free(ev->ptr);
    return false;
}

static bool via_cm_check(void *opaque, uint32_t v)
{
    return true;
}

/* Everything back to power-on but the link: what is in flight is dropped. */
void via_board_reset(ViaState *s)
{
    rl_sched_filter(&s->rl->sched, via_keep_link_events, s);
    for (uint32_t v = 0; v < VIA_MAX_VIS; v++) {
        ViaVi *vi = &s->vi[v];
        uint32_t gen = vi->gen + 1, tx_gen = vi->tx_gen + 1, rx_gen = vi->rx_gen + 1;
        via_rx_queue_clear(vi);
        memset(vi, 0, sizeof(*vi));
        vi->gen = gen;
        vi->tx_gen = tx_gen;
        vi->rx_gen = rx_gen;
    }
    memset(s->mr, 0, sizeof(s->mr));
    memset(s->cq, 0, sizeof(s->cq));
    rl_dma_window_reset(&s->tpt);
    rl_fifo_reset(&s->cm_rx);
    s->ctrl = s->error = 0;
    s->ready_at = 0;
    s->mr_index = s->mr_va_lo = s->mr_va_hi = s->mr_len = s->mr_tpt = s->mr_ptag = 0;
    s->vi_index = s->vi_ptag = s->vi_cq = s->vi_peer = 0;
    s->cq_index = s->cq_addr_lo = s->cq_addr_hi = s->cq_entries = 0;
    memset(s->vi_armed, 0, sizeof(s->vi_armed));
    memset(s->vi_events, 0, sizeof(s->vi_events));
    memset(s->vi_errors, 0, sizeof(s->vi_errors));
    s->cq_armed = s->cq_events = s->cq_errors = 0;
    s->cm_dest = 0;
    memset(s->cm_word, 0, sizeof(s->cm_word));
    s->tx_msgs = s->rx_msgs = s->rx_drops = s->desc_errors = s->db_refused = 0;
    s->dma.free_at = s->nic.free_at = 0;
    s->rl->irq_status = s->rl->irq_mask = 0;
    rl_board_update_irq(s->rl);
}

/* ---- migration ------------------------------------------------------------------------ */

/*
 * Everything the behaviour depends on is saved but what is in flight: a snapshot is
 * taken at a barrier where the NIC is idle, and one with a send, a receive, a
 * completion, a frame or a held vCPU refuses to be saved, naming them. post_load
 * checks every index, count and state that came from the stream.
 */
static bool via_event_check(void *opaque, const RlEvent *ev, Error **errp)
{
    uint32_t peer = ev->arg & ~(1u << 31);

    if (ev->kind != VIA_EV_LINK || ev->cls != RL_EV_CLASS_LINK || ev->key != peer ||
        peer >= RL_MAX_NODES) {
        error_setg(errp, "kind %d, class %u, key %" PRIu64 ": only link events of a node "
                   "below %d are saved", ev->kind, ev->cls, ev->key, RL_MAX_NODES);
        return false;
    }
    return true;
}

static int via_pre_save(void *opaque)
{
    ViaState *s = opaque;
    g_autoptr(GString) what = g_string_new(NULL);

    for (uint32_t v = 0; v < VIA_MAX_VIS; v++) {
        if (s->vi[v].tx_busy || s->vi[v].tx_unacked) {
            g_string_append_printf(what, "; VI %u's send", v);
        }
        if (s->vi[v].rx_busy) {
            g_string_append_printf(what, "; VI %u's receive", v);
        }
    }
    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        if (ev->kind != VIA_EV_LINK) {
            g_string_append_printf(what, "; an event of kind %d at %" PRIu64 " ns", ev->kind,
                                   ev->time);
        }
    }
    if (rl_bus_stalling(&s->bus)) {
        g_string_append_printf(what, "; the vCPU held by a PIO access until %" PRIu64 " ns",
                               s->bus.free_at);
    }
    if (what->len) {
        error_report("retrolink-via node %u: cannot save the NIC with work in flight%s",
                     s->rl->node, what->str);
        return -EINVAL;
    }
    return 0;
}

static int via_pre_load(void *opaque)
{
    ViaState *s = opaque;

    for (uint32_t v = 0; v < VIA_MAX_VIS; v++) {
        via_vi_abort(s, v);
    }
    rl_sched_filter(&s->rl->sched, via_drop_event, s);
    return 0;
}

static bool via_cq_ref_ok(ViaState *s, uint32_t c)
{
    return c == VIA_NO_CQ || (c < VIA_MAX_CQS && (s->cq[c].status & VIA_CQ_ACTIVE));
}

static int via_post_load_vi(ViaState *s, uint32_t v)
{
    ViaVi *vi = &s->vi[v];

    if (vi->state > VIA_VI_DATAGRAM) {
        return rl_board_refuse(s->rl, "VI %u state %u is not a VIA_VI_*", v, vi->state);
    }
    if (vi->db_error > VIA_DBE_ALIGN) {
        return rl_board_refuse(s->rl, "VI %u db_error %u is not a VIA_DBE_*", v,
                               vi->db_error);
    }
    for (uint32_t q = 0; q < 2; q++) {
        if (vi->wq[q].head >= VIA_WQ_DEPTH || vi->wq[q].count > VIA_WQ_DEPTH) {
            return rl_board_refuse(s->rl, "VI %u queue %u has head %u, count %u (depth %d)",
                                   v, q, vi->wq[q].head, vi->wq[q].count, VIA_WQ_DEPTH);
        }
    }
    if (vi->state == VIA_VI_CLOSED) {
        if (vi->wq[0].count || vi->wq[1].count) {
            return rl_board_refuse(s->rl, "VI %u is closed with descriptors posted", v);
        }
        return 0;
    }
    if (vi->ptag == 0 || vi->ptag > 255) {
        return rl_board_refuse(s->rl, "VI %u is open with tag %u", v, vi->ptag);
    }
    if (!via_cq_ref_ok(s, vi->send_cq) || !via_cq_ref_ok(s, vi->recv_cq)) {
        return rl_board_refuse(s->rl, "VI %u uses CQs %u and %u, not set", v, vi->send_cq,
                               vi->recv_cq);
    }
    if ((vi->state == VIA_VI_CONNECTED || vi->state == VIA_VI_ERROR) &&
        (vi->peer_node >= s->rl->nodes || vi->peer_node == s->rl->node ||
         vi->peer_vi >= VIA_MAX_VIS)) {
        return rl_board_refuse(s->rl, "VI %u is connected to node %u VI %u", v,
                               vi->peer_node, vi->peer_vi);
    }
    if (vi->wq[0].count && vi->state != VIA_VI_ERROR && vi->state != VIA_VI_CONNECTED &&
        vi->state != VIA_VI_DATAGRAM) {
        return rl_board_refuse(s->rl, "VI %u has sends posted in state %u", v, vi->state);
    }
    /* saved with no send waiting for its ACK: every message sent was acknowledged */
    vi->tx_ack_seq = vi->tx_seq;
    return 0;
}

static int via_post_load(void *opaque, int version_id)
{
    ViaState *s = opaque;
    int ret;

    if (s->ctrl & ~VIA_CTRL_ENABLE) {
        return rl_board_refuse(s->rl, "ctrl 0x%x has bits other than ENABLE", s->ctrl);
    }
    if (s->error > VIA_ERR_TAG) {
        return rl_board_refuse(s->rl, "error %u is not a VIA_ERR_*", s->error);
    }
    if (s->mr_index >= VIA_MAX_REGIONS || s->vi_index >= VIA_MAX_VIS ||
        s->cq_index >= VIA_MAX_CQS) {
        return rl_board_refuse(s->rl, "indexes MR %u, VI %u, CQ %u out of range",
                               s->mr_index, s->vi_index, s->cq_index);
    }
    if (s->tpt.pages > VIA_TPT_MAX_PAGES || (s->tpt.table_lo & 7)) {
        return rl_board_refuse(s->rl, "TPT of %u pages at 0x%x", s->tpt.pages,
                               s->tpt.table_lo);
    }
    for (uint32_t r = 0; r < VIA_MAX_REGIONS; r++) {
        ViaRegion *m = &s->mr[r];
        uint64_t pages = ((m->va & (VIA_PAGE - 1)) + (uint64_t)m->len + VIA_PAGE - 1) /
                         VIA_PAGE;
        if (!m->ptag) {
            if (m->va || m->len || m->tpt) {
                return rl_board_refuse(s->rl, "region %u is not set but has fields", r);
            }
            continue;
        }
        if (m->ptag > 255 || m->len == 0 || m->va + m->len < m->va ||
            (uint64_t)m->tpt + pages > VIA_TPT_MAX_PAGES) {
            return rl_board_refuse(s->rl, "region %u: tag %u, %u bytes at TPT entry %u", r,
                                   m->ptag, m->len, m->tpt);
        }
    }
    for (uint32_t c = 0; c < VIA_MAX_CQS; c++) {
        ViaCq *cq = &s->cq[c];
        if (cq->status & ~(VIA_CQ_ACTIVE | VIA_CQ_OVERFLOW)) {
            return rl_board_refuse(s->rl, "CQ %u status 0x%x", c, cq->status);
        }
        if ((cq->status & VIA_CQ_ACTIVE) &&
            (!cq->entries || cq->entries > VIA_CQ_MAX_ENTRIES ||
             !is_power_of_2(cq->entries) || (cq->addr & 7))) {
            return rl_board_refuse(s->rl, "CQ %u has %u entries at 0x%" PRIx64, c,
                                   cq->entries, cq->addr);
        }
        if (!(cq->status & VIA_CQ_ACTIVE) && (cq->entries || cq->count || cq->status)) {
            return rl_board_refuse(s->rl, "CQ %u is not set but has fields", c);
        }
    }
    for (uint32_t v = 0; v < VIA_MAX_VIS; v++) {
        ret = via_post_load_vi(s, v);
        if (ret) {
            return ret;
        }
    }
    if (s->cm_rx.count % VIA_CM_ENTRY_WORDS || s->cm_rx.head % VIA_CM_ENTRY_WORDS) {
        return rl_board_refuse(s->rl, "CM mailbox has head %u, count %u: not whole "
                               "messages", s->cm_rx.head, s->cm_rx.count);
    }
    return 0;
}

static const VMStateDescription vmstate_via_region = {
    .name = "retrolink-via-region",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(va, ViaRegion),
        VMSTATE_UINT32(len, ViaRegion),
        VMSTATE_UINT32(tpt, ViaRegion),
        VMSTATE_UINT32(ptag, ViaRegion),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_via_wq = {
    .name = "retrolink-via-wq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64_ARRAY(db, ViaWq, VIA_WQ_DEPTH),
        VMSTATE_UINT32(head, ViaWq),
        VMSTATE_UINT32(count, ViaWq),
        VMSTATE_UINT32(done, ViaWq),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_via_vi = {
    .name = "retrolink-via-vi",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(state, ViaVi),
        VMSTATE_UINT32(ptag, ViaVi),
        VMSTATE_UINT32(send_cq, ViaVi),
        VMSTATE_UINT32(recv_cq, ViaVi),
        VMSTATE_UINT32(peer_node, ViaVi),
        VMSTATE_UINT32(peer_vi, ViaVi),
        VMSTATE_UINT32(db_error, ViaVi),
        VMSTATE_STRUCT_ARRAY(wq, ViaVi, 2, 1, vmstate_via_wq, ViaWq),
        VMSTATE_UINT32(tx_seq, ViaVi),
        VMSTATE_UINT32(rx_seq, ViaVi),
        VMSTATE_UINT32(gen, ViaVi),
        VMSTATE_UINT32(tx_gen, ViaVi),
        VMSTATE_UINT32(rx_gen, ViaVi),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_via_cq = {
    .name = "retrolink-via-cq",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(addr, ViaCq),
        VMSTATE_UINT32(entries, ViaCq),
        VMSTATE_UINT32(status, ViaCq),
        VMSTATE_UINT32(count, ViaCq),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_via = {
    .name = TYPE_RETROLINK_VIA,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = via_pre_save,
    .pre_load = via_pre_load,
    .post_load = via_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_PCI_BOARD(ViaState),
        VMSTATE_UINT32(ctrl, ViaState),
        VMSTATE_UINT32(error, ViaState),
        VMSTATE_UINT64(ready_at, ViaState),
        VMSTATE_UINT32(peers_up, ViaState),
        VMSTATE_RL_DMA_WINDOW(tpt, ViaState),
        VMSTATE_UINT32(mr_index, ViaState),
        VMSTATE_UINT32(mr_va_lo, ViaState),
        VMSTATE_UINT32(mr_va_hi, ViaState),
        VMSTATE_UINT32(mr_len, ViaState),
        VMSTATE_UINT32(mr_tpt, ViaState),
        VMSTATE_UINT32(mr_ptag, ViaState),
        VMSTATE_STRUCT_ARRAY(mr, ViaState, VIA_MAX_REGIONS, 1, vmstate_via_region, ViaRegion),
        VMSTATE_UINT32(vi_index, ViaState),
        VMSTATE_UINT32(vi_ptag, ViaState),
        VMSTATE_UINT32(vi_cq, ViaState),
        VMSTATE_UINT32(vi_peer, ViaState),
        VMSTATE_STRUCT_ARRAY(vi, ViaState, VIA_MAX_VIS, 1, vmstate_via_vi, ViaVi),
        VMSTATE_UINT32(cq_index, ViaState),
        VMSTATE_UINT32(cq_addr_lo, ViaState),
        VMSTATE_UINT32(cq_addr_hi, ViaState),
        VMSTATE_UINT32(cq_entries, ViaState),
        VMSTATE_STRUCT_ARRAY(cq, ViaState, VIA_MAX_CQS, 1, vmstate_via_cq, ViaCq),
        VMSTATE_UINT32_ARRAY(vi_armed, ViaState, 4),
        VMSTATE_UINT32(cq_armed, ViaState),
        VMSTATE_UINT32_ARRAY(vi_events, ViaState, 4),
        VMSTATE_UINT32(cq_events, ViaState),
        VMSTATE_UINT32_ARRAY(vi_errors, ViaState, 2),
        VMSTATE_UINT32(cq_errors, ViaState),
        VMSTATE_UINT32(cm_dest, ViaState),
        VMSTATE_UINT32_ARRAY(cm_word, ViaState, VIA_CM_WORDS),
        VMSTATE_RL_FIFO(cm_rx, ViaState),
        VMSTATE_UINT32(tx_msgs, ViaState),
        VMSTATE_UINT32(rx_msgs, ViaState),
        VMSTATE_UINT32(rx_drops, ViaState),
        VMSTATE_UINT32(desc_errors, ViaState),
        VMSTATE_UINT32(db_refused, ViaState),
        VMSTATE_RL_BUS(bus, ViaState),
        VMSTATE_RL_SERVER(dma, ViaState),
        VMSTATE_RL_SERVER(nic, ViaState),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- QOM --------------------------------------------------------------------------- */

static bool via_realize(void *dev, Error **errp)
{
    ViaState *s = dev;

    if (!s->dma_rate || s->dma_rate > 1000000000000ull) {
        error_setg(errp, "retrolink-via: dma-rate must be 1..10^12 bytes per second");
        return false;
    }
    if (s->pio_write_ns > 1000000000 || s->pio_read_ns > 1000000000 ||
        s->dma_setup_ns > 1000000000 || s->desc_ns > 1000000000 ||
        s->frame_ns > 1000000000) {
        error_setg(errp, "retrolink-via: pio-write-ns, pio-read-ns, dma-setup-ns, desc-ns "
                   "and frame-ns must be at most 1 s");
        return false;
    }
    memory_region_init_io(&s->ctrl_bar, OBJECT(s), &via_ctrl_ops, s, "retrolink-via-ctrl",
                          VIA_CTRL_PAGE_SIZE);
    s->rl->bar[0] = &s->ctrl_bar;
    memory_region_init_io(&s->db_bar, OBJECT(s), &via_db_ops, s, "retrolink-via-db",
                          VIA_MAX_VIS * VIA_DB_PAGE_SIZE);
    s->rl->bar[2] = &s->db_bar;
    /* the bus's rate is unused: every access is held a fixed time (rl_bus_hold) */
    rl_bus_init(&s->bus, 133000000);
    rl_dma_window_init(&s->tpt, s->rl, VIA_PAGE, VIA_TPT_MAX_PAGES);
    rl_fifo_init(&s->cm_rx, s->rl, "CM_RX", VIA_CM_FIFO * VIA_CM_ENTRY_WORDS, via_cm_check,
                 s);
    return true;
}

static void via_unrealize(void *dev)
{
    ViaState *s = dev;

    via_board_reset(s);
    rl_sched_filter(&s->rl->sched, via_drop_event, s);
    rl_bus_destroy(&s->bus);
}

static void via_reset(void *dev)
{
    ViaState *s = dev;

    via_board_reset(s);
    rl_bus_release(&s->bus);
    s->bus.free_at = 0;
}

static const RlBoardInfo via_board_info = {
    .name = TYPE_RETROLINK_VIA,
    .port_name = "via",
    .protocol = RL_PROTO_VIA,
    .irq_all = VIA_IRQ_ALL,
    .max_nodes = RL_MAX_NODES,
    .port_ops = &via_link_ops,
    .event = via_event,
    .event_check = via_event_check,
    .realize = via_realize,
    .reaction_ns = via_reaction_ns,
    .unrealize = via_unrealize,
    .reset = via_reset,
};

/* Defaults and their sources: src/retrolink/boards/via.py, docs/boards/via.md. */
static const Property via_properties[] = {
    DEFINE_PROP_MACADDR("mac", ViaState, mac),
    DEFINE_PROP_UINT64("pio-write-ns", ViaState, pio_write_ns, 150),
    DEFINE_PROP_UINT64("pio-read-ns", ViaState, pio_read_ns, 600),
    DEFINE_PROP_UINT64("dma-rate", ViaState, dma_rate, 133000000),
    DEFINE_PROP_UINT64("dma-setup-ns", ViaState, dma_setup_ns, 500),
    DEFINE_PROP_UINT64("desc-ns", ViaState, desc_ns, 1000),
    DEFINE_PROP_UINT64("frame-ns", ViaState, frame_ns, 200),
    DEFINE_RL_BOARD_START_US(ViaState, 1000),
};

static void via_instance_init(Object *obj)
{
    RETROLINK_VIA(obj)->rl = rl_pci_board(obj);
}

static void via_class_init(ObjectClass *klass, void *data)
{
    rl_pci_board_class_set(klass, &via_board_info, VIA_PCI_VENDOR_ID, VIA_PCI_DEVICE_ID, 1,
                           "VIA NIC (cLAN-like) on a retrolink switch", &vmstate_via);
    device_class_set_props(DEVICE_CLASS(klass), via_properties);
}

static const TypeInfo via_info = {
    .name = TYPE_RETROLINK_VIA,
    .parent = TYPE_RL_PCI_BOARD,
    .instance_size = sizeof(ViaState),
    .instance_init = via_instance_init,
    .class_init = via_class_init,
};

static void via_register_types(void)
{
    type_register_static(&via_info);
}

type_init(via_register_types)
