/*
 * PUMA-III Fibre Channel adapter (an SBus card: retrolink-fc-sbus on the SPARCstation
 * nodes, retrolink-fc the PCI card on the x86 ones) on a retrolink FC network: the fabric's `switch` or `p2p` topology
 * models the link (1.0625 Gbaud, 8b/10b, SOF/CRC/EOF and idles, credits).
 * Register map: retrolink/regs/fc-regs.h; frames: retrolink/proto/fc.h;
 * behaviour and timing: docs/boards/fc.md. The adapter is modelled from its
 * components, each a timed resource (fc.h): the SBus for the CPU's programmed
 * I/O (rl-bus), the SBus DMA engine, the transmit buffer, the adapter's transmit
 * and receive stages. Everything runs as events at exact virtual times (rl-sched).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "migration/vmstate.h"

#include "fc.h"
#include "hw/retrolink/trace.h"

/* ---- state ------------------------------------------------------------------- */

bool fc_peer_up(FcState *s, uint32_t peer)
{
    return peer < 32 ? (s->peers_up >> peer) & 1 : s->rl->port && rl_port_is_up(s->rl->port);
}

/* Enabled and logged in to the fabric: takes sends and frames, channels may be enabled. */
bool fc_ready(FcState *s)
{
    return (s->ctrl & FC_CTRL_ENABLE) && fc_now() >= s->ready_at;
}

uint64_t fc_adapter_ns(FcState *s, uint32_t payload)
{
    return s->frame_setup_ns + rl_bytes_ns(payload, s->adapter_rate);
}

/* ---- events ------------------------------------------------------------------ */

static void fc_link_event(FcState *s, uint32_t peer, bool up)
{
    if (peer < 32) {
        s->peers_up = up ? s->peers_up | (1u << peer) : s->peers_up & ~(1u << peer);
    }
    trace_retrolink_fc_peer(s->rl->node, peer, up, fc_now());
    rl_board_raise(s->rl, FC_IRQ_LINK);
}

void fc_event(void *opaque, RlEvent *ev)
{
    FcState *s = opaque;

    switch (ev->kind) {
    case FC_EV_TX_DMA_DONE:
        if (s->ch[ev->arg].tx_active && s->ch[ev->arg].tx_gen == ev->gen) {
            fc_tx_dma_done(s, ev->arg);
        }
        break;
    case FC_EV_TX_OUT:
        if (s->ch[ev->arg].tx_gen == ev->gen) {
            fc_tx_out(s, ev->arg, ev->ptr);
        } else {
            g_free(ev->ptr);
        }
        break;
    case FC_EV_ARRIVE:
        fc_rx_arrive(s, ev->ptr);
        break;
    case FC_EV_RX_ADAPTED:
        fc_rx_adapted(s, ev->ptr);
        break;
    case FC_EV_RX_DMA_DONE:
        if (s->ch[ev->arg].rx_gen == ev->gen) {
            fc_rx_dma_done(s, ev->arg, ev->ptr);
        } else {
            g_free(ev->ptr);
        }
        break;
    case FC_EV_LINK:
        fc_link_event(s, ev->arg & ~(1u << 31), ev->arg >> 31);
        break;
    }
}

/* ---- the fabric side ----------------------------------------------------------- */

static void fc_link_frame(void *opaque, uint64_t at, uint64_t seq, uint32_t src,
                          uint32_t flags, const uint8_t *data, uint32_t len)
{
    FcState *s = opaque;
    FcWire w;

    if (len < sizeof(w)) {
        /* the fabric's (or the peer board's) fault, not this guest's */
        warn_report("retrolink-fc node %u: the fabric delivered a short frame from node %u "
                    "(%u bytes)", s->rl->node, src, len);
        return;
    }
    memcpy(&w, data, sizeof(w));
    uint32_t payload = len - sizeof(w);
    if (payload > FC_MAX_PAYLOAD || (w.type != FC_TYPE_IP && w.type != FC_TYPE_USER)) {
        warn_report("%s node %u: the fabric delivered a malformed frame from node %u "
                    "(TYPE 0x%x, %u payload bytes)", s->rl->info->name, s->rl->node, src,
                    w.type, payload);
        return;
    }
    trace_retrolink_fc_frame_in(s->rl->node, src, w.type, payload, at);
    FcFrame *f = g_malloc0(sizeof(FcFrame) + payload);
    f->peer = src;
    f->len = payload;
    f->wire = w;
    memcpy(f->data, data + sizeof(w), payload);
    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_FRAME, seq, FC_EV_ARRIVE, 0, 0, f);
}

