/*
 * The VIA NIC: the send engine (via-regs.h, "VIs"; docs/boards/via.md, "Timing").
 *
 * A VI sends its posted descriptors one at a time, in order. For the next one of its
 * send queue the DMA engine fetches the descriptor (its control segment and data
 * segments, one transfer), then the NIC's engine checks it ('desc-ns'); then the message
 * is read in pieces of up to VIA_FRAME_PAYLOAD bytes, each a DMA transfer, and each piece
 * is built into a frame by the NIC's engine ('frame-ns') and handed to the link. The
 * DMA of the next piece starts when the previous one ends, so it overlaps the NIC and
 * the link sending the previous frame. On a connected VI the next message's fetch starts
 * when the DMA has read the last piece, while the sent ones wait for their ACKs (as deep
 * as the send queue); each completes, in order, when its ACK arrives. An error found in
 * a message while earlier ones wait completes it once they are acknowledged, so that
 * the queue completes in order. On a datagram VI a send completes when its last frame
 * has left; then the next one starts.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

#include "via.h"
#include "hw/retrolink/trace.h"

/*
 * The window address of [va, va + len) of the region that 'handle' names, if that
 * region is set, of the VI's tag, and holds the range whole.
 */
static bool via_region_win(ViaState *s, ViaVi *vi, uint32_t handle, uint64_t va,
                           uint64_t len, uint64_t *win)
{
    if (handle == 0 || handle > VIA_MAX_REGIONS) {
        return false;
    }
    ViaRegion *r = &s->mr[handle - 1];
    if (!r->ptag || r->ptag != vi->ptag || va < r->va || len > r->len ||
        va - r->va > r->len - len) {
        return false;
    }
    *win = (uint64_t)r->tpt * VIA_PAGE + (va - (r->va & ~(uint64_t)(VIA_PAGE - 1)));
    return true;
}

/* Read bytes [off, off + len) of region 'handle' (its first byte is offset 0). */
static bool via_region_read(ViaState *s, ViaVi *vi, uint32_t handle, uint64_t off,
                            void *buf, uint32_t len)
{
    uint64_t win, pages[2];

    if (handle == 0 || handle > VIA_MAX_REGIONS ||
        !via_region_win(s, vi, handle, s->mr[handle - 1].va + off, len, &win)) {
        return false;
    }
    /* a descriptor is at most 288 bytes, 64-byte aligned: two pages at most */
    if (!rl_dma_window_map(&s->tpt, win, len, false, vi->ptag, pages)) {
        return false;
    }
    rl_dma_window_rw(&s->tpt, pages, win, 0, buf, len, false);
    return true;
}

/*
 * Read the descriptor that doorbell value db names. False if it cannot be read (its
 * handle, range, tag or TPT entries); else *status is 0 or the VIP_STATUS_FORMAT_ERROR
 * its control segment has.
 */
bool via_desc_read(ViaState *s, ViaVi *vi, uint64_t db, ViaDesc *d, uint32_t *status)
{
    uint32_t h = VIA_DB_HANDLE(db), off = VIA_DB_OFFSET(db);

    memset(d, 0, sizeof(*d));
    d->db = db;
    *status = 0;
    if (!via_region_read(s, vi, h, off, &d->cs, sizeof(d->cs))) {
        return false;
    }
    d->cs.seg_count = le16_to_cpu(d->cs.seg_count);
    d->cs.control = le16_to_cpu(d->cs.control);
    d->cs.reserved = le32_to_cpu(d->cs.reserved);
    d->cs.immediate = le32_to_cpu(d->cs.immediate);
    d->cs.length = le32_to_cpu(d->cs.length);
    if (d->cs.seg_count > VIA_MAX_SEGS) {
        *status = VIP_STATUS_FORMAT_ERROR;
        d->cs.seg_count = 0;
        return true;
    }
    if (d->cs.seg_count && !via_region_read(s, vi, h, off + sizeof(d->cs), d->seg,
                                            d->cs.seg_count * sizeof(d->seg[0]))) {
        return false;
    }
    for (uint32_t i = 0; i < d->cs.seg_count; i++) {
        d->seg[i].data = le64_to_cpu(d->seg[i].data);
        d->seg[i].handle = le32_to_cpu(d->seg[i].handle);
        d->seg[i].length = le32_to_cpu(d->seg[i].length);
    }
    if ((d->cs.control & VIP_CONTROL_OP_MASK) != VIP_CONTROL_OP_SENDRECV ||
        (d->cs.control & VIP_CONTROL_RESERVED)) {
        *status = VIP_STATUS_FORMAT_ERROR;
    }
    return true;
}

/* Bytes a descriptor's fetch reads: the control segment and its data segments. */
static uint32_t via_desc_bytes(const ViaDesc *d)
{
    return sizeof(d->cs) + d->cs.seg_count * sizeof(d->seg[0]);
}

