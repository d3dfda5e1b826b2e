/*
 * Cenju-3 interface: the request ring (cenju3-regs.h; docs/boards/cenju3.md, "Timing").
 *
 * The interface takes requests one at a time, in ring order, once REQ_TAIL says they
 * are there: taking one (reading and checking its descriptor) costs 'req-setup-ns',
 * from the end of the REQ_TAIL store or from when the last request's last packet has
 * been read. A request is checked whole before a byte moves, in this order: op and
 * flags (C3_ERR_OP), length (C3_ERR_LENGTH), destination (C3_ERR_DEST), addresses
 * (C3_ERR_ADDR); a refused one is done at once (status, C3_EV_ERROR, and C3_EV_DONE if
 * asked for). The data is then cut into packets of at most C3_PACKET_MAX bytes; each
 * is read from PE memory by the interface's DMA ('dma-rate') into one of C3_TXBUF
 * transmit buffers, then passes the packet stage ('packet-setup-ns'), at whose end it
 * is handed to the network. The DMA of the next packet overlaps the packet stage of
 * the last. The request is done when its last packet has left: its status is written
 * and, with C3_REQF_EVENT, C3_EV_DONE posted.
 *
 * RDMA to this node itself never reaches the network: its packets go straight to the
 * receive side when they leave.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "system/dma.h"

#include "c3.h"
#include "hw/retrolink/trace.h"

static uint64_t c3_req_addr(C3State *s, uint32_t index)
{
    return c3_u64(s->req_base_lo, s->req_base_hi) +
           (uint64_t)(index & (s->req_size - 1)) * sizeof(struct c3_req);
}

bool c3_tx_idle(C3State *s)
{
    for (uint32_t b = 0; b < C3_TXBUF; b++) {
        if (s->txbuf[b].state != C3_TXB_FREE) {
            return false;
        }
    }
    return !s->tx_take_pending && !s->tx_active && s->req_head == s->req_tail;
}

/*
 * Take the next request at 'from' (or now) + req-setup-ns, if there is one and the
 * interface may: on the network, no request under way, no event waiting for room.
 */
void c3_tx_kick(C3State *s, uint64_t from)
{
    if (!c3_ready(s) || s->tx_take_pending || s->tx_active || s->evq_wait_n ||
        s->req_head == s->req_tail) {
        return;
    }
    s->tx_take_pending = true;
    rl_sched_add(&s->rl->sched, MAX(from, c3_now()) + s->req_setup_ns, RL_EV_CLASS_INTERNAL, 0,
                 C3_EVK_TX_TAKE, 0, s->tx_gen, NULL);
}

static const char *c3_err_name(uint32_t err)
{
    switch (err) {
    case C3_ERR_LENGTH: return "bad length";
    case C3_ERR_DEST: return "not a node of the network, or this node for MSG";
    case C3_ERR_ADDR: return "a range outside memory";
    case C3_ERR_OP: return "unknown op or flags";
    default: return "?";
    }
}

/* The checks of cenju3-regs.h, in order; C3_ERR_NONE if the request may go. */
static uint32_t c3_req_check(C3State *s, const C3Req *r)
{
    if ((r->op != C3_OP_MSG && r->op != C3_OP_RDMA) || (r->flags & ~C3_REQF_ALL) ||
        (r->op == C3_OP_MSG && (r->flags & C3_REQF_NOTIFY))) {
        return C3_ERR_OP;
    }
    if (r->len == 0 || r->len > (r->op == C3_OP_MSG ? C3_MSG_MAX : C3_REQ_MAX)) {
        return C3_ERR_LENGTH;
    }
    if (r->dest >= s->rl->nodes || (r->op == C3_OP_MSG && r->dest == s->rl->node)) {
        return C3_ERR_DEST;
    }
    if (!c3_ram_ok(s, r->src, r->len, false) ||
        (r->op == C3_OP_MSG && r->raddr != 0) ||
        (r->op == C3_OP_RDMA && r->raddr > UINT64_MAX - r->len)) {
        return C3_ERR_ADDR;
    }
    return C3_ERR_NONE;
}