static void fc_link_status(void *opaque, uint64_t at, uint32_t peer, bool up)
{
    FcState *s = opaque;

    rl_sched_add(&s->rl->sched, at, RL_EV_CLASS_LINK, peer, FC_EV_LINK,
                 (peer & 0x7fffffff) | ((uint32_t)up << 31), 0, NULL);
}

/*
 * The least time from the guest's action to a frame it sends: one 4-byte PIO store
 * (TX_GO or PIO_SEND, from whose end a send is timed) and the adapter stage of a
 * frame at least. An adapter not yet on the link adds its start (fc_promise).
 */
static uint64_t fc_lead(void *opaque)
{
    FcState *s = opaque;

    return rl_bytes_ns(4, s->pio_rate) + s->frame_setup_ns;
}

/*
 * The earliest time a frame the adapter already has leaves it (RL_TIME_NEVER: none):
 *  - a frame in the adapter's transmit stage leaves at its event's time;
 *  - a DMA send's next frame, whose DMA ends at its event, passes the adapter after
 *    (and each later frame of the send after the one before).
 * Its queue of events is all it has: rl-board publishes this at each change of it.
 */
static uint64_t fc_pending(void *opaque, uint64_t now)
{
    FcState *s = opaque;
    uint64_t p = RL_TIME_NEVER;

    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        switch (ev->kind) {
        case FC_EV_TX_OUT:
            p = MIN(p, ev->time);
            break;
        case FC_EV_TX_DMA_DONE:
            p = MIN(p, ev->time + s->frame_setup_ns);
            break;
        }
    }
    return p == RL_TIME_NEVER ? p : MAX(p, now);
}

/*
 * The earliest time a frame could leave the adapter if none arrived (the adapter
 * never answers a frame by itself: only the guest does): one it already has
 * (fc_pending), or one the guest, acting at guest_ns, makes it send (fc_lead).
 */
static uint64_t fc_promise(void *opaque, uint64_t now, uint64_t guest_ns)
{
    FcState *s = opaque;
    uint64_t p = RL_TIME_NEVER;

    if (guest_ns != RL_TIME_NEVER) {
        /* an adapter not yet on the link sends nothing before its start is over: so
         * the nodes boot (no driver has enabled it) with long grants */
        p = rl_board_guest_go(s->rl, s->ctrl & FC_CTRL_ENABLE, s->ready_at, guest_ns) +
            fc_lead(s);
    }
    return MAX(MIN(p, fc_pending(s, now)), now);
}

/* The cluster started: every other node of it is a peer, up. */
static void fc_link_welcome(void *opaque, uint32_t nodes)
{
    FcState *s = opaque;

    s->rl->nodes = nodes;
    for (uint32_t p = 0; p < MIN(s->rl->nodes, 32u); p++) {
        if (p != s->rl->node) {
            s->peers_up |= 1u << p;
        }
    }
}

const RlPortOps fc_link_ops = {
    .welcome = fc_link_welcome,
    .frame = fc_link_frame,
    .link = fc_link_status,
    .promise = fc_promise,
    .lead = fc_lead,
    .pending = fc_pending,
};

/*
 * Least delay from a frame arriving to a frame this port sends because of it: the
 * receive stage of an empty frame (the first the guest can see of it: a drop is
 * counted there), the guest's 4-byte PIO store that sends, and the transmit stage of
 * an empty frame.
 */
