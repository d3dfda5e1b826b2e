/*
 * The CompactPCI backplane board: a non-transparent bridge (Intel 21554 style) between
 * a node's PCI bus and the backplane shared by every node, which the fabric's
 * `cpci_bus` topology models. Register map and behaviour: retrolink/regs/cpci-regs.h;
 * frames: retrolink/proto/cpci.h; timing: docs/boards/cpci.md. The bridge is modelled
 * from its components (cpci.h): the node's own PCI bus for the CPU's accesses (rl-bus),
 * the same bus as the bridge masters it for peers' transactions (an RlServer), the
 * bridge's latency to the backplane and the node's memory read latency. Everything runs
 * as events at exact virtual times (rl-sched).
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

#include "cpci.h"
#include "hw/retrolink/trace.h"

/* ---- timing ------------------------------------------------------------------------ */

/* Data phases of an access of 'bytes': a PCI transaction has at least one. */
uint64_t cpci_phases(CpciState *s, uint32_t bytes)
{
    return bytes ? (bytes + s->width - 1) / s->width : 1;
}

uint64_t cpci_pci_data_ns(CpciState *s, uint32_t bytes)
{
    return (s->arb_cycles + s->addr_cycles + cpci_phases(s, bytes)) * s->cycle_ns;
}

uint64_t cpci_pci_ns(CpciState *s, uint32_t bytes)
{
    return cpci_pci_data_ns(s, bytes) + s->turnaround_cycles * s->cycle_ns;
}

/* ---- errors and interrupts ------------------------------------------------------------ */

static uint32_t cpci_causes(CpciState *s)
{
    return (s->db_status & ~s->db_mask ? CPCI_IRQ_DOORBELL : 0) |
           (s->err_status & ~s->err_mask ? CPCI_IRQ_ERROR : 0);
}

/*
 * IRQ_STATUS follows DB_STATUS and ERR_STATUS under their masks; 'new_causes' are
 * causes an event just raised (a doorbell rung, an error): each one that is unmasked
 * is a new MSI, even if its cause was pending already.
 */
void cpci_update_irq(CpciState *s, uint32_t new_causes)
{
    uint32_t causes = cpci_causes(s);

    s->rl->irq_status = causes;
    if (causes & new_causes) {
        rl_board_raise(s->rl, causes & new_causes);
    } else {
        rl_board_update_irq(s->rl);
    }
}

void cpci_error(CpciState *s, uint32_t err, uint32_t addr)
{
    s->err_status |= err;
    s->err_addr = addr;
    trace_retrolink_cpci_error(s->rl->node, err, addr, cpci_now());
    cpci_update_irq(s, (err & ~s->err_mask) ? CPCI_IRQ_ERROR : 0);
}

/* ---- the backplane ------------------------------------------------------------------- */

/*
 * A window access or doorbell for node 'node' may go: the board enabled, not this node,
 * a node on the backplane and up. Else the error, at 'addr'.
 */
bool cpci_peer_ok(CpciState *s, uint32_t node, uint32_t addr)
{
    uint32_t err = 0;

    if (!(s->ctrl & CPCI_CTRL_ENABLE)) {
        err = CPCI_ERR_DISABLED;
    } else if (node == s->rl->node) {
        err = CPCI_ERR_SELF;
    } else if (!s->up || node >= s->rl->nodes || !(s->peers_up & (1u << node))) {
        err = CPCI_ERR_NO_NODE;
    }
    if (err) {
        rl_board_guest_error(s->rl, "access for node %u at 0x%x refused (error 0x%x)", node,
                             addr, err);
        cpci_error(s, err, addr);
    }
    return !err;
}

