/*
 * The VIA NIC: completions (via-regs.h, "Completion queues", "Interrupts for blocking
 * waits"; docs/boards/via.md, "Timing").
 *
 * A descriptor completes by a DMA write of its Status (a send: 4 bytes) or of its
 * Length, ImmediateData and Status (a receive: 12 bytes, Status last); at its end the
 * queue's count goes up, an armed queue raises its event, and the CQ entry (8 bytes)
 * is booked on the DMA engine. A receive on a connected VI is acknowledged once its
 * write-back has ended. Breaking a VI flushes what is posted on it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

#include "via.h"
#include "hw/retrolink/trace.h"

ViaDone *via_done_new(uint32_t v, uint32_t q, uint64_t db, uint32_t status)
{
    ViaDone *d = g_new0(ViaDone, 1);

    d->vi = v;
    d->q = q;
    d->db = db;
    d->status = status;
    return d;
}

/*
 * The window address of the descriptor db names, for its control segment, writable
 * with the VI's tag; false if it cannot be written.
 */
static bool via_desc_status_map(ViaState *s, ViaVi *vi, uint64_t db, uint64_t *pages,
                                uint64_t *win)
{
    uint32_t h = VIA_DB_HANDLE(db), off = VIA_DB_OFFSET(db);

    if (h == 0 || h > VIA_MAX_REGIONS) {
        return false;
    }
    ViaRegion *r = &s->mr[h - 1];
    if (!r->ptag || r->ptag != vi->ptag || (off & (VIA_DESC_ALIGN - 1)) ||
        (uint64_t)off + sizeof(struct via_control_segment) > r->len) {
        return false;
    }
    *win = (uint64_t)r->tpt * VIA_PAGE + (r->va & (VIA_PAGE - 1)) + off;
    return rl_dma_window_map(&s->tpt, *win, sizeof(struct via_control_segment), true,
                             vi->ptag, pages);
}

void via_send_ack(ViaState *s, uint32_t peer, uint32_t src_vi, uint32_t dst_vi,
                  uint32_t seq, uint32_t status, uint64_t ready)
{
    ViaFrame *f = via_frame_new(s, VIA_F_ACK, peer, 0);

    f->wire.src_vi = src_vi;
    f->wire.dst_vi = dst_vi;
    f->wire.seq = seq;
    f->wire.status = status;
    via_frame_out(s, f, ready);
}

/*
 * Descriptor d of VI d->vi completes: book its write-back on the DMA engine from
 * 'ready'. One that cannot be written (its handle, range or tag) breaks the VI, unless
 * it is being flushed.
 */
void via_complete(ViaState *s, ViaDone *d, uint64_t ready)
{
    ViaVi *vi = &s->vi[d->vi];
    uint64_t pages[2], win;

    d->gen = vi->gen;
    d->status |= VIP_STATUS_DONE | (d->q ? VIP_STATUS_OP_RECEIVE : VIP_STATUS_OP_SEND);
    if (d->status & VIP_STATUS_ERROR_MASK) {
        s->desc_errors++;
    }
    trace_retrolink_via_complete(s->rl->node, d->vi, d->q, d->status, ready);
    if (!via_desc_status_map(s, vi, d->db, pages, &win)) {
        rl_board_guest_error(s->rl, "VI %u: the Status of the descriptor at handle %u "
                             "offset 0x%x cannot be written", d->vi,
                             VIA_DB_HANDLE(d->db), VIA_DB_OFFSET(d->db));
        if (d->ack) {
            via_send_ack(s, d->ack_peer, d->vi, d->ack_vi, d->ack_seq,
                         VIP_STATUS_PROTECTION_ERROR, ready);
        }
        /* a flushed one is from a VI being broken, disconnected or closed already */
        if (!(d->status & VIP_STATUS_DESC_FLUSHED_ERROR)) {
            via_vi_break(s, d->vi, false, ready);
        }
        g_free(d);
        return;
    }
    uint64_t end = via_dma(s, ready, d->write_len ? 12 : 4);
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, VIA_EV_WB, d->vi, d->gen, d);
}

static void via_raise_event(ViaState *s, uint32_t *armed, uint32_t *events, uint32_t bit)
{
    uint32_t w = bit / 32, m = 1u << (bit % 32);

    if (armed[w] & m) {
        armed[w] &= ~m;
        events[w] |= m;
        rl_board_raise(s->rl, VIA_IRQ_DONE);
    }
}

