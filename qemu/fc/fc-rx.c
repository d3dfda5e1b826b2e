/*
 * PUMA-III adapter: receiving (docs/boards/fc.md, "Timing").
 *
 * A frame whose last byte reaches the adapter passes its receive stage
 * ('frame-setup-ns' + its payload at 'adapter-rate'), then takes the next slot of
 * its channel's ring (by the frame's TYPE: FC_TYPE_IP to channel 0, FC_TYPE_USER
 * to channel 1) and is written there by the SBus DMA engine ('dma-rate', the 32-byte
 * slot header and the payload): the payload first, then the header, its
 * FC_RXS_VALID word last. A frame that finds its channel off, or no slot the
 * adapter owns, is dropped and counted (FC_CH_RX_DROPS).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

#include "fc.h"
#include "hw/retrolink/trace.h"

static void fc_rx_drop(FcState *s, FcChannel *ch, FcFrame *f, const char *why)
{
    trace_retrolink_fc_rx_drop(s->rl->node, f->peer, f->len, why, fc_now());
    if (ch) {
        ch->rx_drops++;
    }
    g_free(f);
}

void fc_rx_arrive(FcState *s, FcFrame *f)
{
    if (!fc_ready(s)) {
        fc_rx_drop(s, NULL, f, "the adapter is not on the link");
        return;
    }
    uint64_t end = rl_server_run(&s->rx_adapter, fc_now(), fc_adapter_ns(s, f->len));
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, FC_EV_RX_ADAPTED, 0, 0, f);
}

/* The bus addresses of ring slot j's bytes [0, FC_RX_PAYLOAD + len), writable; or false. */
static bool fc_rx_map(FcState *s, FcChannel *ch, uint32_t j, uint32_t len, uint64_t *pages)
{
    uint32_t addr = ch->rx_ring + j * FC_RX_SLOT_SIZE;

    return rl_dma_window_map(&ch->dvma, addr, FC_RX_PAYLOAD + len, true, RL_DMA_ANY_TAG, pages);
}

void fc_rx_adapted(FcState *s, FcFrame *f)
{
    uint32_t c = f->wire.type == FC_TYPE_IP ? FC_CH_IP : FC_CH_USER;
    FcChannel *ch = &s->ch[c];

    if (!fc_ready(s) || !(ch->ctrl & FC_CH_ENABLE)) {
        fc_rx_drop(s, ch, f, "channel off");
        return;
    }
    if (ch->rx_free == 0) {
        fc_rx_drop(s, ch, f, "no free slot");
        return;
    }
    if (!fc_rx_map(s, ch, ch->rx_next, f->len, f->pages)) {
        rl_board_guest_error(s->rl, "channel %u: ring slot %u is not mapped writable in the "
                             "DVMA table: frame dropped", c, ch->rx_next);
        fc_rx_drop(s, ch, f, "slot not mapped");
        return;
    }
    f->slot = ch->rx_next;
    ch->rx_next = (ch->rx_next + 1) % ch->rx_slots;
    ch->rx_free--;
    uint64_t end = rl_server_run(&s->dma, fc_now(),
                                 rl_bytes_ns(FC_RX_PAYLOAD + f->len, s->dma_rate));
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, FC_EV_RX_DMA_DONE, c, ch->rx_gen, f);
}

void fc_rx_dma_done(FcState *s, uint32_t c, FcFrame *f)
{
    FcChannel *ch = &s->ch[c];
    uint32_t addr = ch->rx_ring + f->slot * FC_RX_SLOT_SIZE;
    const uint64_t *pages = f->pages;      /* translated when the DMA started */
    uint8_t hdr[FC_RX_PAYLOAD] = { 0 };

    rl_dma_window_rw(&ch->dvma, pages, addr, FC_RX_PAYLOAD, f->data, f->len, true);
    rl_board_stl(s->rl, hdr + offsetof(struct fc_rx_slot, len), f->len);
    rl_board_stl(s->rl, hdr + offsetof(struct fc_rx_slot, src), f->peer);
    rl_board_stl(s->rl, hdr + offsetof(struct fc_rx_slot, tag), le32_to_cpu(f->wire.tag));
    rl_board_stl(s->rl, hdr + offsetof(struct fc_rx_slot, offset), le32_to_cpu(f->wire.offset));
    rl_board_stl(s->rl, hdr + offsetof(struct fc_rx_slot, msg_len), le32_to_cpu(f->wire.msg_len));
    rl_dma_window_rw(&ch->dvma, pages, addr, 4, hdr + 4, FC_RX_PAYLOAD - 4, true);
    /* the flags word last: a reader that sees FC_RXS_VALID sees the whole frame */
    rl_board_stl(s->rl, hdr, FC_RXS_VALID | (uint32_t)f->wire.type << 8 |
                 (uint32_t)f->wire.f_ctl << 16);
    rl_dma_window_rw(&ch->dvma, pages, addr, 0, hdr, 4, true);
    trace_retrolink_fc_rx(s->rl->node, c, f->slot, f->peer, f->len, fc_now());
    ch->rx_host++;
    ch->rx_frames++;
    g_free(f);
    rl_board_raise(s->rl, FC_IRQ_RX(c));
}

void fc_rx_release(FcState *s, uint32_t c, uint32_t n)
{
    FcChannel *ch = &s->ch[c];

    if (!(ch->ctrl & FC_CH_ENABLE) || n > ch->rx_host) {
        rl_board_guest_error(s->rl, "channel %u: RX_RELEASE %u refused: the host holds %u "
                             "slots%s", c, n, ch->rx_host,
                             ch->ctrl & FC_CH_ENABLE ? "" : " (the channel is off)");
        return;
    }
    ch->rx_host -= n;
    ch->rx_free += n;
}

static bool fc_keep_not_rx(void *opaque, RlEvent *ev)
{
    uint32_t c = *(uint32_t *)opaque;

    if (ev->kind == FC_EV_RX_DMA_DONE && ev->arg == c) {
        g_free(ev->ptr);
        return false;
    }
    return true;
}

/* Stop channel c's writes into its ring at once; the ring starts over when enabled. */
void fc_rx_abort(FcState *s, uint32_t c)
{
    FcChannel *ch = &s->ch[c];

    rl_sched_filter(&s->rl->sched, fc_keep_not_rx, &c);
    ch->rx_gen++;
    ch->rx_next = 0;
    ch->rx_free = 0;
    ch->rx_host = 0;
}