void cpci_send(CpciState *s, uint32_t dst, const CpciFrame *f, uint64_t ready)
{
    uint32_t data = f->h.type == CPCI_T_WRITE ||
                    (f->h.type == CPCI_T_READ_DONE && !(f->h.flags & CPCI_FF_ABORT))
                    ? f->h.len : 0;

    trace_retrolink_cpci_frame_out(s->rl->node, f->h.type, dst, f->h.offset, f->h.len,
                                   ready);
    rl_port_send(s->rl->port, ready, dst, 0, f, CPCI_WIRE_HDR_SIZE + data);
    cpci_txq_sent(s, f);
}

/* ---- events ------------------------------------------------------------------------ */

static void cpci_link_event(CpciState *s, uint32_t peer, bool up)
{
    if (peer < CPCI_MAX_NODES) {
        s->peers_up = up ? s->peers_up | (1u << peer) : s->peers_up & ~(1u << peer);
    }
    trace_retrolink_cpci_peer(s->rl->node, peer, up, cpci_now());
}

static void cpci_event(void *opaque, RlEvent *ev)
{
    CpciState *s = opaque;

    switch (ev->kind) {
    case CPCI_EV_ARRIVE:
        cpci_rx_arrive(s, ev->ptr, ev->time);
        break;
    case CPCI_EV_LAND:
        cpci_rx_land(s, ev->ptr, ev->time);
        break;
    case CPCI_EV_SERVE:
        cpci_rx_serve(s, ev->ptr, ev->time);
        break;
    case CPCI_EV_LINK:
        cpci_link_event(s, ev->arg & ~(1u << 31), ev->arg >> 31);
        break;
    }
}

/* ---- the fabric side ----------------------------------------------------------------- */

static void cpci_link_frame(void *opaque, uint64_t at, uint64_t seq, uint32_t src,
                            uint32_t flags, const uint8_t *data, uint32_t len)
{
    CpciState *s = opaque;
    CpciFrame *f;

    if (len < CPCI_WIRE_HDR_SIZE || len > CPCI_FRAME_MAX) {
        warn_report("retrolink-cpci node %u: the fabric delivered a frame of %u bytes from "
                    "node %u", s->rl->node, len, src);
        return;
    }
    f = g_new0(CpciFrame, 1);
    memcpy(f, data, len);
    if (!cpci_frame_valid(f, len - CPCI_WIRE_HDR_SIZE, src)) {
        warn_report("retrolink-cpci node %u: the fabric delivered a malformed frame from "
                    "node %u (type %u, len %u, offset 0x%x)", s->rl->node, src, f->h.type,
                    f->h.len, f->h.offset);
        g_free(f);
        return;
    }
    trace_retrolink_cpci_frame_in(s->rl->node, src, f->h.type, f->h.offset, f->h.len, at);
    if (f->h.type == CPCI_T_READ_DONE) {
        cpci_load_completion(s, f, at);
        g_free(f);
        return;
    }
    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_FRAME, seq, CPCI_EV_ARRIVE, 0, 0, f);
}

/* The backplane carried the oldest of this bridge's frames without one (at >= now). */
static void cpci_link_notice(void *opaque, uint64_t at, uint64_t seq)
{
    cpci_txq_notice(opaque, at);
}

static void cpci_link_status(void *opaque, uint64_t at, uint32_t peer, bool up)
{
    CpciState *s = opaque;

    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_LINK, peer, CPCI_EV_LINK,
                 (peer & 0x7fffffff) | ((uint32_t)up << 31), 0, NULL);
}

/*
 * The earliest a frame could be ready on the backplane if none arrived: an event may
 * send one (a load served) no earlier than its time; the guest, acting at guest_ns, or
 * once the load that holds it has its data back (no sooner than the grants allow it to
 * arrive), needs a store (into a window, or DB_RING) on the node's PCI, after the
 * transfer on it still under way, and the bridge's latency.
 */
