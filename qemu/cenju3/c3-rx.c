/*
 * Cenju-3 interface: arriving packets (cenju3-regs.h; docs/boards/cenju3.md,
 * "Receiving" and "The stall rule").
 *
 * A packet whose last byte reaches the interface joins its receive FIFO (at most
 * C3_RX_FIFO_MAX packets: past that it stays in the network, which holds it). The
 * receive side handles the FIFO's head, one packet at a time, once the interface is
 * on the network:
 *  - MSG: the sender p's next slot in turn (entry p * slots + j of the receive table,
 *    read for every packet) must be empty (header word 0); the payload is written at
 *    C3_SLOT_PAYLOAD, then the header word C3_SLOT_FULL | len, then C3_EV_MSG (src p,
 *    info j). An entry of 0 refuses the packet with C3_ERR_NO_SLOT, a misaligned one
 *    or one outside memory with C3_ERR_ADDR (C3_EV_ERROR; the slot turn stays).
 *  - RDMA: the data is written at its 'raddr' (C3_ERR_ADDR if that is not wholly in
 *    memory: C3_REG_RDMA_ERRORS, C3_EV_ERROR); the last packet of a request sent with
 *    C3_REQF_NOTIFY posts C3_EV_RDMA (tag, the request's length).
 * Handling a packet takes 'packet-setup-ns' plus its DMA into memory at 'dma-rate'
 * (a MSG: its 4-byte header word too; a refused packet: no DMA).
 *
 * The stall rule: a packet is never dropped. A head whose slot is still full, or that
 * needs an event when there is no room for one, waits, and so does everything behind
 * it (c3_stall()); the driver's write of EVQ_TAIL makes the interface look again. The
 * room for the head's event is reserved before its data is written.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "system/dma.h"

#include "c3.h"
#include "hw/retrolink/trace.h"

bool c3_packet_decode(C3Packet *p, const uint8_t *data, uint32_t len, const char **why)
{
    if (len < C3_WIRE_HDR_SIZE) {
        *why = "shorter than its header";
        return false;
    }
    *p = (C3Packet) {
        .kind = data[offsetof(struct c3_wire_hdr, kind)],
        .flags = data[offsetof(struct c3_wire_hdr, flags)],
        .src = lduw_le_p(data + offsetof(struct c3_wire_hdr, src)),
        .dest = lduw_le_p(data + offsetof(struct c3_wire_hdr, dest)),
        .len = lduw_le_p(data + offsetof(struct c3_wire_hdr, len)),
        .raddr = ldq_le_p(data + offsetof(struct c3_wire_hdr, raddr)),
        .tag = ldl_le_p(data + offsetof(struct c3_wire_hdr, tag)),
        .req_len = ldl_le_p(data + offsetof(struct c3_wire_hdr, req_len)),
    };
    if (p->kind != C3_PKT_MSG && p->kind != C3_PKT_RDMA) {
        *why = "of an unknown kind";
    } else if (p->flags & ~(C3_PKTF_LAST | C3_PKTF_NOTIFY) ||
               (p->kind == C3_PKT_MSG && p->flags != C3_PKTF_LAST)) {
        *why = "with unknown flags";
    } else if (p->len == 0 || p->len > C3_PACKET_MAX || p->len != len - C3_WIRE_HDR_SIZE ||
               p->len > p->req_len || p->req_len > C3_REQ_MAX) {
        *why = "whose lengths do not match";
    } else if (p->kind == C3_PKT_RDMA && p->raddr > UINT64_MAX - p->len) {
        *why = "whose address wraps";
    } else {
        memcpy(p->data, data + C3_WIRE_HDR_SIZE, p->len);
        return true;
    }
    return false;
}

C3Packet *c3_rx_head(C3State *s)
{
    return s->rx_count ? &s->rx_fifo[s->rx_first] : NULL;
}

void c3_rx_push(C3State *s, const C3Packet *p)
{
    trace_retrolink_c3_packet_in(s->rl->node, p->src, p->kind, p->len, c3_now());
    if (s->rx_count < C3_RX_FIFO_MAX && g_queue_is_empty(&s->rx_held)) {
        C3Packet *q = &s->rx_fifo[(s->rx_first + s->rx_count) % C3_RX_FIFO_MAX];
        *q = *p;
        q->state = C3_TXB_FREE;
        s->rx_count++;
    } else {
        g_queue_push_tail(&s->rx_held, g_memdup2(p, sizeof(*p)));
    }
    c3_rx_kick(s, c3_now());
}

static void c3_rx_wait(C3State *s, const char *why)
{
    C3Packet *p = c3_rx_head(s);

    trace_retrolink_c3_rx_wait(s->rl->node, p->src, p->kind, why, c3_now());
    s->rx_stalled = true;
    c3_stall(s);
}

/*
 * Handle the head packet from 'from' (or now) if the receive side is free: find where
 * it goes, check that it can go (or refuse it), reserve room for its event.
 */