uint64_t fc_reaction_ns(void *opaque)
{
    FcState *s = opaque;

    return 2 * s->frame_setup_ns + rl_bytes_ns(4, s->pio_rate);
}

/* ---- reset ---------------------------------------------------------------------- */

static bool fc_keep_link_events(void *opaque, RlEvent *ev)
{
    if (ev->kind == FC_EV_LINK || ev->kind == FC_EV_ARRIVE) {
        return true;
    }
    g_free(ev->ptr);
    return false;
}

static bool fc_drop_event(void *opaque, RlEvent *ev)
{
    g_free(ev->ptr);
    return false;
}

/* Board reset: drop everything in flight but what the link is delivering. */
void fc_board_reset(FcState *s)
{
    for (uint32_t c = 0; c < FC_CHANNELS; c++) {
        fc_tx_abort(s, c);
        fc_rx_abort(s, c);
        FcChannel *ch = &s->ch[c];
        uint32_t tx_gen = ch->tx_gen, rx_gen = ch->rx_gen;
        memset(ch, 0, sizeof(*ch));
        ch->tx_gen = tx_gen;
        ch->rx_gen = rx_gen;
        rl_dma_window_init(&ch->dvma, s->rl, FC_DVMA_PAGE, FC_DVMA_MAX_PAGES);
    }
    rl_sched_filter(&s->rl->sched, fc_keep_link_events, s);
    s->ctrl = s->rl->irq_status = s->rl->irq_mask = s->error = 0;
    s->ready_at = 0;
    s->dma.free_at = s->tx_adapter.free_at = s->rx_adapter.free_at = 0;
    memset(s->txq_free_at, 0, sizeof(s->txq_free_at));
    rl_board_update_irq(s->rl);
}

/* ---- migration --------------------------------------------------------------- */

/*
 * Everything the behaviour depends on is saved but what is in flight: a snapshot is
 * taken at a barrier where the adapter is idle, and one with a send, a frame or a
 * held vCPU refuses to be saved, naming them. post_load checks every index, length
 * and state that came from the stream (docs/boards/fc.md, "Snapshots").
 */
bool fc_event_check(void *opaque, const RlEvent *ev, Error **errp)
{
    uint32_t peer = ev->arg & ~(1u << 31);

    if (ev->kind != FC_EV_LINK || ev->cls != RL_EV_CLASS_LINK || ev->key != peer ||
        peer >= RL_MAX_NODES) {
        error_setg(errp, "kind %d, class %u, key %" PRIu64 ": only link events of a node "
                   "below %d are saved", ev->kind, ev->cls, ev->key, RL_MAX_NODES);
        return false;
    }
    return true;
}

int fc_pre_save(FcState *s)
{
    g_autoptr(GString) what = g_string_new(NULL);

    for (uint32_t c = 0; c < FC_CHANNELS; c++) {
        if (s->ch[c].tx_active) {
            g_string_append_printf(what, "; channel %u's DMA send (%u of %u bytes read)", c,
                                   s->ch[c].tx_off, s->ch[c].cur_len);
        }
    }
    for (size_t i = 0; i < rl_sched_count(&s->rl->sched); i++) {
        RlEvent *ev = rl_sched_nth(&s->rl->sched, i);
        if (ev->kind != FC_EV_LINK) {
            FcFrame *f = ev->ptr;
            g_string_append_printf(what, "; a frame %s node %u in the adapter until %"
                                   PRIu64 " ns", ev->kind == FC_EV_TX_OUT ? "to" : "from",
                                   f ? f->peer : 0, ev->time);
        }
    }
    if (rl_bus_stalling(&s->bus)) {
        g_string_append_printf(what, "; the vCPU held by a PIO access until %" PRIu64 " ns",
                               s->bus.free_at);
    }
    if (what->len) {
        error_report("%s node %u: cannot save the adapter with work in flight%s",
                     s->rl->info->name, s->rl->node, what->str);
        return -EINVAL;
    }
    return 0;
}