static uint64_t cpci_promise(void *opaque, uint64_t now, uint64_t guest_ns)
{
    CpciState *s = opaque;
    uint64_t p = RL_TIME_NEVER;

    if (guest_ns != RL_TIME_NEVER) {
        uint64_t go = MAX(guest_ns, s->bus.free_at);
        if (s->load.pending) {
            uint64_t back = s->load.have ? s->load.arrival : s->load.floor;
            go = MAX(go, back + cpci_pci_ns(s, s->load.size));
        }
        p = go + cpci_pci_ns(s, 1) + s->bridge_ns;
    }
    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        if (ev->kind != CPCI_EV_LINK) {
            p = MIN(p, ev->time);
        }
    }
    return MAX(p, now);
}

static void cpci_link_welcome(void *opaque, uint32_t nodes)
{
    CpciState *s = opaque;

    if (nodes > CPCI_MAX_NODES) {
        warn_report("retrolink-cpci node %u: %u nodes on the backplane; the board reaches "
                    "the first %d", s->rl->node, nodes, CPCI_MAX_NODES);
        nodes = CPCI_MAX_NODES;
    }
    s->rl->nodes = nodes;
    s->up = true;
    s->peers_up = 0;
    for (uint32_t p = 0; p < MIN(nodes, (uint32_t)CPCI_MAX_NODES); p++) {
        if (p != s->rl->node) {
            s->peers_up |= 1u << p;
        }
    }
}

static const RlPortOps cpci_link_ops = {
    .welcome = cpci_link_welcome,
    .frame = cpci_link_frame,
    .notice = cpci_link_notice,
    .link = cpci_link_status,
    .promise = cpci_promise,
};

/*
 * A load served: the node's PCI read of one phase and the memory, then the bridge. (A
 * notice never makes a frame sooner than the promise says: a retried store is no earlier
 * than its first attempt's; the backplane counts notices in no floor, notices_hold.)
 */
static uint64_t cpci_reaction_ns(void *dev)
{
    CpciState *s = dev;

    return MAX(1, cpci_pci_ns(s, 1) + s->mem_read_ns + s->bridge_ns);
}

/* ---- reset --------------------------------------------------------------------------- */

/* Links, arrivals, and peers' loads: each load is answered (refused if the export is off) */
static bool cpci_keep_link_events(void *opaque, RlEvent *ev)
{
    if (ev->kind == CPCI_EV_LINK || ev->kind == CPCI_EV_ARRIVE || ev->kind == CPCI_EV_SERVE) {
        return true;
    }
    g_free(ev->ptr);
    return false;
}

static bool cpci_drop_event(void *opaque, RlEvent *ev)
{
    g_free(ev->ptr);
    return false;
}

/*
 * Everything back to power-on but the backplane: writes already on their way to memory
 * are dropped; frames still arriving are judged at their arrival, and peers' loads are
 * answered (refused: the export is off by then), so that no peer waits for ever.
 */
void cpci_board_reset(CpciState *s)
{
    rl_sched_filter(&s->rl->sched, cpci_keep_link_events, s);
    s->ctrl = 0;
    s->export_lo = s->export_hi = s->export_size = 0;
    s->db_status = s->db_mask = 0;
    s->err_status = s->err_mask = s->err_addr = 0;
    s->tx_writes = s->tx_bytes = s->tx_reads = 0;
    s->rx_writes = s->rx_bytes = s->rx_reads = s->rx_rejected = 0;
    s->db_sent = s->db_received = 0;
    s->target.free_at = 0;
    s->rl->irq_mask = CPCI_IRQ_ALL;         /* IRQ_STATUS is masked by DB_MASK, ERR_MASK */
    s->rl->irq_status = 0;
    rl_board_update_irq(s->rl);
}

/* ---- migration ------------------------------------------------------------------------ */

/*
 * Everything the behaviour depends on is saved but what is in flight: a snapshot is
 * taken at a barrier where the backplane is quiet; a transaction on its way (a frame
 * arriving, a write landing, a load being served) or a held vCPU refuses to be saved,
 * named. post_load checks every field that came from the stream.
 */
