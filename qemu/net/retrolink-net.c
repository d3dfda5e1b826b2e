/*
 * retrolink netdev: joins a stock QEMU NIC (e1000, eepro100, tulip, ...) to a network
 * of a retrolink fabric through the link port (rl-link.h). docs/boards/ethernet.md.
 *
 *   -netdev retrolink,id=ID,fabric=PATH,node=N[,network=I][,tx-latency-ns=T]
 *           [,rx-latency-ns=R][,dma-rate=BYTES_PER_S]
 *   -device e1000,netdev=ID,mac=52:54:00:52:I:N
 *
 * QEMU's NICs model registers, descriptor rings and interrupts, but no time: a frame
 * leaves the moment the guest's register write hands it over, and enters the NIC the
 * moment the backend offers it. This backend supplies the time, as a board model does:
 *  - send: the NIC calls rlnet_receive() in the vCPU thread, inside the MMIO write that
 *    sent the frame, so the virtual clock is exact there. The frame is ready for the
 *    wire after the NIC's fixed per-frame cost (tx-latency-ns: descriptor fetch, FIFO)
 *    and the DMA of its bytes across the NIC's bus (dma-rate); the fabric adds the
 *    wire. The destination station is the last byte of the destination MAC (retrolink
 *    assigns 52:54:00:52:NETWORK:NODE); a multicast or broadcast MAC goes to every
 *    other station; any other unicast MAC is dropped and counted.
 *  - receive: the fabric says ahead of time when a frame arrives (its last bit at this
 *    station). At that time (an rl-sched event, vCPU thread) the frame takes the bus
 *    after rx-latency-ns, and once its DMA is done it enters the NIC, if the NIC can
 *    take it (a free receive buffer, its receiver on). Otherwise it is dropped and
 *    counted, as hardware drops: never queued for later, which would make a full ring
 *    look like a slow one.
 *  - deferral: on a hub (a network that sends notices, rl_port_notices) a station
 *    holds its frames while the medium is busy, in its NIC's ring. The netdev hands the
 *    fabric one frame and takes the next only once the fabric's notice for it has come
 *    (the hub has taken it: it is on the wire, or dropped); until then it cannot
 *    receive from the NIC, and QEMU's net layer holds the NIC's frames for it (a NIC
 *    that sends with a callback, as the e100 does with qemu/patches/0011, waits for it
 *    with its descriptor in progress, and its driver's ring fills). At the notice the
 *    netdev flushes that queue, so the next frame's costs start then.
 * The bus is one resource for both directions (a 32-bit PCI bus is half duplex):
 * transfers take it in the order the NIC asks for them.
 *
 * Lock-step: the guest may make the NIC send at any instruction, so the promise is
 * the guest's next possible action plus the least send cost; the reaction time is
 * the least send cost: a hub's notice lets the NIC's held frame go at once (a frame
 * arriving costs its receive first). That gives the nodes grants of a
 * microsecond or two while they compute. The link makes booting cheaper: for a PCI
 * NIC, the link comes up link-up-ns after the guest enables the NIC's bus mastering
 * (its driver starts it; the PHY negotiates) and goes down when it disables it; while
 * it is down the NIC cannot send, so a node that has not started its NIC promises at
 * least that much, and boots with long grants. Counters are printed to stderr when QEMU exits; each frame is a trace event
 * (-trace 'retrolink_net_*').
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/timer.h"
#include "qapi/error.h"
#include "qapi/qapi-types-net.h"
#include "net/net.h"
#include "net/clients.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "system/system.h"
#include "exec/memory.h"
#include "exec/address-spaces.h"
#include "hw/pci/pci_device.h"

#include "hw/retrolink/core/rl-link.h"
#include "hw/retrolink/core/rl-sched.h"
#include "hw/retrolink/trace.h"

#define RLNET_HDR_LEN       14      /* an Ethernet header: the least frame we route */
#define RLNET_MIN_FRAME     60      /* 802.3's least frame without FCS: the MAC pads */
/* every time we are given is below this; sums of a few stay below 2^63 */
#define RLNET_MAX_NS        (3600ULL * 1000 * 1000 * 1000)