static void c3_req_status(C3State *s, uint32_t index, uint32_t err)
{
    uint8_t st[2];

    stw_le_p(st, C3_ST_DONE | err);
    rl_board_dma_write(s->rl, c3_req_addr(s, index) + offsetof(struct c3_req, status),
                  st, sizeof(st));
}

static void c3_req_refuse(C3State *s, const C3Req *r, uint32_t err)
{
    rl_board_guest_error(s->rl, "request %u (op %u to node %u, %u bytes) refused: %s (C3_ERR %u)",
                   r->index, r->op, r->dest, r->len, c3_err_name(err), err);
    trace_retrolink_c3_refused(s->rl->node, r->index, err, c3_now());
    s->req_errors++;
    c3_req_status(s, r->index, err);
    c3_evq_post(s, C3_EV_ERROR, s->rl->node, r->index, r->tag, r->len, err);
    if (r->flags & C3_REQF_EVENT) {
        c3_evq_post(s, C3_EV_DONE, s->rl->node, r->index, r->tag, r->len, err);
    }
    rl_board_raise(s->rl, C3_IRQ_ERROR);
}

/* Start the DMA of the request's next packet, if a transmit buffer is free. */
static void c3_tx_next_dma(C3State *s)
{
    C3Req *r = &s->cur;
    uint32_t b;

    if (!s->tx_active || s->tx_dma_busy) {
        return;
    }
    for (b = 0; b < C3_TXBUF && s->txbuf[b].state != C3_TXB_FREE; b++) {
    }
    if (b == C3_TXBUF) {
        return;                 /* c3_tx_out() frees one */
    }
    C3Packet *p = &s->txbuf[b];
    uint32_t n = MIN(C3_PACKET_MAX, r->len - r->off);
    bool last = r->off + n == r->len;

    *p = (C3Packet) {
        .kind = r->op == C3_OP_MSG ? C3_PKT_MSG : C3_PKT_RDMA,
        .flags = (last ? C3_PKTF_LAST : 0) |
                 (last && (r->flags & C3_REQF_NOTIFY) ? C3_PKTF_NOTIFY : 0),
        .src = s->rl->node,
        .dest = r->dest,
        .len = n,
        .raddr = r->op == C3_OP_RDMA ? r->raddr + r->off : 0,
        .tag = r->tag,
        .req_len = r->len,
        .state = C3_TXB_DMA,
        .req_index = r->index,
        .req_flags = r->flags,
    };
    s->tx_dma_busy = true;
    rl_sched_add(&s->rl->sched, c3_now() + rl_bytes_ns(n, s->dma_rate), RL_EV_CLASS_INTERNAL, 0,
                 C3_EVK_TX_DMA, b, s->tx_gen, NULL);
}

void c3_tx_take(C3State *s)
{
    uint8_t d[sizeof(struct c3_req)];
    C3Req *r = &s->cur;

    s->tx_take_pending = false;
    if (!c3_ready(s) || s->evq_wait_n || s->req_head == s->req_tail) {
        return;                 /* kicked again when that changes */
    }
    if (rl_board_dma_read(s->rl, c3_req_addr(s, s->req_head), d, sizeof(d)) != MEMTX_OK) {
        memset(d, 0, sizeof(d));            /* refused below: op 0 */
    }
    *r = (C3Req) {
        .index = s->req_head,
        .op = lduw_le_p(d + offsetof(struct c3_req, op)),
        .dest = lduw_le_p(d + offsetof(struct c3_req, dest)),
        .len = ldl_le_p(d + offsetof(struct c3_req, len)),
        .src = ldq_le_p(d + offsetof(struct c3_req, src)),
        .raddr = ldq_le_p(d + offsetof(struct c3_req, raddr)),
        .tag = ldl_le_p(d + offsetof(struct c3_req, tag)),
        .flags = lduw_le_p(d + offsetof(struct c3_req, flags)),
    };
    s->req_head++;
    uint32_t err = c3_req_check(s, r);
    if (err != C3_ERR_NONE) {
        c3_req_refuse(s, r, err);
        c3_tx_kick(s, c3_now());
        return;
    }
    trace_retrolink_c3_take(s->rl->node, r->index, r->op, r->dest, r->len, c3_now());
    if (!c3_ledger_covers(s, r->src, r->len)) {
        /* on the Cenju-3 stale cache lines would have gone: the driver forgot a flush */
        s->cache_misses++;
        trace_retrolink_c3_cache_miss(s->rl->node, r->index, r->src, r->len);
    }
    s->tx_active = true;
    c3_tx_next_dma(s);
}