static bool cpci_event_check(void *opaque, const RlEvent *ev, Error **errp)
{
    uint32_t peer = ev->arg & ~(1u << 31);

    if (ev->kind != CPCI_EV_LINK || ev->cls != RL_EV_CLASS_LINK || ev->key != peer ||
        peer >= RL_MAX_NODES) {
        error_setg(errp, "kind %d, class %u, key %" PRIu64 ": only link events of a node "
                   "below %d are saved", ev->kind, ev->cls, ev->key, RL_MAX_NODES);
        return false;
    }
    return true;
}

static int cpci_pre_save(void *opaque)
{
    CpciState *s = opaque;
    g_autoptr(GString) what = g_string_new(NULL);

    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        if (ev->kind != CPCI_EV_LINK) {
            g_string_append_printf(what, "; a transaction (event kind %d) at %" PRIu64 " ns",
                                   ev->kind, ev->time);
        }
    }
    if (rl_bus_stalling(&s->bus)) {
        g_string_append_printf(what, "; the vCPU held by an access until %" PRIu64 " ns",
                               s->bus.free_at);
    }
    if (s->load.pending) {
        g_string_append_printf(what, "; a load from node %u waiting for its data",
                               s->load.node);
    }
    if (cpci_txq_pending(s, cpci_now())) {
        g_string_append_printf(what, "; %u frames not yet carried by the backplane",
                               s->txq.count);
    }
    if (what->len) {
        error_report("retrolink-cpci node %u: cannot save the board with transactions in "
                     "flight%s", s->rl->node, what->str);
        return -EINVAL;
    }
    return 0;
}

static int cpci_pre_load(void *opaque)
{
    CpciState *s = opaque;

    rl_sched_filter(&s->rl->sched, cpci_drop_event, s);
    return 0;
}

static int cpci_post_load(void *opaque, int version_id)
{
    CpciState *s = opaque;
    uint32_t nodes = s->rl->nodes;

    if (s->ctrl & ~(CPCI_CTRL_ENABLE | CPCI_CTRL_EXPORT)) {
        return rl_board_refuse(s->rl, "ctrl 0x%x has bits other than ENABLE and EXPORT",
                               s->ctrl);
    }
    if (s->export_lo % CPCI_PAGE_SIZE || s->export_size % CPCI_PAGE_SIZE ||
        s->export_size > CPCI_EXPORT_MAX) {
        return rl_board_refuse(s->rl, "export of 0x%x bytes at 0x%x%08x: not whole pages "
                               "or larger than 0x%x", s->export_size, s->export_hi,
                               s->export_lo, CPCI_EXPORT_MAX);
    }
    if ((s->err_status | s->err_mask) & ~CPCI_ERR_ALL) {
        return rl_board_refuse(s->rl, "err_status 0x%x or err_mask 0x%x has bits of no "
                               "error", s->err_status, s->err_mask);
    }
    if (s->err_addr >= CPCI_WINDOWS_SIZE) {
        return rl_board_refuse(s->rl, "err_addr 0x%x is beyond the windows", s->err_addr);
    }
    if (nodes > CPCI_MAX_NODES || (s->up && s->rl->node >= nodes)) {
        return rl_board_refuse(s->rl, "%u nodes with this node %u", nodes, s->rl->node);
    }
    if (nodes * CPCI_DB_PER_NODE < 32 && s->db_status >> (nodes * CPCI_DB_PER_NODE)) {
        return rl_board_refuse(s->rl, "db_status 0x%x has doorbells of nodes past %u",
                               s->db_status, nodes);
    }
    if (s->peers_up & ~(((1u << nodes) - 1) & ~(1u << s->rl->node))) {
        return rl_board_refuse(s->rl, "peers_up 0x%x names nodes not on the backplane",
                               s->peers_up);
    }
    if (s->rl->irq_mask != CPCI_IRQ_ALL || s->rl->irq_status != cpci_causes(s)) {
        return rl_board_refuse(s->rl, "irq_status 0x%x / irq_mask 0x%x disagree with the "
                               "doorbells and errors", s->rl->irq_status, s->rl->irq_mask);
    }
    return cpci_txq_post_load(s);
}

