/*
 * The CompactPCI backplane board: the bridge's posted-write buffer toward the backplane.
 * A store into a window, or a write of DB_RING, is a posted write: the CPU's transaction
 * on the node's PCI ends once the bridge has taken its data into the buffer
 * ('posted-write-bytes', an entry of the bus's width a data phase), and the entries stay
 * taken until the backplane has carried the frame. On a backplane that sends notices
 * (proto/cpci.h, "Credits") every frame the bridge sends earns one, in sending order, at
 * the time it frees its entries; the bridge keeps the frames still without one (CpciTxq).
 * A posted write that finds too little room is what a PCI target retry is: the CPU tries
 * again until the entries it needs are free. Its vCPU waits for the notice that frees
 * them, in the vCPU thread as a load waits for its data (rl_port_wait: the clock
 * standing still, this board's own events run as the grants allow), and its transaction
 * then starts when those entries free. Without notices nothing is kept, and the buffer
 * never fills.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"

#include "cpci.h"
#include "hw/retrolink/trace.h"

static uint32_t txq_slot(const CpciTxq *q, uint32_t i)
{
    return (q->head + i) % CPCI_TXQ_SIZE;
}

uint32_t cpci_pw_entry_bytes(CpciState *s, const CpciFrame *f)
{
    switch (f->h.type) {
    case CPCI_T_WRITE:
        return cpci_phases(s, f->h.len) * s->width;
    case CPCI_T_DOORBELL:
        return cpci_phases(s, 0) * s->width;
    default:
        return 0;               /* delayed transactions: their own queues */
    }
}

uint32_t cpci_txq_pending(CpciState *s, uint64_t t)
{
    CpciTxq *q = &s->txq;

    while (q->noticed && q->at[q->head] <= t) {
        q->held -= q->bytes[q->head];
        q->head = txq_slot(q, 1);
        q->count--;
        q->noticed--;
    }
    return q->count;
}

/* Entries to free, oldest first, before 'bytes' more fit (and an entry of the ring). */
static uint32_t cpci_txq_wanted(CpciState *s, uint32_t bytes)
{
    CpciTxq *q = &s->txq;
    uint32_t held = q->held, n = 0;

    while (n < q->count && (held + bytes > s->pw_bytes ||
                            q->count - n + CPCI_TXQ_SPARE >= CPCI_TXQ_SIZE)) {
        held -= q->bytes[txq_slot(q, n)];
        n++;
    }
    return n;
}

/* The notice that frees the entries wanted is here, or cannot come. */
static bool cpci_pw_room(void *opaque)
{
    CpciState *s = opaque;

    return s->txq.noticed >= s->txq.need || !rl_port_is_up(s->rl->port);
}

/*
 * The fabric granted up to 'grant': this board's events before it may run, and, once
 * the notice is known, before the retried transaction ends (as a load's progress).
 */
static void cpci_pw_progress(void *opaque, uint64_t grant)
{
    CpciState *s = opaque;
    CpciTxq *q = &s->txq;
    uint64_t end = grant;

    if (q->noticed >= q->need) {
        end = MIN(end, q->at[txq_slot(q, q->need - 1)] + q->need_ns);
    }
    rl_sched_run_before(&s->rl->sched, end);
}