void c3_tx_dma_done(C3State *s, uint32_t b)
{
    C3Packet *p = &s->txbuf[b];
    C3Req *r = &s->cur;

    /* the range was checked when the request was taken; RAM does not go away */
    if (rl_board_dma_read(s->rl, r->src + r->off, p->data, p->len) != MEMTX_OK) {
        memset(p->data, 0, p->len);
    }
    r->off += p->len;
    s->tx_dma_busy = false;
    p->state = C3_TXB_OUT;
    uint64_t out = rl_server_run(&s->tx_stage, c3_now(), s->packet_setup_ns);
    rl_sched_add(&s->rl->sched, out, RL_EV_CLASS_INTERNAL, 0, C3_EVK_TX_OUT, b, s->tx_gen, NULL);
    if (r->off == r->len) {
        s->tx_active = false;
        c3_tx_kick(s, c3_now());
    } else {
        c3_tx_next_dma(s);
    }
}

void c3_packet_encode(const C3Packet *p, uint8_t *buf)
{
    buf[offsetof(struct c3_wire_hdr, kind)] = p->kind;
    buf[offsetof(struct c3_wire_hdr, flags)] = p->flags;
    stw_le_p(buf + offsetof(struct c3_wire_hdr, src), p->src);
    stw_le_p(buf + offsetof(struct c3_wire_hdr, dest), p->dest);
    stw_le_p(buf + offsetof(struct c3_wire_hdr, len), p->len);
    stq_le_p(buf + offsetof(struct c3_wire_hdr, raddr), p->raddr);
    stl_le_p(buf + offsetof(struct c3_wire_hdr, tag), p->tag);
    stl_le_p(buf + offsetof(struct c3_wire_hdr, req_len), p->req_len);
    memcpy(buf + C3_WIRE_HDR_SIZE, p->data, p->len);
}

void c3_tx_out(C3State *s, uint32_t b)
{
    C3Packet *p = &s->txbuf[b];

    trace_retrolink_c3_packet_out(s->rl->node, p->dest, p->kind, p->len, p->raddr, c3_now());
    if (p->dest == s->rl->node) {
        c3_rx_push(s, p);               /* RDMA to itself: not through the network */
    } else if (s->rl->port) {
        uint8_t buf[C3_WIRE_HDR_SIZE + C3_PACKET_MAX];
        c3_packet_encode(p, buf);
        rl_port_send(s->rl->port, c3_now(), p->dest, 0, buf, C3_WIRE_HDR_SIZE + p->len);
    }
    s->tx_packets++;
    if (p->flags & C3_PKTF_LAST) {
        c3_req_status(s, p->req_index, C3_ERR_NONE);
        if (p->req_flags & C3_REQF_EVENT) {
            c3_evq_post(s, C3_EV_DONE, s->rl->node, p->req_index, p->tag, p->req_len,
                        C3_ERR_NONE);
        }
    }
    p->state = C3_TXB_FREE;
    c3_tx_next_dma(s);
}

static bool c3_keep_not_tx(void *opaque, RlEvent *ev)
{
    return ev->kind != C3_EVK_TX_TAKE && ev->kind != C3_EVK_TX_DMA &&
           ev->kind != C3_EVK_TX_OUT;
}

/* Stop sending at once: the request under way and its packets inside are dropped. */
void c3_tx_stop(C3State *s)
{
    rl_sched_filter(&s->rl->sched, c3_keep_not_tx, s);
    s->tx_gen++;
    s->tx_take_pending = s->tx_active = s->tx_dma_busy = false;
    for (uint32_t b = 0; b < C3_TXBUF; b++) {
        s->txbuf[b].state = C3_TXB_FREE;
    }
    s->tx_stage.free_at = 0;
}