/* retrolink's MAC scheme: 52:54:00:52:NETWORK:NODE (docs/boards/ethernet.md) */
static const uint8_t rlnet_mac_prefix[4] = { 0x52, 0x54, 0x00, 0x52 };

enum RlNetDrop {
    RLNET_DROP_TX_RUNT,         /* shorter than an Ethernet header */
    RLNET_DROP_TX_OVERSIZE,     /* longer than the fabric carries (RL_MAX_PAYLOAD) */
    RLNET_DROP_TX_UNKNOWN_DEST, /* unicast MAC not of a station of this network */
    RLNET_DROP_TX_NO_FABRIC,    /* the fabric connection is gone */
    RLNET_DROP_RX_RUNT,         /* from the fabric, shorter than an Ethernet header */
    RLNET_DROP_RX_NO_LINK,      /* the NIC's link is down */
    RLNET_DROP_RX_NOT_READY,    /* the NIC could not take it: no free buffer, rx off */
    RLNET_DROP_RX_REFUSED,      /* the NIC said it could, then did not take it */
    RLNET_DROP__MAX
};

static const char *const rlnet_drop_names[RLNET_DROP__MAX] = {
    [RLNET_DROP_TX_RUNT] = "tx_runt",
    [RLNET_DROP_TX_OVERSIZE] = "tx_oversize",
    [RLNET_DROP_TX_UNKNOWN_DEST] = "tx_unknown_dest",
    [RLNET_DROP_TX_NO_FABRIC] = "tx_no_fabric",
    [RLNET_DROP_RX_RUNT] = "rx_runt",
    [RLNET_DROP_RX_NO_LINK] = "rx_no_link",
    [RLNET_DROP_RX_NOT_READY] = "rx_not_ready",
    [RLNET_DROP_RX_REFUSED] = "rx_refused",
};

enum RlNetEventKind {
    RLNET_EV_ARRIVE,    /* ptr: RlNetFrame; its last bit is here: it takes the bus */
    RLNET_EV_DELIVER,   /* ptr: RlNetFrame; in memory: it enters the NIC */
    RLNET_EV_LINK_UP,   /* gen: the link's generation when it was scheduled */
    RLNET_EV_NOTICE,    /* the network took our last frame: hand over the next */
};

typedef struct RlNetFrame {
    uint32_t src;
    uint32_t len;
    uint8_t data[];
} RlNetFrame;

typedef struct RlNetState {
    NetClientState nc;
    RlPort *port;
    RlSched sched;
    RlServer bus;               /* the NIC's bus: one DMA at a time, tx and rx alike */
    uint32_t node;
    uint32_t nodes;
    uint8_t network;
    uint64_t tx_latency, rx_latency, dma_rate, link_up_ns;
    uint64_t tx_least;          /* least cost of a frame sent */
    uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes;
    bool defer;                 /* the network sends notices: one frame handed at a time */
    bool tx_waiting;            /* a frame handed over, its notice not come yet */
    uint64_t tx_deferred;       /* frames the NIC had to hold until a notice */
    uint64_t drops[RLNET_DROP__MAX];
    bool reported;
    Notifier exit_notifier;
    bool vmstate_registered;

    /* the link of a PCI NIC that reports link state (NULL pci: always up) */
    PCIDevice *pci;
    bool master;                /* its bus mastering, as last seen */
    bool link_up;
    uint64_t link_up_at;        /* when it comes up; RL_TIME_NEVER while master is off */
    uint32_t link_gen;
    MemoryListener listener;    /* sees the bus master bit change, at that instruction */
    bool listening;
    Notifier machine_done;
} RlNetState;

static uint64_t rlnet_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* a + b, or RL_TIME_NEVER past 2^63 (a time the fabric gave us may be that late) */
static uint64_t rlnet_add(uint64_t a, uint64_t b)
{
    return a >= INT64_MAX || b >= INT64_MAX - a ? RL_TIME_NEVER : a + b;
}

static void rlnet_drop(RlNetState *s, enum RlNetDrop why, uint32_t len)
{
    s->drops[why]++;
    trace_retrolink_net_drop(s->node, rlnet_drop_names[why], len, rlnet_now());
}

/* ---- send ---------------------------------------------------------------------- */

