/*
 * The VIA NIC: frames from the link (via-regs.h; docs/boards/via.md, "Timing").
 *
 * Every frame is checked by the NIC's engine ('frame-ns') when it arrives. The first
 * frame of a message (DATA or DGRAM) takes the next receive descriptor of its VI: the
 * DMA engine fetches it and the NIC checks it ('desc-ns'). Each frame's payload is
 * then written by DMA into the descriptor's segments; after the last, the descriptor's
 * Length, ImmediateData and Status are written back and (DATA) the ACK goes out. An
 * ACK completes a send (via-tx.c), a BREAK breaks the VI, a CM message is queued in
 * the mailbox.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

#include "via.h"
#include "hw/retrolink/trace.h"

static void via_rx_drop(ViaState *s, ViaFrame *f, const char *why, bool count)
{
    trace_retrolink_via_rx_drop(s->rl->node, f->wire.dst_vi, why, via_now());
    if (count) {
        s->rx_drops++;
    }
    g_free(f);
}

/* A message's first frame takes VI v's next receive descriptor (checked at 'ready'). */
static void via_rx_first(ViaState *s, uint32_t v, ViaFrame *f, uint64_t ready)
{
    ViaVi *vi = &s->vi[v];
    ViaWq *wq = &vi->wq[1];
    bool dgram = f->wire.type == VIA_F_DGRAM;
    uint32_t status;

    vi->rx_busy = true;
    vi->rx_has_desc = false;
    vi->rx_src = f->peer;
    vi->rx_len = 0;
    vi->rx_msg_len = f->wire.msg_len;
    vi->rx_status = 0;
    if (!wq->count) {
        if (dgram) {
            s->rx_drops++;
            trace_retrolink_via_rx_drop(s->rl->node, v, "no receive descriptor", ready);
            return;
        }
        /* reliable delivery: the connection breaks, the send gets a transport error */
        trace_retrolink_via_rx_drop(s->rl->node, v, "no receive descriptor: the VI breaks",
                                    ready);
        via_send_ack(s, f->peer, v, f->wire.src_vi, f->wire.seq, VIP_STATUS_TRANSPORT_ERROR,
                     ready);
        via_vi_break(s, v, false, ready);
        return;
    }
    uint64_t db = via_wq_pop(wq);
    bool ok = via_desc_read(s, vi, db, &vi->rx, &status);
    uint64_t t = via_dma(s, ready, ok ? sizeof(vi->rx.cs) + vi->rx.cs.seg_count * 16
                                      : sizeof(vi->rx.cs));
    t = rl_server_run(&s->nic, t, s->desc_ns);
    vi->rx_ready = t;
    if (!ok) {
        rl_board_guest_error(s->rl, "VI %u: the receive descriptor at handle %u offset 0x%x "
                             "cannot be read: the VI breaks", v, VIA_DB_HANDLE(db),
                             VIA_DB_OFFSET(db));
        s->desc_errors++;
        if (!dgram) {
            via_send_ack(s, f->peer, v, f->wire.src_vi, f->wire.seq,
                         VIP_STATUS_PROTECTION_ERROR, t);
        }
        via_vi_break(s, v, false, t);
        return;
    }
    if (!status) {
        status = via_rx_check(s, vi, &vi->rx, f->wire.msg_len);
    }
    if (status) {
        /* the receive descriptor gets the error; a connected VI breaks after its ACK */
        trace_retrolink_via_rx_error(s->rl->node, v, status, t);
        ViaDone *d = via_done_new(v, 1, db, status);
        d->write_len = true;
        if (!dgram) {
            d->ack = true;
            d->ack_peer = f->peer;
            d->ack_vi = f->wire.src_vi;
            d->ack_seq = f->wire.seq;
        }
        via_complete(s, d, t);
        if (!dgram) {
            via_vi_break(s, v, false, t);
        }
        return;
    }
    vi->rx_has_desc = true;
}

/* The message under way has all its frames and the DMA is writing them (rx_written). */
static bool via_rx_writing(ViaVi *vi)
{
    return vi->rx_busy && vi->rx_len == vi->rx_msg_len;
}

