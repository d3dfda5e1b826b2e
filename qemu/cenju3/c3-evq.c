/*
 * Cenju-3 interface: the event ring (cenju3-regs.h, docs/boards/cenju3.md, "Events").
 *
 * Events are written in the order they are posted, each at EVQ_HEAD % size with the
 * lap's phase bit in its flags byte, written last; then C3_IRQ_EVENT. There is room
 * while EVQ_HEAD - EVQ_TAIL < size, less the one entry promised to the receive side's
 * head packet (it checks for room before it writes anything: c3-rx.c).
 *
 * Nothing is dropped: an event with no room waits, in order, and so does every event
 * posted after it (a stall, c3_stall()). Only the transmit side posts into the wait
 * list: the receive side holds its head packet instead, and the transmit side takes
 * no new request while events wait, so at most its requests in flight wait (a refused
 * one posts two events, and C3_TXBUF + 2 requests can be in flight): the list never
 * fills. The driver's write of EVQ_TAIL makes the interface look again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/bswap.h"
#include "system/dma.h"

#include "c3.h"
#include "hw/retrolink/trace.h"

static uint32_t c3_evq_room(C3State *s)
{
    uint32_t used = s->evq_head - s->evq_tail + s->evq_reserved;

    return used < s->evq_size ? s->evq_size - used : 0;
}

bool c3_evq_can_post(C3State *s)
{
    return s->evq_wait_n == 0 && c3_evq_room(s) > 0;
}

static void c3_evq_write(C3State *s, const C3Ev *ev)
{
    uint64_t base = c3_u64(s->evq_base_lo, s->evq_base_hi);
    uint64_t at = base + (uint64_t)(s->evq_head & (s->evq_size - 1)) * sizeof(struct c3_event);
    /* 1 on the first lap, 0 on the second, ...: 2^32 is a whole number of laps */
    uint8_t flags = (((s->evq_head / s->evq_size) & 1) ? 0 : C3_EVF_PHASE) |
                    (ev->flags & C3_EVF_ARRIVING);
    uint8_t buf[sizeof(struct c3_event)] = { 0 };

    buf[offsetof(struct c3_event, kind)] = ev->kind;
    stw_le_p(buf + offsetof(struct c3_event, src), ev->src);
    stl_le_p(buf + offsetof(struct c3_event, info), ev->info);
    stl_le_p(buf + offsetof(struct c3_event, tag), ev->tag);
    stl_le_p(buf + offsetof(struct c3_event, len), ev->len);
    stl_le_p(buf + offsetof(struct c3_event, status), ev->status);
    /* when it is written (an event that waited for room: when the room came) */
    stq_le_p(buf + offsetof(struct c3_event, t_ns), c3_now());
    /* the body with flags 0, then the flags byte: a reader that sees the phase sees all */
    rl_board_dma_write(s->rl, at, buf, sizeof(buf));
    rl_board_dma_write(s->rl, at + offsetof(struct c3_event, flags), &flags, 1);
    trace_retrolink_c3_event(s->rl->node, s->evq_head, ev->kind, ev->src, ev->info, ev->status,
                             c3_now());
    s->evq_head++;
    rl_board_raise(s->rl, C3_IRQ_EVENT);
}

/* A stall episode starts: counted, shown in STATUS, and C3_IRQ_STALL raised once. */
void c3_stall(C3State *s)
{
    if (!s->stalled) {
        s->stalled = true;
        s->stalls++;
        trace_retrolink_c3_stall(s->rl->node, s->rx_stalled, s->evq_wait_n, c3_now());
        rl_board_raise(s->rl, C3_IRQ_STALL);
    }
}

static C3Ev c3_ev(uint32_t flags, uint32_t kind, uint32_t src, uint32_t info, uint32_t tag,
                  uint32_t len, uint32_t status)
{
    return (C3Ev) { .kind = kind, .flags = flags, .src = src, .info = info, .tag = tag,
                    .len = len, .status = status };
}

void c3_evq_post(C3State *s, uint32_t kind, uint32_t src, uint32_t info, uint32_t tag,
                 uint32_t len, uint32_t status)
{
    C3Ev ev = c3_ev(0, kind, src, info, tag, len, status);

    if (c3_evq_can_post(s)) {
        c3_evq_write(s, &ev);
        return;
    }
    if (s->evq_wait_n == C3_EVQ_WAIT_MAX) {
        /* cannot happen (see the banner): say so rather than overrun */
        error_report("retrolink-cenju3 node %u: more than %d events wait for room; event "
                     "%u lost", s->rl->node, C3_EVQ_WAIT_MAX, kind);
        return;
    }
    s->evq_wait[s->evq_wait_n++] = ev;
    c3_stall(s);
}

void c3_evq_post_reserved(C3State *s, uint32_t flags, uint32_t kind, uint32_t src,
                          uint32_t info, uint32_t tag, uint32_t len, uint32_t status)
{
    C3Ev ev = c3_ev(flags, kind, src, info, tag, len, status);

    assert(s->evq_reserved > 0);
    s->evq_reserved--;
    c3_evq_write(s, &ev);
}

/*
 * EVQ_TAIL: the driver has consumed events up to val, and asks the interface to look
 * again: waiting events go out while there is room, the receive side retries its head
 * packet, the transmit side takes requests again.
 */
void c3_evq_tail_write(C3State *s, uint32_t val, uint64_t bus_end)
{
    if (!c3_enabled(s)) {
        rl_board_guest_error(s->rl, "EVQ_TAIL write 0x%x refused: the interface is not enabled "
                       "(C3_ERR_CONFIG)", val);
        s->error = C3_ERR_CONFIG;
        return;
    }
    if (val - s->evq_tail > s->evq_head - s->evq_tail) {
        rl_board_guest_error(s->rl, "EVQ_TAIL write %u refused: the interface has written events up "
                       "to %u, the driver consumed %u (C3_ERR_LENGTH)", val, s->evq_head,
                       s->evq_tail);
        s->error = C3_ERR_LENGTH;
        return;
    }
    s->evq_tail = val;
    uint32_t n = 0;
    while (n < s->evq_wait_n && c3_evq_room(s) > 0) {
        c3_evq_write(s, &s->evq_wait[n++]);
    }
    memmove(s->evq_wait, s->evq_wait + n, (s->evq_wait_n - n) * sizeof(C3Ev));
    s->evq_wait_n -= n;
    s->rx_stalled = false;
    c3_rx_kick(s, bus_end);
    c3_tx_kick(s, bus_end);
    if (!s->rx_stalled && s->evq_wait_n == 0) {
        s->stalled = false;
    }
}
