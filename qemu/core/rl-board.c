/*
 * retrolink board core: the parts every board model shares (rl-board.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "system/dma.h"
#include "system/system.h"

#include "hw/retrolink/core/rl-board.h"

void rl_board_init(RlBoard *b, const RlBoardInfo *info, const RlBoardFront *front,
                   void *dev)
{
    b->info = info;
    b->front = front;
    b->dev = dev;
    b->opaque = dev;
}

/* The board's events changed: its pending sends may have (RlPortOps.pending). */
static void rl_board_sched_changed(void *opaque)
{
    RlBoard *b = opaque;

    rl_port_pending_changed(b->port);
}

/*
 * At exit, in the node's QEMU log (stderr), what tests look for: frames sent before
 * the node's promise or delivered after their arrival time, 0 in any run
 * (docs/fabric.md, "Live time").
 */
static void rl_board_exit_notify(Notifier *n, void *data)
{
    RlBoard *b = container_of(n, RlBoard, exit_notifier);

    fprintf(stderr, "%s node %u: causality_violations=%" PRIu64 "\n", b->info->name,
            b->node, rl_port_causality_violations(b->port));
}

/*
 * The core's steps, after the board's own realize (its properties, regions and
 * resources): the event queue, then the port. A failure undoes them in reverse and
 * calls the board's unrealize: nothing of a board that failed to realize stays armed,
 * registered or connected.
 */
bool rl_board_realize(RlBoard *b, Error **errp)
{
    const RlBoardInfo *info = b->info;

    if (b->start_us > RL_BOARD_START_US_MAX) {
        error_setg(errp, "%s: start-us must be at most %llu (60 s)", info->name,
                   RL_BOARD_START_US_MAX);
        return false;
    }
    if (b->node >= info->max_nodes) {
        error_setg(errp, "%s: node must be below %u", info->name, info->max_nodes);
        return false;
    }
    if (!info->realize(b->opaque, errp)) {
        return false;
    }
    rl_sched_init(&b->sched, info->event, b->opaque);
    g_autofree char *owner = g_strdup_printf("%s node %u", info->name, b->node);
    rl_sched_set_check(&b->sched, owner, info->event_check);

    if (!b->fabric) {
        b->nodes = 1;           /* a lone board: it reaches no other node */
        return true;
    }
    char name[RL_NAME_LEN];
    snprintf(name, sizeof(name), "%s-node%u", info->port_name, b->node);
    /* the node count and the peers come with the cluster's start (welcome) */
    b->port = rl_port_attach(b->fabric, b->node, b->network, info->protocol, name,
                             info->reaction_ns(b->opaque), info->port_ops, b->opaque,
                             errp);
    if (!b->port) {
        error_prepend(errp, "%s: ", info->name);
        info->unrealize(b->opaque);
        rl_sched_destroy(&b->sched);
        return false;
    }
    if (info->port_ops->pending) {
        rl_sched_set_changed(&b->sched, rl_board_sched_changed, b);
    }
    b->exit_notifier.notify = rl_board_exit_notify;
    qemu_add_exit_notifier(&b->exit_notifier);
    return true;
}

void rl_board_exit(RlBoard *b)
{
    if (b->exit_notifier.notify) {
        qemu_remove_exit_notifier(&b->exit_notifier);
        b->exit_notifier.notify = NULL;
    }
    rl_sched_set_changed(&b->sched, NULL, NULL);
    rl_port_close(b->port);
    b->port = NULL;
    b->info->unrealize(b->opaque);
    rl_sched_destroy(&b->sched);
}

void rl_board_reset(RlBoard *b)
{
    b->info->reset(b->opaque);
}

uint64_t rl_board_guest_go(RlBoard *b, bool enabled, uint64_t ready_at, uint64_t guest_ns)
{
    return enabled ? MAX(guest_ns, ready_at) : guest_ns + b->start_us * 1000;
}

uint64_t rl_board_promise(RlBoard *b, bool enabled, uint64_t ready_at, uint64_t guest_ns,
                          uint64_t lead, uint64_t pending, uint64_t now)
{
    uint64_t p = RL_TIME_NEVER;

    if (guest_ns != RL_TIME_NEVER) {
        p = rl_board_guest_go(b, enabled, ready_at, guest_ns) + lead;
    }
    return MAX(MIN(p, pending), now);
}

uint64_t rl_board_events_floor(RlBoard *b, uint32_t except, uint64_t now)
{
    uint64_t p = RL_TIME_NEVER;

    for (size_t i = 0; i < rl_sched_count(&b->sched); i++) {
        RlEvent *ev = rl_sched_nth(&b->sched, i);
        if (ev->kind != except) {
            p = MIN(p, ev->time);
        }
    }
    return p == RL_TIME_NEVER ? p : MAX(p, now);
}

/* ---- interrupts ------------------------------------------------------------------- */

void rl_board_update_irq(RlBoard *b)
{
    b->front->irq(b, false);
}

void rl_board_raise(RlBoard *b, uint32_t cause)
{
    b->irq_status |= cause;
    if (cause & b->irq_mask) {
        b->front->irq(b, true);
    }
}

void rl_board_ack(RlBoard *b, uint32_t causes)
{
    b->irq_status &= ~causes;
    rl_board_update_irq(b);
}

void rl_board_set_mask(RlBoard *b, uint32_t mask)
{
    b->irq_mask = mask & b->info->irq_all;
    rl_board_update_irq(b);
}

/* ---- DMA ------------------------------------------------------------------------------ */

MemTxResult rl_board_dma_rw(RlBoard *b, uint64_t addr, void *buf, uint64_t len, bool write)
{
    return dma_memory_rw(b->dma_as, addr, buf, len,
                         write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE,
                         MEMTXATTRS_UNSPECIFIED);
}

/* ---- the guest's errors -------------------------------------------------------------- */

void rl_board_guest_error(RlBoard *b, const char *fmt, ...)
{
    g_autofree char *what = NULL;
    va_list ap;

    va_start(ap, fmt);
    what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "%s node %u: %s\n", b->info->name, b->node, what);
}

/* ---- trace ---------------------------------------------------------------------------- */

const char *rl_reg_name(const RlRegName *names, uint64_t offset)
{
    for (; names->name; names++) {
        if (names->offset == offset) {
            return names->name;
        }
    }
    return "unknown";
}

/* ---- migration ---------------------------------------------------------------------- */

int rl_board_refuse(RlBoard *b, const char *fmt, ...)
{
    g_autofree char *what = NULL;
    va_list ap;

    va_start(ap, fmt);
    what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    error_report("%s node %u: the stream's %s", b->info->name, b->node, what);
    return -EINVAL;
}

static int rl_board_post_load(void *opaque, int version_id)
{
    RlBoard *b = opaque;

    if ((b->irq_status | b->irq_mask) & ~b->info->irq_all) {
        return rl_board_refuse(b, "irq_status 0x%x or irq_mask 0x%x has bits of no cause",
                               b->irq_status, b->irq_mask);
    }
    if (b->nodes < 1 || b->nodes > b->info->max_nodes) {
        return rl_board_refuse(b, "nodes %u is not 1..%u", b->nodes, b->info->max_nodes);
    }
    return 0;
}

const VMStateDescription vmstate_rl_board = {
    .name = "retrolink-board",
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = rl_board_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(irq_status, RlBoard),
        VMSTATE_UINT32(irq_mask, RlBoard),
        VMSTATE_UINT32(nodes, RlBoard),
        VMSTATE_RL_SCHED(sched, RlBoard),
        VMSTATE_END_OF_LIST()
    },
};