/* The sum of the data segments' lengths. */
static uint64_t via_desc_seg_len(const ViaDesc *d)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < d->cs.seg_count; i++) {
        n += d->seg[i].length;
    }
    return n;
}

/*
 * Move bytes [off, off + len) of the message the descriptor's data segments hold
 * (write: into them). Every piece is checked against its region and the TPT before it
 * moves; false at the first that fails.
 */
bool via_seg_rw(ViaState *s, ViaVi *vi, const ViaDesc *d, uint32_t off, void *buf,
                uint32_t len, bool write)
{
    uint64_t pos = 0;
    uint8_t *p = buf;

    for (uint32_t i = 0; i < d->cs.seg_count && len; i++) {
        const struct via_data_segment *sg = &d->seg[i];
        uint64_t end = pos + sg->length;
        if (off < end && sg->length) {
            uint64_t in = off - pos;
            uint32_t n = MIN((uint64_t)len, sg->length - in);
            uint64_t win;
            if (!via_region_win(s, vi, sg->handle, sg->data, sg->length, &win)) {
                return false;
            }
            g_autofree uint64_t *pages =
                g_new(uint64_t, rl_dma_window_npages(&s->tpt, win + in, n));
            if (!rl_dma_window_map(&s->tpt, win + in, n, write, vi->ptag, pages)) {
                return false;
            }
            rl_dma_window_rw(&s->tpt, pages, win + in, 0, p, n, write);
            p += n;
            off += n;
            len -= n;
        }
        pos = end;
    }
    return len == 0;
}

/* Are all the descriptor's data segments in their regions and the TPT (write)? */
static bool via_segs_ok(ViaState *s, ViaVi *vi, const ViaDesc *d, bool write)
{
    for (uint32_t i = 0; i < d->cs.seg_count; i++) {
        const struct via_data_segment *sg = &d->seg[i];
        uint64_t win;
        if (!sg->length) {
            continue;
        }
        if (!via_region_win(s, vi, sg->handle, sg->data, sg->length, &win) ||
            !rl_dma_window_map(&s->tpt, win, sg->length, write, vi->ptag, NULL)) {
            return false;
        }
    }
    return true;
}

/*
 * The receive descriptor's checks (via-rx.c): protection (writable), then whether the
 * message fits; 0 if it may take it.
 */
uint32_t via_rx_check(ViaState *s, ViaVi *vi, const ViaDesc *d, uint32_t msg_len)
{
    if (!via_segs_ok(s, vi, d, true)) {
        return VIP_STATUS_PROTECTION_ERROR;
    }
    if (msg_len > via_desc_seg_len(d)) {
        return VIP_STATUS_LENGTH_ERROR;
    }
    return 0;
}

/* If VI v is not sending and has a descriptor posted, fetch it from 'ready'. */
void via_tx_kick(ViaState *s, uint32_t v, uint64_t ready)
{
    ViaVi *vi = &s->vi[v];
    ViaWq *wq = &vi->wq[0];

    if (vi->tx_busy || wq->count <= vi->tx_unacked ||
        (vi->state != VIA_VI_CONNECTED && vi->state != VIA_VI_DATAGRAM)) {
        return;
    }
    vi->tx_busy = true;
    vi->tx_held = 0;
    vi->tx_bad = !via_desc_read(s, vi, wq->db[(wq->head + vi->tx_unacked) % VIA_WQ_DEPTH],
                                &vi->tx, &vi->tx_err);
    uint64_t t = via_dma(s, ready, vi->tx_bad ? sizeof(vi->tx.cs) : via_desc_bytes(&vi->tx));
    t = rl_server_run(&s->nic, t, s->desc_ns);
    trace_retrolink_via_tx_fetch(s->rl->node, v, ready, t);
    rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, VIA_EV_TX_START, v, vi->tx_gen,
                 NULL);
}

/*
 * The send being sent completes with 'status' from 'ready'; the next one may start. With
 * sends still waiting for their ACKs, an error waits for them (via_tx_ack).
 */
static void via_tx_finish(ViaState *s, uint32_t v, uint32_t status, uint64_t ready)
{
    ViaVi *vi = &s->vi[v];

    if (vi->tx_unacked) {
        vi->tx_held = status;
        return;
    }
    uint64_t db = via_wq_pop(&vi->wq[0]);
    vi->tx_busy = false;
    via_complete(s, via_done_new(v, 0, db, status), ready);
    if ((status & VIP_STATUS_ERROR_MASK) && vi->state == VIA_VI_CONNECTED) {
        via_vi_break(s, v, true, ready);
    }
    via_tx_kick(s, v, ready);
}

