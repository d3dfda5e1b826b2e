/*
 * PUMA-II distributed shared memory board (a VME board on a SPARCstation 2, here a
 * PCI device on the x86 nodes whose BARs cost the VME bus's time) on a retrolink token
 * ring: the fabric's `token_ring` topology models the 100 Mb/s ring. Register map:
 * retrolink/regs/puma2-regs.h; frames and protocol: retrolink/proto/puma2.h; behaviour
 * and timing: docs/boards/puma2.md. The board is modelled from its components, each a
 * timed resource (puma2.h): the VME bus for the host's programmed I/O (rl-bus), the
 * board's controller and its page-copy engine. Everything runs as events at exact
 * virtual times (rl-sched).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"

#include "puma2.h"
#include "hw/retrolink/trace.h"

/* ---- state ------------------------------------------------------------------------ */

/* Enabled, and its start is over: it takes commands. */
bool puma2_ready(Puma2State *s)
{
    return (s->ctrl & PUMA2_CTRL_ENABLE) && puma2_now() >= s->ready_at;
}

/* The VME time of an access of `bytes`: one 32-bit transaction per 4 bytes or part. */
uint64_t puma2_vme_ns(Puma2State *s, unsigned bytes)
{
    uint64_t transactions = DIV_ROUND_UP(bytes, 4);

    return transactions * (s->vme_overhead_ns + rl_bytes_ns(4, s->vme_rate));
}

/* ---- events ------------------------------------------------------------------------ */

static void puma2_event(void *opaque, RlEvent *ev)
{
    Puma2State *s = opaque;

    switch (ev->kind) {
    case PUMA2_EV_CMD:
        puma2_cmd_event(s);
        break;
    case PUMA2_EV_ARRIVE:
        puma2_msg_arrive(s, ev->ptr);
        break;
    case PUMA2_EV_MSG:
        puma2_msg_event(s, ev->ptr);
        break;
    case PUMA2_EV_COPIED:
        puma2_copied_event(s, ev->ptr);
        break;
    case PUMA2_EV_SEND:
        puma2_send_event(s, ev->ptr);
        break;
    case PUMA2_EV_LINK:
        /* the ring is the boards' own: a peer's state changes nothing the host sees */
        break;
    case PUMA2_EV_RELEASE:
        puma2_release_event(s, ev->arg);
        break;
    }
}

/* ---- the fabric side --------------------------------------------------------------- */

static void puma2_link_frame(void *opaque, uint64_t at, uint64_t seq, uint32_t src,
                             uint32_t flags, const uint8_t *data, uint32_t len)
{
    Puma2State *s = opaque;
    const char *why = "shorter than the header";

    if (len >= sizeof(Puma2Wire) && len <= sizeof(Puma2Wire) + PUMA2_PAGE &&
        src < s->rl->nodes) {
        Puma2Msg *m = g_malloc0(sizeof(Puma2Msg) + len - sizeof(Puma2Wire));
        m->peer = src;
        memcpy(&m->hdr, data, len);
        if (puma2_msg_ok(s, m, len, &why)) {
            rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_FRAME, seq, PUMA2_EV_ARRIVE, 0, 0, m);
            return;
        }
        g_free(m);
    } else if (len >= sizeof(Puma2Wire)) {
        why = src < s->rl->nodes ? "longer than a page" : "from a node outside the ring";
    }
    /* the fabric's (or the peer board's) fault, not this guest's */
    warn_report("retrolink-puma2 node %u: dropped a malformed frame from node %u (%u bytes: "
                "%s)", s->rl->node, src, len, why);
}

static void puma2_link_status(void *opaque, uint64_t at, uint32_t peer, bool up)
{
    Puma2State *s = opaque;

    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_LINK, peer, PUMA2_EV_LINK,
                 (peer & 0x7fffffff) | ((uint32_t)up << 31), 0, NULL);
}

/*
 * The least time from a guest action to a frame it makes the board send (RlPortOps.lead).
 * The board sends only from its own events, each a job of the controller (request-ns)
 * after what started it (puma2-dsm.c): a CMD store's decoding (cmd_pump) from the
 * store's end; a RESP load that makes room for an answer, the same; a CTRL store that
 * resets the host interface, a deferred message's release (puma2_host_reset) from the
 * store's end. Every access is one 32-bit VME transaction at least (puma2_vme_ns), from
 * the vCPU's time (rl_bus_hold); board memory accesses send nothing. A board not yet
 * enabled takes no command (puma2_promise adds its start: less is still true).
 */
static uint64_t puma2_lead(void *opaque)
{
    Puma2State *s = opaque;

    return puma2_vme_ns(s, 4) + s->request_ns;
}