/* The write-back ended: the descriptor is complete; its CQ entry next. */
void via_wb_done(ViaState *s, ViaDone *d)
{
    ViaVi *vi = &s->vi[d->vi];
    uint64_t pages[2], win;
    uint8_t buf[12];

    if (d->gen != vi->gen) {
        g_free(d);
        return;
    }
    /* checked again: a region cleared since is not written */
    if (via_desc_status_map(s, vi, d->db, pages, &win)) {
        stl_le_p(buf, d->immediate);
        stl_le_p(buf + 4, d->length);
        stl_le_p(buf + 8, d->status);
        if (d->write_len) {
            rl_dma_window_rw(&s->tpt, pages, win,
                             offsetof(struct via_control_segment, immediate), buf, 8, true);
        }
        rl_dma_window_rw(&s->tpt, pages, win, offsetof(struct via_control_segment, status),
                         buf + 8, 4, true);
    }
    trace_retrolink_via_status(s->rl->node, d->vi, d->q, d->status, d->length, via_now());
    vi->wq[d->q].done++;
    via_raise_event(s, s->vi_armed, s->vi_events, 2 * d->vi + d->q);
    if (d->ack) {
        via_send_ack(s, d->ack_peer, d->vi, d->ack_vi, d->ack_seq, d->status, via_now());
    }
    d->cq = d->q ? vi->recv_cq : vi->send_cq;
    if (d->cq >= VIA_MAX_CQS) {
        g_free(d);
        return;
    }
    uint64_t end = via_dma(s, via_now(), sizeof(struct via_cq_entry));
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, VIA_EV_CQE, d->cq, 0, d);
}

/* The CQ entry's DMA ended: into its slot, unless the slot is still valid. */
void via_cqe_done(ViaState *s, ViaDone *d)
{
    ViaCq *cq = &s->cq[d->cq];
    uint32_t c = d->cq;

    if (!(cq->status & VIA_CQ_ACTIVE)) {
        g_free(d);
        return;
    }
    uint64_t slot = cq->addr + (uint64_t)(cq->count & (cq->entries - 1)) * 8;
    uint8_t e[8] = { 0 };
    rl_board_dma_read(s->rl, slot, e, 4);
    if (ldl_le_p(e) & VIA_CQE_VALID) {
        trace_retrolink_via_cq_overflow(s->rl->node, c, cq->count, via_now());
        cq->status |= VIA_CQ_OVERFLOW;
        s->cq_errors |= 1u << c;
        rl_board_raise(s->rl, VIA_IRQ_ERROR);
        g_free(d);
        return;
    }
    stl_le_p(e, VIA_CQE_VALID | d->q << 16 | d->vi);
    stl_le_p(e + 4, cq->count);
    /* the seq word first, the word with VALID last */
    rl_board_dma_write(s->rl, slot + 4, e + 4, 4);
    rl_board_dma_write(s->rl, slot, e, 4);
    trace_retrolink_via_cqe(s->rl->node, c, cq->count, d->vi, d->q, via_now());
    cq->count++;
    via_raise_event(s, &s->cq_armed, &s->cq_events, c);
    g_free(d);
}

/* Drop VI v's send (or receive) under way: its events in flight are stale. */
static void via_vi_stop(ViaVi *vi, uint32_t q)
{
    if (q == 0) {
        vi->tx_busy = false;
        vi->tx_unacked = vi->tx_held = 0;
        vi->tx_gen++;
    } else {
        vi->rx_busy = false;
        via_rx_queue_clear(vi);     /* and its event is stale with the old rx_gen */
        vi->rx_gen++;
    }
}

/* Everything posted on queue q of VI v completes with DESC_FLUSHED_ERROR. */
void via_vi_flush(ViaState *s, uint32_t v, uint32_t q, uint64_t ready)
{
    ViaWq *wq = &s->vi[v].wq[q];

    via_vi_stop(&s->vi[v], q);
    while (wq->count) {
        uint64_t db = via_wq_pop(wq);
        via_complete(s, via_done_new(v, q, db, VIP_STATUS_DESC_FLUSHED_ERROR), ready);
    }
}

void via_vi_abort(ViaState *s, uint32_t v)
{
    via_vi_stop(&s->vi[v], 0);
    via_vi_stop(&s->vi[v], 1);
}

/*
 * VI v breaks: to ERROR, what is posted on it is flushed, VIA_IRQ_ERROR with its bit;
 * tell_peer: a BREAK frame tells its peer VI (from 'ready', through the NIC).
 */
void via_vi_break(ViaState *s, uint32_t v, bool tell_peer, uint64_t ready)
{
    ViaVi *vi = &s->vi[v];

    if (vi->state == VIA_VI_CLOSED || vi->state == VIA_VI_ERROR) {
        return;
    }
    trace_retrolink_via_break(s->rl->node, v, tell_peer, ready);
    if (tell_peer && vi->state == VIA_VI_CONNECTED) {
        ViaFrame *f = via_frame_new(s, VIA_F_BREAK, vi->peer_node, 0);
        f->wire.src_vi = v;
        f->wire.dst_vi = vi->peer_vi;
        via_frame_out(s, f, ready);
    }
    vi->state = VIA_VI_ERROR;
    s->vi_errors[v / 32] |= 1u << (v % 32);
    rl_board_raise(s->rl, VIA_IRQ_ERROR);
    via_vi_flush(s, v, 0, ready);
    via_vi_flush(s, v, 1, ready);
}

bool via_cq_in_use(ViaState *s, uint32_t c)
{
    for (uint32_t v = 0; v < VIA_MAX_VIS; v++) {
        if (s->vi[v].state != VIA_VI_CLOSED &&
            (s->vi[v].send_cq == c || s->vi[v].recv_cq == c)) {
            return true;
        }
    }
    return false;
}