static bool via_dest_ok(ViaState *s, uint32_t dest)
{
    return dest == VIA_DEST_BROADCAST ||
           (dest < s->rl->nodes && dest != s->rl->node);
}

/* The head's fetch and check are over: an error completes it, else its data DMA starts. */
void via_tx_start(ViaState *s, uint32_t v)
{
    ViaVi *vi = &s->vi[v];
    uint32_t status = vi->tx_err;

    if (vi->tx_bad) {
        ViaWq *wq = &vi->wq[0];
        uint64_t db = wq->db[(wq->head + vi->tx_unacked) % VIA_WQ_DEPTH];
        rl_board_guest_error(s->rl, "VI %u: the send descriptor at handle %u offset 0x%x "
                             "cannot be read: the VI breaks", v, VIA_DB_HANDLE(db),
                             VIA_DB_OFFSET(db));
        if (!vi->tx_unacked) {
            via_wq_pop(wq);     /* else the break flushes it with the ones before it */
        }
        vi->tx_busy = false;
        s->desc_errors++;
        via_vi_break(s, v, true, via_now());
        return;
    }
    if (!status && !via_segs_ok(s, vi, &vi->tx, false)) {
        status = VIP_STATUS_PROTECTION_ERROR;
    }
    if (!status && (vi->tx.cs.length != via_desc_seg_len(&vi->tx) ||
                    vi->tx.cs.length > VIA_MAX_MSG)) {
        status = VIP_STATUS_LENGTH_ERROR;
    }
    if (!status && (!via_ready(s) ||
                    (vi->state == VIA_VI_DATAGRAM && !via_dest_ok(s, vi->tx.cs.reserved)))) {
        status = VIP_STATUS_TRANSPORT_ERROR;
    }
    if (status) {
        trace_retrolink_via_tx_error(s->rl->node, v, status, via_now());
        via_tx_finish(s, v, status, via_now());
        return;
    }
    vi->tx_off = 0;
    vi->tx_cur_seq = vi->tx_seq++;
    uint32_t n = MIN(vi->tx.cs.length, VIA_FRAME_PAYLOAD);
    uint64_t end = n ? via_dma(s, via_now(), n) : via_now();
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, VIA_EV_TX_DMA, v, vi->tx_gen,
                 NULL);
}

/* A frame of VI v's message to 'dest' with the piece at tx_off. */
static ViaFrame *via_tx_frame(ViaState *s, ViaVi *vi, uint32_t v, uint32_t dest,
                              const uint8_t *data, uint32_t n)
{
    bool dgram = vi->state == VIA_VI_DATAGRAM;
    ViaFrame *f = via_frame_new(s, dgram ? VIA_F_DGRAM : VIA_F_DATA, dest, n);
    uint32_t len = vi->tx.cs.length;

    f->wire.flags = (vi->tx_off == 0 ? VIA_FF_FIRST : 0) |
                    (vi->tx_off + n == len ? VIA_FF_LAST : 0) |
                    (vi->tx.cs.control & VIP_CONTROL_IMMEDIATE ? VIA_FF_IMMEDIATE : 0);
    f->wire.src_vi = v;
    f->wire.dst_vi = dgram ? v : vi->peer_vi;
    f->wire.seq = vi->tx_cur_seq;
    f->wire.offset = vi->tx_off;
    f->wire.msg_len = len;
    f->wire.immediate = vi->tx.cs.control & VIP_CONTROL_IMMEDIATE ? vi->tx.cs.immediate : 0;
    memcpy(f->data, data, n);
    return f;
}

/* The DMA of the message's next piece ended: its frame (a copy per node) goes out. */
void via_tx_dma(ViaState *s, uint32_t v)
{
    ViaVi *vi = &s->vi[v];
    uint32_t len = vi->tx.cs.length;
    uint32_t n = MIN(len - vi->tx_off, VIA_FRAME_PAYLOAD);
    g_autofree uint8_t *buf = g_malloc(n ? n : 1);
    bool dgram = vi->state == VIA_VI_DATAGRAM;

    if (!via_seg_rw(s, vi, &vi->tx, vi->tx_off, buf, n, false)) {
        rl_board_guest_error(s->rl, "VI %u: a region of the send under way is no more: "
                             "protection error", v);
        via_tx_finish(s, v, VIP_STATUS_PROTECTION_ERROR, via_now());
        return;
    }
    bool last = vi->tx_off + n == len;
    ViaFrame *f = NULL;
    if (!dgram) {
        f = via_tx_frame(s, vi, v, vi->peer_node, buf, n);
        via_frame_out(s, f, via_now());
    } else if (vi->tx.cs.reserved != VIA_DEST_BROADCAST) {
        f = via_tx_frame(s, vi, v, vi->tx.cs.reserved, buf, n);
        via_frame_out(s, f, via_now());
    } else {
        for (uint32_t d = 0; d < s->rl->nodes; d++) {
            if (d != s->rl->node) {
                f = via_tx_frame(s, vi, v, d, buf, n);
                via_frame_out(s, f, via_now());
            }
        }
    }
    vi->tx_off += n;
    if (!last) {
        uint32_t next = MIN(len - vi->tx_off, VIA_FRAME_PAYLOAD);
        rl_sched_add(&s->rl->sched, via_dma(s, via_now(), next), RL_EV_CLASS_INTERNAL, 0,
                     VIA_EV_TX_DMA, v, vi->tx_gen, NULL);
        return;
    }
    if (!dgram) {
        /* sent: it waits for its ACK while the next one is fetched */
        vi->tx_busy = false;
        vi->tx_unacked++;
        via_tx_kick(s, v, via_now());
    } else if (f) {
        /* the last copy's leaving completes the send */
        f->complete = true;
        f->vi = v;
        f->gen = vi->tx_gen;
    } else {
        /* a broadcast on a network of one node: nothing to send */
        via_tx_finish(s, v, 0, via_now());
    }
}