/*
 * The earliest time a frame could leave the board without the guest (RL_TIME_NEVER:
 * none): every frame is sent by an event of the board's own queue at its time (a
 * command decoded, a message handled, a page copied, a release), and a message arrived
 * leads to one, so every event but a link change bounds it. Its queue of events is all
 * it has: rl-board publishes this at each change of it.
 */
static uint64_t puma2_pending(void *opaque, uint64_t now)
{
    Puma2State *s = opaque;

    return rl_board_events_floor(s->rl, PUMA2_EV_LINK, now);
}

/*
 * The earliest time a frame could leave the board if none arrived: one its events send
 * (puma2_pending), or one the guest, acting at guest_ns, makes it send (puma2_lead).
 */
static uint64_t puma2_promise(void *opaque, uint64_t now, uint64_t guest_ns)
{
    Puma2State *s = opaque;

    return rl_board_promise(s->rl, s->ctrl & PUMA2_CTRL_ENABLE, s->ready_at, guest_ns,
                            puma2_lead(s), puma2_pending(s, now), now);
}

/* The cluster started: the ring's boards are its nodes; every page starts at its manager. */
static void puma2_link_welcome(void *opaque, uint32_t nodes)
{
    Puma2State *s = opaque;

    if (nodes > PUMA2_MAX_NODES) {
        warn_report("retrolink-puma2 node %u: a ring of %u boards; the board addresses %u: "
                    "the others are unreachable", s->rl->node, nodes, PUMA2_MAX_NODES);
        nodes = PUMA2_MAX_NODES;
    }
    s->rl->nodes = nodes;
    puma2_dsm_init(s);
}

static const RlPortOps puma2_link_ops = {
    .welcome = puma2_link_welcome,
    .frame = puma2_link_frame,
    .link = puma2_link_status,
    .promise = puma2_promise,
    .lead = puma2_lead,
    .pending = puma2_pending,
};

/* Least delay from a frame arriving to one sent because of it: the controller's job. */
static uint64_t puma2_reaction_ns(void *dev)
{
    Puma2State *s = dev;

    return s->request_ns;
}

/* ---- reset ------------------------------------------------------------------------- */

static bool puma2_drop_event(void *opaque, RlEvent *ev)
{
    g_free(ev->ptr);
    return false;
}

/* ---- migration --------------------------------------------------------------------- */

/*
 * Saved: the registers, the FIFOs, the page table and (as a RAM block) the board
 * memory; a snapshot is taken at a barrier where the board is idle, and a board with a
 * command, a message, a page transaction or a held vCPU in flight refuses to be
 * saved, naming it. post_load checks every field that came from the stream
 * (docs/boards/puma2.md, "Snapshots").
 */
static bool puma2_event_check(void *opaque, const RlEvent *ev, Error **errp)
{
    uint32_t peer = ev->arg & ~(1u << 31);

    if (ev->kind != PUMA2_EV_LINK || ev->cls != RL_EV_CLASS_LINK || ev->key != peer ||
        peer >= RL_MAX_NODES) {
        error_setg(errp, "kind %d, class %u, key %" PRIu64 ": only link events of a node "
                   "below %d are saved", ev->kind, ev->cls, ev->key, RL_MAX_NODES);
        return false;
    }
    return true;
}

static int puma2_pre_save(void *opaque)
{
    Puma2State *s = opaque;
    g_autoptr(GString) what = g_string_new(NULL);
    uint32_t busy = 0;

    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        if (ev->kind != PUMA2_EV_LINK) {
            g_string_append_printf(what, "; %s until %" PRIu64 " ns",
                                   ev->kind == PUMA2_EV_CMD ? "a command in the controller"
                                   : ev->kind == PUMA2_EV_RELEASE ? "a reset's release in "
                                   "the controller" : "a message in the board", ev->time);
        }
    }
    if (s->cmd.count) {
        g_string_append_printf(what, "; %u commands in the FIFO", s->cmd.count);
    }
    for (uint32_t p = 0; p < s->npages; p++) {
        Puma2Page *pg = &s->pages[p];
        busy += pg->pending || pg->deferred || pg->acks_wanted || pg->mgr_busy ||
                pg->recall || pg->wait_read || pg->wait_write;
    }
    if (busy) {
        g_string_append_printf(what, "; %u pages in a transaction", busy);
    }
    if (rl_bus_stalling(&s->bus)) {
        g_string_append_printf(what, "; the vCPU held by a VME access until %" PRIu64 " ns",
                               s->bus.free_at);
    }
    if (what->len) {
        error_report("retrolink-puma2 node %u: cannot save the board with work in flight%s",
                     s->rl->node, what->str);
        return -EINVAL;
    }
    return 0;
}

static int puma2_pre_load(void *opaque)
{
    Puma2State *s = opaque;

    rl_sched_filter(&s->rl->sched, puma2_drop_event, s);
    return 0;
}