/* The station a unicast MAC names, or -1 if it is none of this network's others. */
static int64_t rlnet_station(RlNetState *s, const uint8_t *mac)
{
    if (memcmp(mac, rlnet_mac_prefix, sizeof(rlnet_mac_prefix)) || mac[4] != s->network ||
        mac[5] >= s->nodes || mac[5] == s->node) {
        return -1;
    }
    return mac[5];
}

/* Multicast and broadcast: every other station of the network; the NICs filter by MAC. */
static void rlnet_send_to_all(RlNetState *s, uint64_t ready, const uint8_t *buf,
                              uint32_t len)
{
    rl_port_send(s->port, ready, RL_NODE_BROADCAST, 0, buf, len);
}

/*
 * The NIC may hand us a frame unless we wait for the notice of the last one (without
 * the fabric none comes: rlnet_receive drops and counts what the NIC sends then).
 */
static bool rlnet_can_receive(NetClientState *nc)
{
    RlNetState *s = DO_UPCAST(RlNetState, nc, nc);

    return !s->tx_waiting || !rl_port_is_up(s->port);
}

/*
 * The NIC sent a frame (vCPU thread, during the access that sent it, or at the notice
 * that let QEMU's net layer hand over the frame it held). 0: not now, QEMU holds it.
 */
static ssize_t rlnet_receive(NetClientState *nc, const uint8_t *buf, size_t size)
{
    RlNetState *s = DO_UPCAST(RlNetState, nc, nc);
    uint64_t now = rlnet_now();
    uint8_t padded[RLNET_MIN_FRAME];
    int64_t dst = RL_NODE_BROADCAST;

    if (s->tx_waiting && rl_port_is_up(s->port)) {
        return 0;
    }

    if (size < RLNET_HDR_LEN) {
        rlnet_drop(s, RLNET_DROP_TX_RUNT, size);
        return size;
    }
    if (size > RL_MAX_PAYLOAD) {
        rlnet_drop(s, RLNET_DROP_TX_OVERSIZE, MIN(size, UINT32_MAX));
        return size;
    }
    if (!(buf[0] & 1)) {
        dst = rlnet_station(s, buf);
        if (dst < 0) {
            rlnet_drop(s, RLNET_DROP_TX_UNKNOWN_DEST, size);
            return size;
        }
    }
    if (!rl_port_is_up(s->port)) {
        rlnet_drop(s, RLNET_DROP_TX_NO_FABRIC, size);
        return size;
    }
    /* the NIC fetches the descriptor, then reads the frame across its bus */
    uint64_t ready = rl_server_run(&s->bus, now + s->tx_latency,
                                   rl_bytes_ns(size, s->dma_rate));
    /* the MAC pads a short frame to the least the wire carries */
    const uint8_t *wire = buf;
    uint32_t len = size;
    if (len < RLNET_MIN_FRAME) {
        memcpy(padded, buf, len);
        memset(padded + len, 0, RLNET_MIN_FRAME - len);
        wire = padded;
        len = RLNET_MIN_FRAME;
    }
    if (dst == RL_NODE_BROADCAST) {
        rlnet_send_to_all(s, ready, wire, len);
    } else {
        rl_port_send(s->port, ready, dst, 0, wire, len);
    }
    s->tx_frames++;
    s->tx_bytes += size;
    s->tx_waiting = s->defer;
    trace_retrolink_net_tx(s->node, dst, size, now, ready);
    return size;
}

/* ---- receive ------------------------------------------------------------------- */

static void rlnet_deliver(RlNetState *s, RlNetFrame *f)
{
    if (s->nc.link_down) {
        rlnet_drop(s, RLNET_DROP_RX_NO_LINK, f->len);
        return;
    }
    /* never queued: a frame the NIC cannot take now is lost, as on hardware */
    if (!s->nc.peer || !qemu_can_send_packet(&s->nc)) {
        rlnet_drop(s, RLNET_DROP_RX_NOT_READY, f->len);
        return;
    }
    ssize_t ret = qemu_send_packet(&s->nc, f->data, f->len);
    if (ret <= 0) {
        /* 0: QEMU queued it for the NIC; take it back */
        qemu_purge_queued_packets(&s->nc);
        rlnet_drop(s, RLNET_DROP_RX_REFUSED, f->len);
        return;
    }
    s->rx_frames++;
    s->rx_bytes += f->len;
    trace_retrolink_net_rx(s->node, f->src, f->len, rlnet_now());
}