static const VMStateDescription vmstate_cpci = {
    .name = TYPE_RETROLINK_CPCI,
    .version_id = 2,
    .minimum_version_id = 2,
    .pre_save = cpci_pre_save,
    .pre_load = cpci_pre_load,
    .post_load = cpci_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_RL_PCI_BOARD(CpciState),
        VMSTATE_UINT32(ctrl, CpciState),
        VMSTATE_UINT32(export_lo, CpciState),
        VMSTATE_UINT32(export_hi, CpciState),
        VMSTATE_UINT32(export_size, CpciState),
        VMSTATE_UINT32(db_status, CpciState),
        VMSTATE_UINT32(db_mask, CpciState),
        VMSTATE_UINT32(err_status, CpciState),
        VMSTATE_UINT32(err_mask, CpciState),
        VMSTATE_UINT32(err_addr, CpciState),
        VMSTATE_UINT32(tx_writes, CpciState),
        VMSTATE_UINT32(tx_bytes, CpciState),
        VMSTATE_UINT32(tx_reads, CpciState),
        VMSTATE_UINT32(rx_writes, CpciState),
        VMSTATE_UINT32(rx_bytes, CpciState),
        VMSTATE_UINT32(rx_reads, CpciState),
        VMSTATE_UINT32(rx_rejected, CpciState),
        VMSTATE_UINT32(db_sent, CpciState),
        VMSTATE_UINT32(db_received, CpciState),
        VMSTATE_BOOL(up, CpciState),
        VMSTATE_UINT32(peers_up, CpciState),
        VMSTATE_UINT32(tag, CpciState),
        VMSTATE_RL_BUS(bus, CpciState),
        VMSTATE_RL_SERVER(target, CpciState),
        VMSTATE_UINT32(txq.head, CpciState),
        VMSTATE_UINT32(txq.count, CpciState),
        VMSTATE_UINT32(txq.noticed, CpciState),
        VMSTATE_UINT32(txq.held, CpciState),
        VMSTATE_UINT8_ARRAY(txq.bytes, CpciState, CPCI_TXQ_SIZE),
        VMSTATE_UINT64_ARRAY(txq.at, CpciState, CPCI_TXQ_SIZE),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- QOM --------------------------------------------------------------------------- */

static bool cpci_realize(void *dev, Error **errp)
{
    CpciState *s = dev;

    if (!s->cycle_ns || s->cycle_ns > 1000000 || !s->width || s->width > 64 ||
        s->arb_cycles > 1000 || s->addr_cycles > 1000 || s->turnaround_cycles > 1000) {
        error_setg(errp, "retrolink-cpci: pci-cycle-ns must be 1..10^6, pci-width-bytes "
                   "1..64, and the arbitration, address and turnaround cycles at most 1000");
        return false;
    }
    if (s->bridge_ns > 1000000000 || s->mem_read_ns > 1000000000) {
        error_setg(errp, "retrolink-cpci: bridge-ns and mem-read-ns must be at most 1 s");
        return false;
    }
    if (s->pw_bytes < MAX(CPCI_PW_MIN_BYTES, cpci_phases(s, CPCI_MAX_ACCESS) * s->width) ||
        s->pw_bytes > CPCI_PW_MAX_BYTES || s->pw_bytes / s->width > CPCI_PW_MAX_ENTRIES) {
        error_setg(errp, "retrolink-cpci: posted-write-bytes must be %d..%d, hold an "
                   "%d-byte access and at most %d entries of pci-width-bytes",
                   CPCI_PW_MIN_BYTES, CPCI_PW_MAX_BYTES, CPCI_MAX_ACCESS,
                   CPCI_PW_MAX_ENTRIES);
        return false;
    }
    memory_region_init_io(&s->ctrl_bar, OBJECT(s), &cpci_ctrl_ops, s, "retrolink-cpci-ctrl",
                          CPCI_CTRL_SIZE);
    s->rl->bar[CPCI_CTRL_BAR] = &s->ctrl_bar;
    memory_region_init_io(&s->win_bar, OBJECT(s), &cpci_win_ops, s, "retrolink-cpci-windows",
                          CPCI_WINDOWS_SIZE);
    s->rl->bar[CPCI_WINDOW_BAR] = &s->win_bar;
    /* the bus's rate is unused: every access is held its cycles (rl_bus_hold) */
    rl_bus_init(&s->bus, 133000000);
    s->rl->irq_mask = CPCI_IRQ_ALL;
    return true;
}

static void cpci_unrealize(void *dev)
{
    CpciState *s = dev;

    rl_sched_filter(&s->rl->sched, cpci_drop_event, s);
    rl_bus_destroy(&s->bus);
}

static void cpci_reset(void *dev)
{
    CpciState *s = dev;

    cpci_board_reset(s);
    rl_bus_release(&s->bus);
    s->bus.free_at = 0;
}

static const RlBoardInfo cpci_board_info = {
    .name = TYPE_RETROLINK_CPCI,
    .port_name = "cpci",
    .protocol = RL_PROTO_CPCI,
    .irq_all = CPCI_IRQ_ALL,
    .max_nodes = CPCI_MAX_NODES,
    .port_ops = &cpci_link_ops,
    .event = cpci_event,
    .event_check = cpci_event_check,
    .realize = cpci_realize,
    .reaction_ns = cpci_reaction_ns,
    .unrealize = cpci_unrealize,
    .reset = cpci_reset,
};

/* Defaults and their sources: src/retrolink/boards/cpci.py, docs/boards/cpci.md. */
static const Property cpci_properties[] = {
    DEFINE_PROP_MACADDR("mac", CpciState, mac),
    DEFINE_PROP_UINT64("pci-cycle-ns", CpciState, cycle_ns, 30),
    DEFINE_PROP_UINT64("pci-width-bytes", CpciState, width, 4),
    DEFINE_PROP_UINT64("pci-arb-cycles", CpciState, arb_cycles, 2),
    DEFINE_PROP_UINT64("pci-addr-cycles", CpciState, addr_cycles, 1),
    DEFINE_PROP_UINT64("pci-turnaround-cycles", CpciState, turnaround_cycles, 1),
    DEFINE_PROP_UINT64("bridge-ns", CpciState, bridge_ns, 240),
    DEFINE_PROP_UINT64("mem-read-ns", CpciState, mem_read_ns, 150),
    DEFINE_PROP_UINT64("posted-write-bytes", CpciState, pw_bytes, 256),
    DEFINE_RL_BOARD_START_US(CpciState, 0),
};

static void cpci_instance_init(Object *obj)
{
    RETROLINK_CPCI(obj)->rl = rl_pci_board(obj);
}

static void cpci_class_init(ObjectClass *klass, void *data)
{
    rl_pci_board_class_set(klass, &cpci_board_info, CPCI_PCI_VENDOR_ID, CPCI_PCI_DEVICE_ID,
                           CPCI_VERSION, "CompactPCI backplane bridge (21554-like)",
                           &vmstate_cpci);
    PCI_DEVICE_CLASS(klass)->class_id = CPCI_PCI_CLASS;     /* a bridge, "other" */
    device_class_set_props(DEVICE_CLASS(klass), cpci_properties);
}

static const TypeInfo cpci_info = {
    .name = TYPE_RETROLINK_CPCI,
    .parent = TYPE_RL_PCI_BOARD,
    .instance_size = sizeof(CpciState),
    .instance_init = cpci_instance_init,
    .class_init = cpci_class_init,
};

static void cpci_register_types(void)
{
    type_register_static(&cpci_info);
}

type_init(cpci_register_types)
