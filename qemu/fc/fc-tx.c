/*
 * PUMA-III adapter: sending (docs/boards/fc.md, "Timing").
 *
 * A DMA send (TX_GO) is cut into frames of up to FC_MAX_PAYLOAD bytes. Each frame
 * takes a slot of the on-board transmit buffer ('tx-queue-frames'), is read from
 * host memory by the SBus DMA engine ('dma-rate'), then passes the adapter's
 * transmit stage ('frame-setup-ns' + its payload at 'adapter-rate'), at whose end
 * it is handed to the link and its slot is free again. The DMA engine reads the
 * next frame as soon as it has read one and a slot is free, so the DMA of frame i
 * overlaps the adapter stage of frame i - 1. The first DMA starts 'send-setup-ns'
 * after TX_GO. TX_BUSY is 1 until the last frame has been read from host memory;
 * TX_DONE counts, and FC_IRQ_TXDONE says, when its last frame has left.
 *
 * A PIO send (PIO_SEND) takes its payload from the adapter's PIO buffer, which the
 * host filled by programmed I/O: it needs a transmit buffer slot, and enters the
 * adapter stage when the bus transfer of the PIO_SEND store ends.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"

#include "fc.h"
#include "hw/retrolink/trace.h"

/* The transmit buffer slot that is free first. */
static uint32_t fc_txq_first(FcState *s)
{
    uint32_t k = 0;

    for (uint32_t i = 1; i < s->txq_frames; i++) {
        if (s->txq_free_at[i] < s->txq_free_at[k]) {
            k = i;
        }
    }
    return k;
}

uint32_t fc_txq_free(FcState *s)
{
    uint64_t now = fc_now();
    uint32_t n = 0;

    for (uint32_t i = 0; i < s->txq_frames; i++) {
        n += s->txq_free_at[i] <= now;
    }
    return n;
}

static void fc_tx_refuse(FcState *s, uint32_t c, const char *what, uint32_t err)
{
    FcChannel *ch = &s->ch[c];

    rl_board_guest_error(s->rl, "channel %u: %s refused: %s", c, what,
                         err == FC_ERR_WINDOW ? "the range is not wholly in the DVMA table" :
                         err == FC_ERR_LENGTH ? "bad length" :
                         err == FC_ERR_DEST ? "not a port of the network, or this port" :
                         err == FC_ERR_BUSY ? "a DMA send is in progress or the queue is full" :
                         err == FC_ERR_DISABLED ? "the adapter or the channel is not enabled" :
                         "the destination is unreachable");
    trace_retrolink_fc_tx_refused(s->rl->node, c, err, fc_now());
    ch->tx_status = err;
    ch->errors++;
    rl_board_raise(s->rl, FC_IRQ_ERROR(c));
}

/* The checks every send makes, in fc-regs.h's order; FC_ERR_NONE if it may go. */
static uint32_t fc_tx_check(FcState *s, uint32_t c, uint32_t len, uint32_t min,
                            uint32_t max, uint32_t dest)
{
    if (!fc_ready(s) || !(s->ch[c].ctrl & FC_CH_ENABLE)) {
        return FC_ERR_DISABLED;
    }
    if (len < min || len > max) {
        return FC_ERR_LENGTH;
    }
    if (dest >= s->rl->nodes || dest == s->rl->node) {
        return FC_ERR_DEST;
    }
    if (!fc_peer_up(s, dest)) {
        return FC_ERR_LINK_DOWN;
    }
    return FC_ERR_NONE;
}

static FcFrame *fc_frame_new(FcState *s, uint32_t c, uint32_t dest, uint32_t len,
                             uint32_t off, uint32_t msg_len, uint32_t tag)
{
    FcFrame *f = g_malloc0(sizeof(FcFrame) + len);

    f->peer = dest;
    f->len = len;
    f->wire = (FcWire) {
        .r_ctl = FC_RCTL_DATA,
        .type = c == FC_CH_IP ? FC_TYPE_IP : FC_TYPE_USER,
        .f_ctl = (off == 0 ? FC_FCTL_FIRST : 0) | (off + len == msg_len ? FC_FCTL_LAST : 0),
        .seq_id = s->ch[c].tx_seq & 0xff,
        .d_id = cpu_to_le32(dest),
        .s_id = cpu_to_le32(s->rl->node),
        .tag = cpu_to_le32(tag),
        .offset = cpu_to_le32(off),
        .msg_len = cpu_to_le32(msg_len),
    };
    return f;
}

/* The frame enters the adapter's transmit stage at 'ready', holding buffer slot k. */
static void fc_tx_adapter(FcState *s, uint32_t c, FcFrame *f, uint32_t k, uint64_t ready)
{
    uint64_t end = rl_server_run(&s->tx_adapter, ready, fc_adapter_ns(s, f->len));

    s->txq_free_at[k] = end;
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, FC_EV_TX_OUT, c, s->ch[c].tx_gen, f);
}

/* Start the DMA of the send's next frame, once a buffer slot is free and at 'ready'. */
static void fc_tx_next_dma(FcState *s, uint32_t c, uint64_t ready)
{
    FcChannel *ch = &s->ch[c];
    uint32_t n = MIN(FC_MAX_PAYLOAD, ch->cur_len - ch->tx_off);
    uint32_t k = fc_txq_first(s);
    uint64_t end = rl_server_run(&s->dma, MAX(ready, s->txq_free_at[k]),
                                 rl_bytes_ns(n, s->dma_rate));

    ch->tx_slot = k;
    s->txq_free_at[k] = RL_TIME_NEVER;      /* until the frame leaves the adapter */
    rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, FC_EV_TX_DMA_DONE, c, ch->tx_gen,
                 NULL);
}