/* ---- the link ---------------------------------------------------------------- */

static const VMStateDescription vmstate_rlnet;

/* As QMP's set_link does: both ends, and the NIC shows it to the guest. */
static void rlnet_set_link(RlNetState *s, bool up)
{
    NetClientState *peer = s->nc.peer;

    s->link_up = up;
    s->nc.link_down = !up;
    if (peer) {
        peer->link_down = !up;
        if (peer->info->link_status_changed) {
            peer->info->link_status_changed(peer);
        }
    }
    trace_retrolink_net_link(s->node, up, rlnet_now());
}

/*
 * After every change of the memory map (the bus master bit toggles a region of the
 * NIC's DMA address space): in the vCPU thread, during the config write that did it.
 */
static void rlnet_memory_commit(MemoryListener *listener)
{
    RlNetState *s = container_of(listener, RlNetState, listener);

    /*
     * While an incoming migration loads, the NIC's config space changes under us, and
     * then our section (after the NIC's: rlnet_machine_done) says what the link is.
     */
    if (!s->pci || runstate_check(RUN_STATE_INMIGRATE)) {
        return;
    }
    if (!s->nc.peer) {
        /* the NIC was unplugged (net.c cleared our peer): nothing left to follow */
        s->pci = NULL;
        s->master = false;
        s->link_up = true;
        s->nc.link_down = false;
        return;
    }
    bool master = pci_get_word(s->pci->config + PCI_COMMAND) & PCI_COMMAND_MASTER;

    if (master == s->master) {
        return;
    }
    s->master = master;
    s->link_gen++;
    if (master) {
        s->link_up_at = rlnet_add(rlnet_now(), s->link_up_ns);
        rl_sched_add(&s->sched, s->link_up_at, RL_EV_CLASS_INTERNAL, 0, RLNET_EV_LINK_UP, 0,
                     s->link_gen, NULL);
    } else {
        s->link_up_at = RL_TIME_NEVER;
        if (s->link_up) {
            rlnet_set_link(s, false);
        }
    }
}

/*
 * The device whose netdev property names us. Not the NIC's opaque: QEMU's NIC models
 * pass what they like there (e1000 its device; pcnet its PCNetState, no QOM object).
 */
typedef struct RlNetFind {
    const char *netdev;
    PCIDevice *pci;
} RlNetFind;

static int rlnet_find_nic(Object *obj, void *opaque)
{
    RlNetFind *find = opaque;

    if (!object_dynamic_cast(obj, TYPE_DEVICE) || !object_property_find(obj, "netdev")) {
        return 0;
    }
    g_autofree char *netdev = object_property_get_str(obj, "netdev", NULL);
    if (!netdev || strcmp(netdev, find->netdev)) {
        return 0;
    }
    find->pci = (PCIDevice *)object_dynamic_cast(obj, TYPE_PCI_DEVICE);
    return 1;
}

/*
 * Every device exists now: if the NIC is a PCI device, its link is down until its
 * driver has started it. A NIC that shows its link to the guest (e1000, pcnet:
 * link_status_changed) tells its driver;
 * one that does not (e100, tulip) has its frames discarded by QEMU's net layer until
 * then, as a PHY still negotiating would: either way it sends nothing before, which is
 * what lets the node promise link-up-ns and boot with long grants.
 */