/* VI v's first waiting frame is looked at again at 'at' (VIA_EV_RX_AGAIN). */
static void via_rx_wake_at(ViaState *s, uint32_t v, uint64_t at)
{
    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_INTERNAL, 0, VIA_EV_RX_AGAIN, v,
                 s->vi[v].rx_gen, NULL);
}

/*
 * A DATA or DGRAM frame checked by the NIC at 'ready', looked at when it arrives, or
 * again (from the VI's rx_queue) when it can be taken.
 */
static void via_rx_data(ViaState *s, ViaFrame *f, uint64_t ready, bool again)
{
    uint32_t v = f->wire.dst_vi;
    bool dgram = f->wire.type == VIA_F_DGRAM;

    if (v >= VIA_MAX_VIS) {
        via_rx_drop(s, f, "no such VI", dgram);
        return;
    }
    ViaVi *vi = &s->vi[v];
    if (dgram ? vi->state != VIA_VI_DATAGRAM
              : (vi->state != VIA_VI_CONNECTED || vi->peer_node != f->peer ||
                 vi->peer_vi != f->wire.src_vi)) {
        via_rx_drop(s, f, "the VI does not take it", dgram);
        return;
    }
    if (!again && (via_rx_writing(vi) || !g_queue_is_empty(&vi->rx_queue))) {
        /*
         * The NIC takes the frames that follow a message (the next message) from its
         * receive buffer once that message is written, in the order they came: a frame
         * that comes while others wait waits behind them.
         */
        f->ready = ready;
        g_queue_push_tail(&vi->rx_queue, f);
        if (vi->rx_queue.length == 1) {
            via_rx_wake_at(s, v, MAX(ready, vi->rx_written));
        }
        return;
    }
    if (f->wire.flags & VIA_FF_FIRST) {
        if (vi->rx_busy) {
            via_rx_drop(s, f, "a message is under way on the VI", dgram);
            return;
        }
        if (!dgram && f->wire.seq != vi->rx_seq) {
            via_rx_drop(s, f, "not the next message", false);
            return;
        }
        via_rx_first(s, v, f, ready);
        if (!vi->rx_has_desc) {
            /* dropped to its last frame: its frames are counted as they come, so that
             * the next one is known for the next of this message */
            vi->rx_len = f->len;
            if (vi->state == VIA_VI_ERROR || (f->wire.flags & VIA_FF_LAST)) {
                vi->rx_busy = false;
            }
            g_free(f);
            return;
        }
    } else if (!vi->rx_busy || vi->rx_src != f->peer || f->wire.offset != vi->rx_len ||
               f->wire.msg_len != vi->rx_msg_len) {
        via_rx_drop(s, f, "not the next frame of the message under way", dgram);
        return;
    } else if (!vi->rx_has_desc) {
        vi->rx_len += f->len;
        if (f->wire.flags & VIA_FF_LAST) {
            vi->rx_busy = false;
        }
        via_rx_drop(s, f, "its message is dropped", false);
        return;
    }
    vi->rx_len += f->len;
    if (f->wire.flags & VIA_FF_LAST) {
        vi->rx_seq += !dgram;
    }
    uint64_t t = MAX(ready, vi->rx_ready);
    if (f->len) {
        t = via_dma(s, t, f->len);
    }
    vi->rx_written = t;
    rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, VIA_EV_RX_WRITE, v, vi->rx_gen, f);
}

/*
 * VI v's waiting frames are taken in order, each once it is checked and the message
 * before it is written; the first that must wait longer keeps its place.
 */
void via_rx_again(ViaState *s, uint32_t v)
{
    ViaVi *vi = &s->vi[v];
    ViaFrame *f;

    while ((f = g_queue_peek_head(&vi->rx_queue))) {
        if (via_rx_writing(vi) || f->ready > via_now()) {
            via_rx_wake_at(s, v, MAX(f->ready, via_rx_writing(vi) ? vi->rx_written : 0));
            return;
        }
        g_queue_pop_head(&vi->rx_queue);
        via_rx_data(s, f, via_now(), true);
    }
}