static bool puma2_resp_check(void *opaque, uint32_t v)
{
    Puma2State *s = opaque;

    return PUMA2_RESP_PAGE(v) < s->npages && PUMA2_RESP_KIND(v) <= PUMA2_KIND_REFUSED &&
           PUMA2_RESP_STATUS(v) <= PUMA2_ST_HELD && !(v & 0xf0);
}

static int puma2_post_load(void *opaque, int version_id)
{
    Puma2State *s = opaque;

    if (s->ctrl & ~PUMA2_CTRL_ENABLE) {
        return rl_board_refuse(s->rl, "ctrl 0x%x has bits other than ENABLE", s->ctrl);
    }
    if (s->error > PUMA2_ERR_NOT_WRITABLE) {
        return rl_board_refuse(s->rl, "error %u is not a PUMA2_ERR_*", s->error);
    }
    if (s->cmd.count) {
        return rl_board_refuse(s->rl, "%u commands in the FIFO (saved only when idle)",
                               s->cmd.count);
    }
    if (s->rl->nodes > PUMA2_MAX_NODES) {
        return rl_board_refuse(s->rl, "nodes %u is over %u", s->rl->nodes, PUMA2_MAX_NODES);
    }
    int ret = puma2_pages_check(s);
    if (ret) {
        return ret;
    }
    puma2_recount(s);
    return 0;
}