void fc_tx_go(FcState *s, uint32_t c, uint64_t bus_end)
{
    FcChannel *ch = &s->ch[c];
    uint32_t err = fc_tx_check(s, c, ch->tx_len, 1, FC_MAX_SEND, ch->tx_dest);

    if (err == FC_ERR_NONE && ch->tx_active) {
        err = FC_ERR_BUSY;
    }
    if (err == FC_ERR_NONE) {
        ch->tx_pages = g_new(uint64_t, rl_dma_window_npages(&ch->dvma, ch->tx_addr,
                                                            ch->tx_len));
        if (!rl_dma_window_map(&ch->dvma, ch->tx_addr, ch->tx_len, false, RL_DMA_ANY_TAG,
                               ch->tx_pages)) {
            g_free(ch->tx_pages);
            ch->tx_pages = NULL;
            err = FC_ERR_WINDOW;
        }
    }
    if (err != FC_ERR_NONE) {
        fc_tx_refuse(s, c, "DMA send", err);
        return;
    }
    trace_retrolink_fc_tx_go(s->rl->node, c, ch->tx_dest, ch->tx_addr, ch->tx_len, fc_now());
    ch->tx_status = FC_ERR_NONE;
    ch->tx_active = true;
    ch->cur_addr = ch->tx_addr;
    ch->cur_len = ch->tx_len;
    ch->cur_dest = ch->tx_dest;
    ch->cur_tag = ch->tx_tag;
    ch->tx_off = 0;
    ch->tx_seq++;
    /* the adapter has the command when the bus transfer of the TX_GO store ends */
    fc_tx_next_dma(s, c, bus_end + s->send_setup_ns);
}

void fc_tx_dma_done(FcState *s, uint32_t c)
{
    FcChannel *ch = &s->ch[c];
    uint32_t n = MIN(FC_MAX_PAYLOAD, ch->cur_len - ch->tx_off);
    FcFrame *f = fc_frame_new(s, c, ch->cur_dest, n, ch->tx_off, ch->cur_len, ch->cur_tag);

    rl_dma_window_rw(&ch->dvma, ch->tx_pages, ch->cur_addr, ch->tx_off, f->data, n, false);
    ch->tx_off += n;
    f->last = ch->tx_off == ch->cur_len;
    fc_tx_adapter(s, c, f, ch->tx_slot, fc_now());
    if (!f->last) {
        fc_tx_next_dma(s, c, fc_now());
        return;
    }
    /* the whole send is read: host memory is the host's again ("DMA in progress" 0) */
    ch->tx_active = false;
    g_free(ch->tx_pages);
    ch->tx_pages = NULL;
}

void fc_pio_send(FcState *s, uint32_t c, uint32_t val, uint64_t bus_end)
{
    FcChannel *ch = &s->ch[c];
    uint32_t len = FC_PIO_SEND_LEN(val), dest = FC_PIO_SEND_DEST(val);
    uint32_t err = fc_tx_check(s, c, len, 0, FC_PIO_MAX, dest);
    uint32_t k = fc_txq_first(s);

    if (err == FC_ERR_NONE && s->txq_free_at[k] > fc_now()) {
        err = FC_ERR_BUSY;
    }
    if (err != FC_ERR_NONE) {
        fc_tx_refuse(s, c, "PIO send", err);
        return;
    }
    trace_retrolink_fc_pio_send(s->rl->node, c, dest, len, fc_now(), bus_end);
    ch->tx_status = FC_ERR_NONE;
    ch->tx_seq++;
    FcFrame *f = fc_frame_new(s, c, dest, len, 0, len, ch->pio_tag);
    memcpy(f->data, ch->pio_buf, len);
    fc_tx_adapter(s, c, f, k, bus_end);
}

void fc_tx_out(FcState *s, uint32_t c, FcFrame *f)
{
    FcChannel *ch = &s->ch[c];
    size_t size = sizeof(FcWire) + f->len;
    g_autofree uint8_t *buf = g_malloc(size);

    memcpy(buf, &f->wire, sizeof(FcWire));
    memcpy(buf + sizeof(FcWire), f->data, f->len);
    trace_retrolink_fc_frame_out(s->rl->node, c, f->peer, f->len, le32_to_cpu(f->wire.offset),
                                 fc_now());
    if (s->rl->port) {
        rl_port_send(s->rl->port, fc_now(), f->peer, 0, buf, size);
    }
    ch->tx_frames++;
    if (f->last) {
        ch->tx_done++;
        rl_board_raise(s->rl, FC_IRQ_TXDONE(c));
    }
    g_free(f);
}

/* Drop channel c's transmit events, freeing their frames. */
static bool fc_keep_not_tx(void *opaque, RlEvent *ev)
{
    uint32_t c = *(uint32_t *)opaque;

    if ((ev->kind == FC_EV_TX_DMA_DONE || ev->kind == FC_EV_TX_OUT) && ev->arg == c) {
        g_free(ev->ptr);
        return false;
    }
    return true;
}

/*
 * Stop channel c's sends at once: when this returns the adapter no longer reads
 * the channel's memory, and its frames still in the adapter are dropped.
 */
void fc_tx_abort(FcState *s, uint32_t c)
{
    FcChannel *ch = &s->ch[c];

    rl_sched_filter(&s->rl->sched, fc_keep_not_tx, &c);
    if (ch->tx_active) {
        s->txq_free_at[ch->tx_slot] = fc_now();
        trace_retrolink_fc_tx_abort(s->rl->node, c, ch->tx_off, ch->cur_len, fc_now());
    }
    ch->tx_active = false;
    ch->tx_gen++;
    g_free(ch->tx_pages);
    ch->tx_pages = NULL;
}