static void rlnet_machine_done(Notifier *n, void *data)
{
    RlNetState *s = container_of(n, RlNetState, machine_done);
    NetClientState *peer = s->nc.peer;

    /*
     * Registered now, after every device, so that the NIC's state is saved and loaded
     * before ours and our post_load sees its bus master bit. A network is joined once
     * per QEMU (rl_port_attach), so its number names the netdev's section.
     */
    vmstate_register_with_alias_id(NULL, s->network, &vmstate_rlnet, s, -1, 0,
                                   &error_fatal);
    s->vmstate_registered = true;

    if (!peer || peer->info->type != NET_CLIENT_DRIVER_NIC || s->link_up_ns == 0) {
        return;
    }
    RlNetFind find = { .netdev = s->nc.name };
    object_child_foreach_recursive(qdev_get_machine(), rlnet_find_nic, &find);
    if (!find.pci) {
        return;
    }
    s->pci = find.pci;
    s->master = false;
    s->link_up_at = RL_TIME_NEVER;
    rlnet_set_link(s, false);
    /*
     * On the system's address space, not on the NIC's DMA one: that goes when the NIC
     * is unplugged and must have no listener left then. commit is called after a change
     * of any address space.
     */
    s->listener = (MemoryListener) { .name = "retrolink-net", .commit = rlnet_memory_commit };
    memory_listener_register(&s->listener, &address_space_memory);
    s->listening = true;
    rlnet_memory_commit(&s->listener);
}

static void rlnet_event(void *opaque, RlEvent *ev)
{
    RlNetState *s = opaque;
    RlNetFrame *f = ev->ptr;

    switch (ev->kind) {
    case RLNET_EV_ARRIVE: {
        /* the NIC fetches a descriptor, then writes the frame across its bus */
        uint64_t done = rl_server_run(&s->bus, rlnet_add(ev->time, s->rx_latency),
                                      rl_bytes_ns(f->len, s->dma_rate));
        trace_retrolink_net_arrive(s->node, f->src, f->len, ev->time, done);
        rl_sched_add(&s->sched, done, RL_EV_CLASS_INTERNAL, 0, RLNET_EV_DELIVER, 0, 0, f);
        return;
    }
    case RLNET_EV_DELIVER:
        rlnet_deliver(s, f);
        break;
    case RLNET_EV_LINK_UP:
        if (ev->gen == s->link_gen && s->master && !s->link_up) {
            rlnet_set_link(s, true);
        }
        break;
    case RLNET_EV_NOTICE: {
        /* the NIC's next frame, if it has one, goes now (rlnet_receive) */
        uint64_t sent = s->tx_frames;
        s->tx_waiting = false;
        qemu_flush_queued_packets(&s->nc);
        s->tx_deferred += s->tx_frames != sent;
        break;
    }
    }
    g_free(f);
}

/* ---- migration ------------------------------------------------------------------ */

/*
 * Saved: the event queue, the bus, the link (master, link_up, link_up_at, link_gen),
 * the node count and the counters. Not saved: a frame the fabric is delivering or one
 * in DMA into the NIC (an event with ptr): a snapshot is taken at a barrier where
 * nothing is on the network, and a netdev holding one refuses it, naming each. The
 * fabric connection is the link port's. docs/boards/ethernet.md, "Snapshots".
 */

/* The only event without a frame is the link coming up. */
static bool rlnet_event_check(void *opaque, const RlEvent *ev, Error **errp)
{
    if (ev->kind != RLNET_EV_LINK_UP || ev->cls != RL_EV_CLASS_INTERNAL) {
        error_setg(errp, "class %u: not the link coming up, the only event a snapshot holds",
                   ev->cls);
        return false;
    }
    return true;
}

static int rlnet_pre_save(void *opaque)
{
    RlNetState *s = opaque;
    g_autoptr(GString) what = g_string_new(NULL);
    uint32_t n = 0;

    for (size_t i = 0; i < rl_sched_count(&s->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->sched, i);
        RlNetFrame *f = ev->ptr;
        if (!f || n++ >= 8) {
            continue;           /* beyond 8: counted, not listed */
        }
        g_string_append_printf(what, "%sa frame of %u bytes from node %u %s %" PRIu64 " ns",
                               n > 1 ? "; " : "", f->len, f->src,
                               ev->kind == RLNET_EV_ARRIVE ? "arriving at"
                                                           : "in DMA into the NIC until",
                               ev->time);
    }
    if (n > 8) {
        g_string_append_printf(what, "; and %u more", n - 8);
    }
    if (s->tx_waiting) {
        g_string_append_printf(what, "%sa frame sent, its notice from the hub to come",
                               n++ ? "; " : "");
    }
    if (n) {
        error_report("retrolink netdev %s (node %u): cannot save with frames in flight: %s",
                     s->nc.name, s->node, what->str);
        return -EINVAL;
    }
    return 0;
}