/* A frame leaves the NIC for the link. */
void via_tx_out(ViaState *s, ViaFrame *f)
{
    size_t size = sizeof(ViaWire) + f->len;
    g_autofree uint8_t *buf = g_malloc(size);

    memcpy(buf, &f->wire, sizeof(ViaWire));
    memcpy(buf + sizeof(ViaWire), f->data, f->len);
    trace_retrolink_via_frame_out(s->rl->node, f->wire.type, f->peer, f->wire.src_vi,
                                  f->wire.dst_vi, f->len, f->wire.offset, via_now());
    if (!via_ready(s)) {
        /* disabled (or reset and not yet back) since the frame was made: it never leaves,
         * so nothing goes out before what the promise said of a NIC off the switch */
        trace_retrolink_via_rx_drop(s->rl->node, f->wire.dst_vi, "sent while not on the switch",
                                    via_now());
    } else if (s->rl->port) {
        rl_port_send(s->rl->port, via_now(), f->peer, 0, buf, size);
    }
    if ((f->wire.type == VIA_F_DATA || f->wire.type == VIA_F_DGRAM) &&
        (f->wire.flags & VIA_FF_LAST)) {
        s->tx_msgs++;
    }
    if (f->complete && s->vi[f->vi].tx_gen == f->gen && s->vi[f->vi].tx_busy) {
        via_tx_finish(s, f->vi, 0, via_now());
    }
    g_free(f);
}

/* An ACK for VI v's message seq, checked by the NIC at 'ready'. */
void via_tx_ack(ViaState *s, uint32_t v, uint32_t seq, uint32_t status, uint64_t ready)
{
    ViaVi *vi = &s->vi[v];

    if (vi->state != VIA_VI_CONNECTED || !vi->tx_unacked || seq != vi->tx_ack_seq) {
        trace_retrolink_via_rx_drop(s->rl->node, v, "an ACK for no send", ready);
        return;
    }
    uint64_t db = via_wq_pop(&vi->wq[0]);
    vi->tx_unacked--;
    vi->tx_ack_seq++;
    if (status & VIP_STATUS_ERROR_MASK) {
        /* the receiver has broken its VI already: this one breaks, no BREAK sent */
        via_complete(s, via_done_new(v, 0, db, VIP_STATUS_TRANSPORT_ERROR), ready);
        via_vi_break(s, v, false, ready);
        return;
    }
    via_complete(s, via_done_new(v, 0, db, 0), ready);
    if (!vi->tx_unacked && vi->tx_held) {
        /* the send after it met an error: its turn to complete has come */
        via_tx_finish(s, v, vi->tx_held, ready);
    }
}

/* CM_TX_GO: one connection-manager message to cm_dest, from the store's end. */
void via_cm_send(ViaState *s, uint64_t bus_end)
{
    if (!via_ready(s)) {
        s->error = VIA_ERR_NOT_READY;
        rl_board_guest_error(s->rl, "CM_TX_GO refused: the NIC is not on the switch");
        return;
    }
    if (s->cm_dest >= s->rl->nodes || s->cm_dest == s->rl->node) {
        s->error = VIA_ERR_DEST;
        rl_board_guest_error(s->rl, "CM_TX_GO refused: node %u is not another node of the "
                             "network", s->cm_dest);
        return;
    }
    ViaFrame *f = via_frame_new(s, VIA_F_CM, s->cm_dest, VIA_CM_WORDS * 4);
    for (uint32_t i = 0; i < VIA_CM_WORDS; i++) {
        stl_le_p(f->data + 4 * i, s->cm_word[i]);
    }
    via_frame_out(s, f, bus_end);
}