/* VI v's receive stops (or the board resets): its waiting frames are dropped. */
void via_rx_queue_clear(ViaVi *vi)
{
    ViaFrame *f;

    while ((f = g_queue_pop_head(&vi->rx_queue))) {
        g_free(f);
    }
}

/* A frame's payload DMA ended: into the descriptor's segments; the last completes it. */
void via_rx_write(ViaState *s, uint32_t v, ViaFrame *f)
{
    ViaVi *vi = &s->vi[v];
    bool dgram = f->wire.type == VIA_F_DGRAM;

    if (!vi->rx_status &&
        !via_seg_rw(s, vi, &vi->rx, f->wire.offset, f->data, f->len, true)) {
        rl_board_guest_error(s->rl, "VI %u: a region of the receive under way is no more: "
                             "protection error", v);
        vi->rx_status = VIP_STATUS_PROTECTION_ERROR;
    }
    if (!(f->wire.flags & VIA_FF_LAST)) {
        g_free(f);
        return;
    }
    ViaDone *d = via_done_new(v, 1, vi->rx.db, vi->rx_status);
    d->write_len = true;
    d->length = f->wire.msg_len;
    if (f->wire.flags & VIA_FF_IMMEDIATE) {
        d->immediate = f->wire.immediate;
        d->status |= VIP_STATUS_IMMEDIATE;
    }
    if (!dgram) {
        d->ack = true;
        d->ack_peer = f->peer;
        d->ack_vi = f->wire.src_vi;
        d->ack_seq = f->wire.seq;
    }
    vi->rx_busy = false;
    if (!vi->rx_status) {
        s->rx_msgs++;
    }
    trace_retrolink_via_rx_msg(s->rl->node, v, f->peer, f->wire.msg_len, via_now());
    uint32_t err = vi->rx_status;
    g_free(f);
    via_complete(s, d, via_now());
    if (err && !dgram) {
        via_vi_break(s, v, false, via_now());
    }
}

/* A frame's last byte reached the NIC: its engine checks it. */
void via_rx_arrive(ViaState *s, ViaFrame *f)
{
    if (!via_ready(s)) {
        via_rx_drop(s, f, "the NIC is not on the switch",
                    f->wire.type == VIA_F_DGRAM || f->wire.type == VIA_F_CM);
        return;
    }
    uint64_t t = rl_server_run(&s->nic, via_now(), s->frame_ns);
    uint32_t v = f->wire.dst_vi;

    switch (f->wire.type) {
    case VIA_F_CM:
        rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, VIA_EV_CM_IN, 0, 0, f);
        return;
    case VIA_F_ACK:
        if (v < VIA_MAX_VIS && s->vi[v].peer_node == f->peer &&
            s->vi[v].peer_vi == f->wire.src_vi) {
            via_tx_ack(s, v, f->wire.seq, f->wire.status, t);
        }
        g_free(f);
        return;
    case VIA_F_BREAK:
        if (v < VIA_MAX_VIS && s->vi[v].state == VIA_VI_CONNECTED &&
            s->vi[v].peer_node == f->peer && s->vi[v].peer_vi == f->wire.src_vi) {
            via_vi_break(s, v, false, t);
        }
        g_free(f);
        return;
    default:
        via_rx_data(s, f, t, false);
        return;
    }
}

/* A CM message is checked: into the mailbox, unless it is full. */
void via_cm_in(ViaState *s, ViaFrame *f)
{
    if (s->cm_rx.count + VIA_CM_ENTRY_WORDS > s->cm_rx.depth) {
        via_rx_drop(s, f, "the CM mailbox is full", true);
        return;
    }
    rl_fifo_push(&s->cm_rx, f->peer);
    for (uint32_t i = 0; i < VIA_CM_WORDS; i++) {
        rl_fifo_push(&s->cm_rx, ldl_le_p(f->data + 4 * i));
    }
    trace_retrolink_via_cm_in(s->rl->node, f->peer, via_now());
    g_free(f);
    rl_board_raise(s->rl, VIA_IRQ_CM);
}