static const VMStateDescription vmstate_puma2_page = {
    .name = "retrolink-puma2-page",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(access, Puma2Page),
        VMSTATE_UINT8(hold, Puma2Page),
        VMSTATE_UINT8(pending, Puma2Page),
        VMSTATE_UINT8(recall, Puma2Page),
        VMSTATE_UINT8(deferred, Puma2Page),
        VMSTATE_UINT8(deferred_op, Puma2Page),
        VMSTATE_UINT8(deferred_from, Puma2Page),
        VMSTATE_UINT8(acks_wanted, Puma2Page),
        VMSTATE_UINT32(copyset, Puma2Page),
        VMSTATE_UINT8(owner, Puma2Page),
        VMSTATE_UINT8(mgr_busy, Puma2Page),
        VMSTATE_UINT8(mgr_last, Puma2Page),
        VMSTATE_UINT8(is_owner, Puma2Page),
        VMSTATE_UINT32(wait_read, Puma2Page),
        VMSTATE_UINT32(wait_write, Puma2Page),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_puma2 = {
    .name = TYPE_RETROLINK_PUMA2,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = puma2_pre_save,
    .pre_load = puma2_pre_load,
    .post_load = puma2_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_PCI_BOARD(Puma2State),
        VMSTATE_UINT32(ctrl, Puma2State),
        VMSTATE_UINT32(error, Puma2State),
        VMSTATE_UINT64(ready_at, Puma2State),
        VMSTATE_RL_FIFO(cmd, Puma2State),
        VMSTATE_RL_FIFO(resp, Puma2State),
        /* the table's length is the property's: a stream of another is refused here */
        VMSTATE_UINT32_EQUAL(npages, Puma2State, NULL),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(pages, Puma2State, npages, vmstate_puma2_page,
                                             Puma2Page),
        VMSTATE_UINT64(bus_ns, Puma2State),
        VMSTATE_UINT64(net_ns, Puma2State),
        VMSTATE_UINT32(pages_in, Puma2State),
        VMSTATE_UINT32(pages_out, Puma2State),
        VMSTATE_UINT32(msgs_in, Puma2State),
        VMSTATE_UINT32(msgs_out, Puma2State),
        VMSTATE_UINT32(invalidated, Puma2State),
        VMSTATE_UINT32(hi_latch, Puma2State),
        VMSTATE_RL_BUS(bus, Puma2State),
        VMSTATE_RL_SERVER(controller, Puma2State),
        VMSTATE_RL_SERVER(copier, Puma2State),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- QOM --------------------------------------------------------------------------- */

#define PUMA2_RATE_MAX          1000000000000ull        /* 10^12 bytes/s */
#define PUMA2_NS_MAX            1000000000ull           /* 1 s */

/* Its own part of realize (rl-board.h): the properties, the two BARs, the VME bus. */
static bool puma2_realize(void *dev, Error **errp)
{
    Puma2State *s = dev;
    uint64_t bytes = (uint64_t)s->memory_mib << 20;

    if (!s->memory_mib || (s->memory_mib & (s->memory_mib - 1)) ||
        bytes > (uint64_t)PUMA2_MAX_SPACE_PAGES * PUMA2_PAGE) {
        error_setg(errp, "retrolink-puma2: memory-mib must be a power of two, 1..%u "
                   "(the board memory, which is the shared space)",
                   PUMA2_MAX_SPACE_PAGES * PUMA2_PAGE >> 20);
        return false;
    }
    if (!s->vme_rate || !s->copy_rate || s->vme_rate > PUMA2_RATE_MAX ||
        s->copy_rate > PUMA2_RATE_MAX) {
        error_setg(errp, "retrolink-puma2: vme-rate and copy-rate must be 1..10^12 bytes "
                   "per second");
        return false;
    }
    if (!s->request_ns || s->request_ns > PUMA2_NS_MAX || s->vme_overhead_ns > PUMA2_NS_MAX) {
        error_setg(errp, "retrolink-puma2: request-ns must be 1 ns..1 s and "
                   "vme-overhead-ns at most 1 s");
        return false;
    }
    if (!memory_region_init_ram(&s->mem, OBJECT(s), "retrolink-puma2.mem", bytes, errp)) {
        return false;
    }
    s->mem_ptr = memory_region_get_ram_ptr(&s->mem);
    s->npages = bytes / PUMA2_PAGE;
    s->pages = g_new0(Puma2Page, s->npages);
    memory_region_init_io(&s->ctrl_bar, OBJECT(s), &puma2_ctrl_ops, s, "retrolink-puma2-ctrl",
                          PUMA2_CTRL_PAGE_SIZE);
    s->rl->bar[0] = &s->ctrl_bar;
    memory_region_init_io(&s->mem_bar, OBJECT(s), &puma2_mem_ops, s, "retrolink-puma2-vme",
                          bytes);
    s->rl->bar[1] = &s->mem_bar;
    rl_fifo_init(&s->cmd, s->rl, "CMD", PUMA2_CMD_DEPTH, NULL, s);
    rl_fifo_init(&s->resp, s->rl, "RESP", PUMA2_RESP_DEPTH, puma2_resp_check, s);
    rl_bus_init(&s->bus, s->vme_rate);
    if (s->rl->nodes) {
        puma2_dsm_init(s);      /* a lone board's; on a ring, at welcome */
    }
    return true;
}

static void puma2_unrealize(void *dev)
{
    Puma2State *s = dev;

    rl_sched_filter(&s->rl->sched, puma2_drop_event, s);
    rl_bus_destroy(&s->bus);
    g_clear_pointer(&s->pages, g_free);
}

static void puma2_reset(void *dev)
{
    Puma2State *s = dev;

    puma2_host_reset(s, puma2_now());
    s->ctrl = s->error = 0;
    s->ready_at = 0;
    s->rl->irq_status = s->rl->irq_mask = 0;
    rl_board_update_irq(s->rl);
    rl_bus_release(&s->bus);
}

static const RlBoardInfo puma2_board_info = {
    .name = TYPE_RETROLINK_PUMA2,
    .port_name = "puma2",
    .protocol = RL_PROTO_PUMA2,
    .irq_all = PUMA2_IRQ_ALL,
    .max_nodes = PUMA2_MAX_NODES,
    .port_ops = &puma2_link_ops,
    .event = puma2_event,
    .event_check = puma2_event_check,
    .realize = puma2_realize,
    .reaction_ns = puma2_reaction_ns,
    .unrealize = puma2_unrealize,
    .reset = puma2_reset,
};

/* Defaults and their sources: docs/boards/puma2.md, "Timing"; puma-ii.md. */
static const Property puma2_properties[] = {
    DEFINE_PROP_UINT32("memory-mib", Puma2State, memory_mib, 16),
    DEFINE_PROP_UINT64("vme-overhead-ns", Puma2State, vme_overhead_ns, 500),
    DEFINE_PROP_UINT64("vme-rate", Puma2State, vme_rate, 20000000),
    DEFINE_PROP_UINT64("request-ns", Puma2State, request_ns, 2000),
    DEFINE_PROP_UINT64("copy-rate", Puma2State, copy_rate, 40000000),
    DEFINE_RL_BOARD_START_US(Puma2State, 1000),
};

static void puma2_instance_init(Object *obj)
{
    RETROLINK_PUMA2(obj)->rl = rl_pci_board(obj);
}

static void puma2_class_init(ObjectClass *klass, void *data)
{
    rl_pci_board_class_set(klass, &puma2_board_info, PUMA2_PCI_VENDOR_ID,
                           PUMA2_PCI_DEVICE_ID, 1,
                           "PUMA-II distributed shared memory board on a retrolink token ring",
                           &vmstate_puma2);
    device_class_set_props(DEVICE_CLASS(klass), puma2_properties);
}

static const TypeInfo puma2_info = {
    .name = TYPE_RETROLINK_PUMA2,
    .parent = TYPE_RL_PCI_BOARD,
    .instance_size = sizeof(Puma2State),
    .instance_init = puma2_instance_init,
    .class_init = puma2_class_init,
};

static void puma2_register_types(void)
{
    type_register_static(&puma2_info);
}

type_init(puma2_register_types)