static int fc_pre_load(void *opaque)
{
    FcState *s = opaque;

    for (uint32_t c = 0; c < FC_CHANNELS; c++) {
        fc_tx_abort(s, c);
    }
    rl_sched_filter(&s->rl->sched, fc_drop_event, s);
    return 0;
}

static int fc_post_load(void *opaque, int version_id)
{
    FcState *s = opaque;

    if (s->ctrl & ~FC_CTRL_ENABLE) {
        return rl_board_refuse(s->rl, "ctrl 0x%x has bits other than ENABLE", s->ctrl);
    }
    if (s->error > FC_ERR_CONFIG) {
        return rl_board_refuse(s->rl, "error %u is not an FC_ERR_*", s->error);
    }
    for (uint32_t c = 0; c < FC_CHANNELS; c++) {
        FcChannel *ch = &s->ch[c];
        if (ch->ctrl & ~FC_CH_ENABLE) {
            return rl_board_refuse(s->rl, "channel %u ctrl 0x%x has bits other than ENABLE", c,
                             ch->ctrl);
        }
        if (ch->tx_status > FC_ERR_CONFIG) {
            return rl_board_refuse(s->rl, "channel %u tx_status %u is not an FC_ERR_*", c,
                             ch->tx_status);
        }
        if (ch->ctrl & FC_CH_ENABLE) {
            /* what an enabled channel was checked for, and its ring's indexes */
            if (ch->dvma.pages == 0 || ch->dvma.pages > FC_DVMA_MAX_PAGES ||
                ch->rx_slots == 0 || ch->rx_slots > FC_RX_MAX_SLOTS) {
                return rl_board_refuse(s->rl, "channel %u is enabled with %u DVMA pages and %u ring "
                                 "slots, not 1..%d and 1..%d", c, ch->dvma.pages,
                                 ch->rx_slots, FC_DVMA_MAX_PAGES, FC_RX_MAX_SLOTS);
            }
            if (ch->rx_next >= ch->rx_slots || ch->rx_free > ch->rx_slots ||
                ch->rx_host > ch->rx_slots - ch->rx_free) {
                return rl_board_refuse(s->rl, "channel %u ring has next %u, free %u, host %u for %u "
                                 "slots", c, ch->rx_next, ch->rx_free, ch->rx_host,
                                 ch->rx_slots);
            }
        } else if (ch->rx_next || ch->rx_free || ch->rx_host) {
            return rl_board_refuse(s->rl, "channel %u is off but its ring has next %u, free %u, "
                             "host %u", c, ch->rx_next, ch->rx_free, ch->rx_host);
        }
    }
    return 0;
}

static const VMStateDescription vmstate_fc_channel = {
    .name = "retrolink-fc-channel",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(ctrl, FcChannel),
        VMSTATE_RL_DMA_WINDOW(dvma, FcChannel),
        VMSTATE_UINT32(rx_ring, FcChannel),
        VMSTATE_UINT32(rx_slots, FcChannel),
        VMSTATE_UINT32(tx_frames, FcChannel),
        VMSTATE_UINT32(rx_frames, FcChannel),
        VMSTATE_UINT32(rx_drops, FcChannel),
        VMSTATE_UINT32(errors, FcChannel),
        VMSTATE_UINT32(tx_addr, FcChannel),
        VMSTATE_UINT32(tx_len, FcChannel),
        VMSTATE_UINT32(tx_dest, FcChannel),
        VMSTATE_UINT32(tx_tag, FcChannel),
        VMSTATE_UINT32(tx_status, FcChannel),
        VMSTATE_UINT32(tx_done, FcChannel),
        VMSTATE_UINT32(pio_tag, FcChannel),
        VMSTATE_BUFFER(pio_buf, FcChannel),
        VMSTATE_UINT32(tx_seq, FcChannel),
        VMSTATE_UINT32(tx_gen, FcChannel),
        VMSTATE_UINT32(rx_next, FcChannel),
        VMSTATE_UINT32(rx_free, FcChannel),
        VMSTATE_UINT32(rx_host, FcChannel),
        VMSTATE_UINT32(rx_gen, FcChannel),
        VMSTATE_END_OF_LIST()
    },
};