static bool rlnet_drop_all(void *opaque, RlEvent *ev)
{
    g_free(ev->ptr);
    return false;
}

/* The stream replaces the queue: drop what it holds now. */
static int rlnet_pre_load(void *opaque)
{
    RlNetState *s = opaque;

    rl_sched_filter(&s->sched, rlnet_drop_all, s);
    s->tx_waiting = false;      /* a snapshot has none (rlnet_pre_save) */
    return 0;
}

static int rlnet_post_load(void *opaque, int version_id)
{
    RlNetState *s = opaque;
    NetClientState *peer = s->nc.peer;

    if (s->nodes > RL_MAX_NODES) {
        error_report("retrolink netdev %s (node %u): the stream's nodes %u is more than %d",
                     s->nc.name, s->node, s->nodes, RL_MAX_NODES);
        return -EINVAL;
    }
    if (!s->pci) {
        /* no PCI NIC to follow: the link is always up */
        if (s->master || !s->link_up) {
            error_report("retrolink netdev %s (node %u): the stream's link follows a bus "
                         "master (master %d, link_up %d), but this netdev's NIC has none "
                         "to follow", s->nc.name, s->node, s->master, s->link_up);
            return -EINVAL;
        }
    } else {
        /* the NIC's config space was loaded before us (rlnet_machine_done) */
        bool master = pci_get_word(s->pci->config + PCI_COMMAND) & PCI_COMMAND_MASTER;
        if (master != s->master || (!s->master && (s->link_up ||
                                                   s->link_up_at != RL_TIME_NEVER))) {
            error_report("retrolink netdev %s (node %u): the stream's link (master %d, "
                         "link_up %d, link_up_at %" PRIu64 ") does not match the NIC's bus "
                         "master bit, %d", s->nc.name, s->node, s->master, s->link_up,
                         s->link_up_at, master);
            return -EINVAL;
        }
    }
    /* as rlnet_set_link, without telling the NIC: its registers came in its own section */
    s->nc.link_down = !s->link_up;
    if (peer) {
        peer->link_down = !s->link_up;
    }
    return 0;
}