uint64_t cpci_pw_hold(CpciState *s, uint32_t bytes, uint64_t pci_ns)
{
    CpciTxq *q = &s->txq;
    uint64_t go = MAX(cpci_now(), s->bus.free_at), free_at;

    if (!rl_port_notices(s->rl->port)) {
        return rl_bus_hold(&s->bus, pci_ns);
    }
    cpci_txq_pending(s, go);
    q->need = cpci_txq_wanted(s, bytes);
    if (!q->need) {
        return rl_bus_hold(&s->bus, pci_ns);
    }
    q->need_ns = pci_ns;
    bool room = cpci_pw_room(s) ||
                rl_port_wait(s->rl->port, cpci_pw_room, cpci_pw_progress, s);
    /* the wait ran this node's events on: the CPU goes on after them (rl_port_wait) */
    rl_bus_hold_until(&s->bus, rl_port_reached(s->rl->port) + 1);
    if (!room) {
        /* the link lost, QEMU quitting, nothing can come: no notice will */
        warn_report("retrolink-cpci node %u: a posted write at %" PRIu64 " ns gets no room "
                    "in the bridge's buffer (no notice can come); %u frames forgotten",
                    s->rl->node, go, q->count);
        q->head = q->count = q->noticed = q->held = 0;
        return rl_bus_hold(&s->bus, pci_ns);
    }
    if (q->noticed < q->need) {         /* the link went down meanwhile */
        q->head = q->count = q->noticed = q->held = 0;
        return rl_bus_hold(&s->bus, pci_ns);
    }
    free_at = q->at[txq_slot(q, q->need - 1)];
    trace_retrolink_cpci_pw_retry(s->rl->node, go, free_at, q->count);
    cpci_txq_pending(s, free_at);
    q->need = 0;
    return rl_bus_hold_until(&s->bus, MAX(go, free_at) + pci_ns);
}

void cpci_txq_sent(CpciState *s, const CpciFrame *f)
{
    CpciTxq *q = &s->txq;

    if (!rl_port_notices(s->rl->port)) {
        return;
    }
    if (q->count == CPCI_TXQ_SIZE) {
        /* only peers' loads beyond any bridge's (a peer that breaks the protocol) */
        warn_report("retrolink-cpci node %u: more than %d frames without their notice; "
                    "the bridge no longer counts its buffer exactly", s->rl->node,
                    CPCI_TXQ_SIZE);
        return;
    }
    q->bytes[txq_slot(q, q->count)] = cpci_pw_entry_bytes(s, f);
    q->held += q->bytes[txq_slot(q, q->count)];
    q->count++;
}

void cpci_txq_notice(CpciState *s, uint64_t at)
{
    CpciTxq *q = &s->txq;

    if (q->noticed == q->count) {
        warn_report("retrolink-cpci node %u: the fabric sent a notice at %" PRIu64 " ns "
                    "with no frame waiting for one; dropped", s->rl->node, at);
        return;
    }
    /* notices come in sending order: an earlier time would break the ring's order */
    if (q->noticed && at < q->at[txq_slot(q, q->noticed - 1)]) {
        at = q->at[txq_slot(q, q->noticed - 1)];
    }
    q->at[txq_slot(q, q->noticed)] = at;
    q->noticed++;
}

int cpci_txq_post_load(CpciState *s)
{
    CpciTxq *q = &s->txq;
    uint32_t held = 0;

    if (q->head >= CPCI_TXQ_SIZE || q->count > CPCI_TXQ_SIZE || q->noticed > q->count) {
        return rl_board_refuse(s->rl, "txq head %u, count %u, noticed %u: outside the "
                               "ring of %d", q->head, q->count, q->noticed, CPCI_TXQ_SIZE);
    }
    for (uint32_t i = 0; i < q->count; i++) {
        uint32_t b = q->bytes[txq_slot(q, i)];
        if (b > cpci_phases(s, CPCI_MAX_ACCESS) * s->width) {
            return rl_board_refuse(s->rl, "txq entry %u holds %u bytes, more than an "
                                   "access", i, b);
        }
        if (i && i < q->noticed && q->at[txq_slot(q, i)] < q->at[txq_slot(q, i - 1)]) {
            return rl_board_refuse(s->rl, "txq notice %u is earlier than the one before", i);
        }
        held += b;
    }
    if (held != q->held || held > s->pw_bytes) {
        return rl_board_refuse(s->rl, "txq held %u bytes, its entries %u, the buffer %"
                               PRIu64, q->held, held, s->pw_bytes);
    }
    q->need = 0;
    return 0;
}