const VMStateDescription vmstate_fc = {
    .name = "retrolink-fc-adapter",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = fc_pre_load,
    .post_load = fc_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(ctrl, FcState),
        VMSTATE_UINT64(ready_at, FcState),
        VMSTATE_UINT32(error, FcState),
        VMSTATE_UINT32(peers_up, FcState),
        VMSTATE_STRUCT_ARRAY(ch, FcState, FC_CHANNELS, 1, vmstate_fc_channel, FcChannel),
        VMSTATE_RL_BUS(bus, FcState),
        VMSTATE_RL_SERVER(dma, FcState),
        VMSTATE_RL_SERVER(tx_adapter, FcState),
        VMSTATE_RL_SERVER(rx_adapter, FcState),
        VMSTATE_UINT64_ARRAY(txq_free_at, FcState, FC_TXQ_MAX),
        VMSTATE_END_OF_LIST()
    },
};

/* ---- realize, reset -------------------------------------------------------- */

/*
 * Its own part of realize (rl-board.h): the properties, the two register regions (PCI
 * BARs 0 and 2; the SBus card's offsets in its slot), the SBus.
 */
bool fc_realize(void *opaque, Error **errp)
{
    FcState *s = opaque;
    Object *owner = OBJECT(s->rl->dev);
    const char *name = s->rl->info->name;

    if (!s->dma_rate || !s->pio_rate || !s->adapter_rate) {
        error_setg(errp, "%s: dma-rate, pio-rate and adapter-rate must be > 0 "
                   "(bytes per second)", name);
        return false;
    }
    if (s->dma_rate > 1000000000000ull || s->pio_rate > 1000000000000ull ||
        s->adapter_rate > 1000000000000ull) {
        error_setg(errp, "%s: rates must be at most 10^12 bytes per second", name);
        return false;
    }
    if (s->txq_frames < 1 || s->txq_frames > FC_TXQ_MAX) {
        error_setg(errp, "%s: tx-queue-frames must be 1..%d", name, FC_TXQ_MAX);
        return false;
    }
    if (s->send_setup_ns > 1000000000 || s->frame_setup_ns > 1000000000) {
        error_setg(errp, "%s: send-setup-ns and frame-setup-ns must be at most 1 s", name);
        return false;
    }
    memory_region_init_io(&s->ctrl_bar, owner, rl_board_ops(s->rl, fc_ctrl_ops), s,
                          "retrolink-fc-ctrl", FC_CTRL_PAGE_SIZE);
    s->rl->bar[0] = &s->ctrl_bar;
    memory_region_init_io(&s->chan_bar, owner, rl_board_ops(s->rl, fc_chan_ops), s,
                          "retrolink-fc-chan", FC_CHANNELS * FC_CHAN_PAGE_SIZE);
    s->rl->bar[2] = &s->chan_bar;
    rl_bus_init(&s->bus, s->pio_rate);
    for (uint32_t c = 0; c < FC_CHANNELS; c++) {
        rl_dma_window_init(&s->ch[c].dvma, s->rl, FC_DVMA_PAGE, FC_DVMA_MAX_PAGES);
    }
    return true;
}

void fc_unrealize(void *opaque)
{
    FcState *s = opaque;

    fc_board_reset(s);
    rl_sched_filter(&s->rl->sched, fc_drop_event, s);
    rl_bus_destroy(&s->bus);
}

void fc_reset(void *opaque)
{
    FcState *s = opaque;

    fc_board_reset(s);
    rl_bus_release(&s->bus);
    s->bus.free_at = 0;
}