void c3_rx_kick(C3State *s, uint64_t from)
{
    C3Packet *p = c3_rx_head(s);
    uint64_t dur = s->packet_setup_ns;
    bool needs_event;

    if (!p || !c3_ready(s) || s->rx_busy || s->rx_stalled) {
        return;
    }
    s->rx_err = C3_ERR_NONE;
    s->rx_target = 0;
    s->rx_slot = 0;
    if (p->kind == C3_PKT_MSG) {
        uint32_t j = s->rx_next_slot[p->src];
        uint64_t entry_at = c3_u64(s->rxt_base_lo, s->rxt_base_hi) +
                            ((uint64_t)p->src * s->rxt_slots + j) * 8;
        uint64_t slot = 0;
        uint32_t hdr = 0;

        if (rl_board_dma_read(s->rl, entry_at, &slot, sizeof(slot)) != MEMTX_OK) {
            slot = 0;
        }
        slot = le64_to_cpu(slot);
        needs_event = true;
        if (slot == 0) {
            s->rx_err = C3_ERR_NO_SLOT;
        } else if (slot % C3_SLOT_ALIGN || !c3_ram_ok(s, slot, C3_SLOT_SIZE, true)) {
            s->rx_err = C3_ERR_ADDR;
        } else {
            if (rl_board_dma_read(s->rl, slot, &hdr, sizeof(hdr)) != MEMTX_OK) {
                hdr = 0;
            }
            if (hdr != 0) {
                c3_rx_wait(s, "its slot is full");
                return;
            }
            s->rx_target = slot;
            s->rx_slot = j;
            dur += rl_bytes_ns(C3_SLOT_PAYLOAD + p->len, s->dma_rate);
        }
    } else {
        needs_event = (p->flags & C3_PKTF_LAST) && (p->flags & C3_PKTF_NOTIFY);
        if (!c3_ram_ok(s, p->raddr, p->len, true)) {
            s->rx_err = C3_ERR_ADDR;
            needs_event = true;
        } else {
            s->rx_target = p->raddr;
            dur += rl_bytes_ns(p->len, s->dma_rate);
        }
    }
    if (needs_event) {
        if (!c3_evq_can_post(s)) {
            c3_rx_wait(s, "no room for its event");
            return;
        }
        s->evq_reserved++;
    }
    s->rx_busy = true;
    rl_sched_add(&s->rl->sched, MAX(from, c3_now()) + dur, RL_EV_CLASS_INTERNAL, 0,
                 C3_EVK_RX_DONE, 0, s->rx_gen, NULL);
}

static void c3_rx_refuse(C3State *s, C3Packet *p)
{
    rl_board_guest_error(s->rl, "a %s packet from node %u refused: %s (C3_ERR %u)",
                   p->kind == C3_PKT_MSG ? "MSG" : "RDMA", p->src,
                   s->rx_err == C3_ERR_NO_SLOT ? "its receive table entry is 0" :
                   p->kind == C3_PKT_MSG ? "its receive table entry is misaligned or "
                                           "outside memory" :
                   "its target range is outside memory", s->rx_err);
    if (p->kind == C3_PKT_RDMA) {
        s->rdma_errors++;
    }
    c3_evq_post_reserved(s, C3_EVF_ARRIVING, C3_EV_ERROR, p->src, 0, p->tag, p->len,
                         s->rx_err);
    rl_board_raise(s->rl, C3_IRQ_ERROR);
}

void c3_rx_done(C3State *s)
{
    C3Packet *p = c3_rx_head(s);

    if (s->rx_err != C3_ERR_NONE) {
        c3_rx_refuse(s, p);
    } else if (p->kind == C3_PKT_MSG) {
        uint32_t hdr = cpu_to_le32(C3_SLOT_FULL | p->len);

        /* the payload, then the header word: a reader that sees FULL sees it all */
        rl_board_dma_write(s->rl, s->rx_target + C3_SLOT_PAYLOAD, p->data, p->len);
        rl_board_dma_write(s->rl, s->rx_target, &hdr, sizeof(hdr));
        s->rx_next_slot[p->src] = (s->rx_slot + 1) % s->rxt_slots;
        c3_evq_post_reserved(s, 0, C3_EV_MSG, p->src, s->rx_slot, p->tag, p->len, C3_ERR_NONE);
    } else {
        rl_board_dma_write(s->rl, s->rx_target, p->data, p->len);
        if ((p->flags & C3_PKTF_LAST) && (p->flags & C3_PKTF_NOTIFY)) {
            c3_evq_post_reserved(s, 0, C3_EV_RDMA, p->src, 0, p->tag, p->req_len, C3_ERR_NONE);
        }
    }
    trace_retrolink_c3_rx(s->rl->node, p->src, p->kind, p->len, s->rx_target, s->rx_err,
                          c3_now());
    s->rx_packets++;
    s->rx_busy = false;
    s->rx_first = (s->rx_first + 1) % C3_RX_FIFO_MAX;
    s->rx_count--;
    /* one more from the network, if it holds any */
    g_autofree C3Packet *held = g_queue_pop_head(&s->rx_held);
    if (held) {
        s->rx_fifo[(s->rx_first + s->rx_count) % C3_RX_FIFO_MAX] = *held;
        s->rx_count++;
    }
    c3_rx_kick(s, c3_now());
}

static bool c3_keep_not_rx(void *opaque, RlEvent *ev)
{
    return ev->kind != C3_EVK_RX_DONE;
}

/* Stop handling packets: the head stays in the FIFO, unwritten. */
void c3_rx_stop(C3State *s)
{
    rl_sched_filter(&s->rl->sched, c3_keep_not_rx, s);
    s->rx_gen++;
    s->rx_busy = s->rx_stalled = false;
    s->evq_reserved = 0;
}

/* Reset: every packet inside the interface is gone. */
void c3_rx_flush(C3State *s)
{
    C3Packet *p;

    c3_rx_stop(s);
    while ((p = g_queue_pop_head(&s->rx_held))) {
        g_free(p);
    }
    s->rx_first = s->rx_count = 0;
}