static const VMStateDescription vmstate_rlnet = {
    .name = "retrolink-net",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = rlnet_pre_save,
    .pre_load = rlnet_pre_load,
    .post_load = rlnet_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(nodes, RlNetState),
        VMSTATE_RL_SCHED(sched, RlNetState),
        VMSTATE_RL_SERVER(bus, RlNetState),
        VMSTATE_BOOL(master, RlNetState),
        VMSTATE_BOOL(link_up, RlNetState),
        VMSTATE_UINT64(link_up_at, RlNetState),
        VMSTATE_UINT32(link_gen, RlNetState),
        VMSTATE_UINT64(tx_frames, RlNetState),
        VMSTATE_UINT64(tx_bytes, RlNetState),
        VMSTATE_UINT64(rx_frames, RlNetState),
        VMSTATE_UINT64(rx_bytes, RlNetState),
        VMSTATE_UINT64_ARRAY(drops, RlNetState, RLNET_DROP__MAX),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- the link port ------------------------------------------------------------- */

/* A frame will arrive at 'at' (called at a sync point: only schedule it). */
static void rlnet_link_frame(void *opaque, uint64_t at, uint64_t seq, uint32_t src,
                             uint32_t flags, const uint8_t *data, uint32_t len)
{
    RlNetState *s = opaque;

    if (len < RLNET_HDR_LEN) {
        rlnet_drop(s, RLNET_DROP_RX_RUNT, len);
        return;
    }
    /* a frame from another kind of station may be short: the MAC pads on the wire */
    uint32_t keep = MAX(len, RLNET_MIN_FRAME);
    RlNetFrame *f = g_malloc0(sizeof(*f) + keep);
    f->src = src;
    f->len = keep;
    memcpy(f->data, data, len);
    rl_sched_add(&s->sched, at, RL_EV_CLASS_FRAME, seq, RLNET_EV_ARRIVE, 0, 0, f);
}

/* The network took our last frame (called at a sync point: only schedule it). */
static void rlnet_link_notice(void *opaque, uint64_t at, uint64_t seq)
{
    RlNetState *s = opaque;

    rl_sched_add(&s->sched, at, RL_EV_CLASS_FRAME, seq, RLNET_EV_NOTICE, 0, 0, NULL);
}

/*
 * A peer leaving is not something a node promises (docs/fabric.md): when it is seen
 * depends on host timing, so the NIC's link state does not follow it.
 */
static void rlnet_link_status(void *opaque, uint64_t at, uint32_t peer, bool up)
{
    RlNetState *s = opaque;

    trace_retrolink_net_peer(s->node, peer, up, at);
}

/*
 * The guest may make the NIC send at guest_ns at the earliest (any instruction while
 * it runs; its next timer when it is halted: every frame the fabric has announced is
 * such a timer, in our event queue), and that frame is ready no sooner than the least
 * send cost later. No NIC sends of its own accord. Without a link the NIC cannot send:
 * not before the link comes up, or, if its driver has not started it, not before
 * link-up-ns after the guest does.
 */
static uint64_t rlnet_promise(void *opaque, uint64_t now, uint64_t guest_ns)
{
    RlNetState *s = opaque;
    uint64_t send = guest_ns;

    if (guest_ns == RL_TIME_NEVER) {
        return RL_TIME_NEVER;
    }
    if (s->pci && !s->link_up) {
        send = s->master ? MAX(guest_ns, s->link_up_at) : rlnet_add(guest_ns, s->link_up_ns);
    }
    return MAX(rlnet_add(send, s->tx_least), now);
}

/* The NIC sends during the access that sends (rlnet_receive), tx_least after it at least */
static uint64_t rlnet_lead(void *opaque)
{
    RlNetState *s = opaque;

    return s->tx_least;
}

/* The cluster started: node ids are 0 .. nodes - 1 (MACs name them, docs/boards/ethernet.md). */
static void rlnet_link_welcome(void *opaque, uint32_t nodes)
{
    RlNetState *s = opaque;

    s->nodes = nodes;
    s->defer = rl_port_notices(s->port);
}

static const RlPortOps rlnet_link_ops = {
    .welcome = rlnet_link_welcome,
    .frame = rlnet_link_frame,
    .notice = rlnet_link_notice,
    .link = rlnet_link_status,
    .promise = rlnet_promise,
    .lead = rlnet_lead,
};

/* ---- counters, cleanup --------------------------------------------------------- */

static void rlnet_report(RlNetState *s)
{
    g_autoptr(GString) line = g_string_new(NULL);

    if (s->reported) {
        return;
    }
    s->reported = true;
    g_string_printf(line, "retrolink-net %s (node %u): tx_frames=%" PRIu64 " tx_bytes=%"
                    PRIu64 " rx_frames=%" PRIu64 " rx_bytes=%" PRIu64 " tx_deferred=%" PRIu64,
                    s->nc.name, s->node, s->tx_frames, s->tx_bytes, s->rx_frames,
                    s->rx_bytes, s->tx_deferred);
    for (int i = 0; i < RLNET_DROP__MAX; i++) {
        g_string_append_printf(line, " drop_%s=%" PRIu64, rlnet_drop_names[i], s->drops[i]);
    }
    /* frames sent before the node's promise or delivered after their arrival: 0 */
    g_string_append_printf(line, " causality_violations=%" PRIu64,
                           s->port ? rl_port_causality_violations(s->port) : 0);
    /* stderr is the node's QEMU log, where tests and people look for it */
    fprintf(stderr, "%s\n", line->str);
}

static void rlnet_exit_notify(Notifier *n, void *data)
{
    rlnet_report(container_of(n, RlNetState, exit_notifier));
}

static void rlnet_cleanup(NetClientState *nc)
{
    RlNetState *s = DO_UPCAST(RlNetState, nc, nc);

    rlnet_report(s);
    if (s->listening) {
        memory_listener_unregister(&s->listener);
        s->listening = false;
        s->pci = NULL;
    }
    if (s->machine_done.notify) {
        qemu_remove_machine_init_done_notifier(&s->machine_done);
        s->machine_done.notify = NULL;
    }
    if (s->exit_notifier.notify) {
        qemu_remove_exit_notifier(&s->exit_notifier);
        s->exit_notifier.notify = NULL;
    }
    rl_port_close(s->port);
    s->port = NULL;
    if (s->vmstate_registered) {
        vmstate_unregister(NULL, &vmstate_rlnet, s);
        s->vmstate_registered = false;
    }
    if (s->sched.heap) {
        rl_sched_filter(&s->sched, rlnet_drop_all, s);
        rl_sched_destroy(&s->sched);
    }
}

static NetClientInfo net_retrolink_info = {
    .type = NET_CLIENT_DRIVER_RETROLINK,
    .size = sizeof(RlNetState),
    .receive = rlnet_receive,
    .can_receive = rlnet_can_receive,
    .cleanup = rlnet_cleanup,
};

int net_init_retrolink(const Netdev *netdev, const char *name, NetClientState *peer,
                       Error **errp)
{
    ERRP_GUARD();
    const NetdevRetrolinkOptions *o = &netdev->u.retrolink;
    uint64_t tx_latency = o->has_tx_latency_ns ? o->tx_latency_ns : 1000;
    uint64_t rx_latency = o->has_rx_latency_ns ? o->rx_latency_ns : 1000;
    uint64_t dma_rate = o->has_dma_rate ? o->dma_rate : 133000000;
    uint64_t link_up_ns = o->has_link_up_ns ? o->link_up_ns : 1000000000;

    assert(netdev->type == NET_CLIENT_DRIVER_RETROLINK);
    if (tx_latency > RLNET_MAX_NS || rx_latency > RLNET_MAX_NS || link_up_ns > RLNET_MAX_NS) {
        error_setg(errp, "retrolink netdev: tx-latency-ns, rx-latency-ns and link-up-ns "
                   "must be at most %llu (one hour)", RLNET_MAX_NS);
        return -1;
    }
    if (dma_rate == 0 || dma_rate > 1000000000000ULL) {
        error_setg(errp, "retrolink netdev: dma-rate must be 1 to 10^12 bytes/s");
        return -1;
    }
    if (o->node >= RL_MAX_NODES) {
        error_setg(errp, "retrolink netdev: node must be below %d", RL_MAX_NODES);
        return -1;
    }

    NetClientState *nc = qemu_new_net_client(&net_retrolink_info, peer, "retrolink", name);
    RlNetState *s = DO_UPCAST(RlNetState, nc, nc);
    s->node = o->node;
    s->network = o->has_network ? o->network : 0;
    s->tx_latency = tx_latency;
    s->rx_latency = rx_latency;
    s->dma_rate = dma_rate;
    s->link_up_ns = link_up_ns;
    s->link_up = true;
    s->tx_least = tx_latency + rl_bytes_ns(RLNET_HDR_LEN, dma_rate);
    qemu_set_info_str(nc, "fabric=%s,node=%u,network=%u", o->fabric, s->node, s->network);
    rl_sched_init(&s->sched, rlnet_event, s);
    char *owner = g_strdup_printf("retrolink netdev %s (node %u)", name, s->node);
    rl_sched_set_check(&s->sched, owner, rlnet_event_check);
    g_free(owner);

    char link_name[RL_NAME_LEN];
    snprintf(link_name, sizeof(link_name), "eth-node%u", s->node);
    /*
     * least delay from an arrival to a frame sent because of it: a notice's (on a hub:
     * the held frame goes at once), not known to be none until welcome
     */
    s->port = rl_port_attach(o->fabric, s->node, s->network, RL_PROTO_ETHERNET, link_name,
                             s->tx_least, &rlnet_link_ops, s, errp);
    if (!s->port) {
        error_prepend(errp, "retrolink netdev: ");
        goto fail;
    }
    s->exit_notifier.notify = rlnet_exit_notify;
    qemu_add_exit_notifier(&s->exit_notifier);
    s->machine_done.notify = rlnet_machine_done;
    qemu_add_machine_init_done_notifier(&s->machine_done);
    return 0;

fail:
    s->reported = true;         /* nothing to report: say only what went wrong */
    qemu_del_net_client(nc);    /* cleanup closes the link and frees the queue */
    return -1;
}
