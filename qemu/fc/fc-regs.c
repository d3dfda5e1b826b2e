/*
 * PUMA-III adapter: the registers (fc-regs.h). BAR0 is the control page, BAR2 one
 * page per channel. Every access crosses the SBus as programmed I/O and costs its
 * bytes at 'pio-rate' in the guest's virtual time, refused ones too (the bus
 * transfer happens whatever the adapter makes of it): rl_bus_pio() holds the vCPU
 * until the transfer ends.
 *
 * Registers take aligned 32-bit accesses, the PIO buffer aligned 32- and 64-bit
 * stores; any other access reads 0, writes nothing, has no side effect and is
 * logged as a guest error, as is a write to a read-only or unknown register.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

#include "fc.h"
#include "hw/retrolink/trace.h"

/* For trace events (rl_reg_name): the control page, a channel's registers in it, and
 * a channel's page. */
static const RlRegName fc_ctrl_names[] = {
    RL_REG(FC_REG_, ID),
    RL_REG(FC_REG_, VERSION),
    RL_REG(FC_REG_, NODE_ID),
    RL_REG(FC_REG_, NUM_NODES),
    RL_REG(FC_REG_, CTRL),
    RL_REG(FC_REG_, STATUS),
    RL_REG(FC_REG_, IRQ_STATUS),
    RL_REG(FC_REG_, IRQ_MASK),
    RL_REG(FC_REG_, MAC_LO),
    RL_REG(FC_REG_, MAC_HI),
    RL_REG(FC_REG_, PEERS_UP),
    RL_REG(FC_REG_, ERROR),
    { 0, NULL }
};

static const RlRegName fc_ch_names[] = {
    RL_REG(FC_CH_, CTRL),
    RL_REG(FC_CH_, STATUS),
    RL_REG(FC_CH_, DVMA_LO),
    RL_REG(FC_CH_, DVMA_HI),
    RL_REG(FC_CH_, DVMA_PAGES),
    RL_REG(FC_CH_, RX_RING),
    RL_REG(FC_CH_, RX_SLOTS),
    RL_REG(FC_CH_, TX_FRAMES),
    RL_REG(FC_CH_, RX_FRAMES),
    RL_REG(FC_CH_, RX_DROPS),
    RL_REG(FC_CH_, ERRORS),
    { 0, NULL }
};

static const RlRegName fc_chan_names[] = {
    RL_REG(FC_U_, NODE_ID),
    RL_REG(FC_U_, NUM_NODES),
    RL_REG(FC_U_, TX_ADDR),
    RL_REG(FC_U_, TX_LEN),
    RL_REG(FC_U_, TX_DEST),
    RL_REG(FC_U_, TX_TAG),
    RL_REG(FC_U_, TX_GO),
    RL_REG(FC_U_, TX_BUSY),
    RL_REG(FC_U_, TX_STATUS),
    RL_REG(FC_U_, TX_DONE),
    RL_REG(FC_U_, PIO_SEND),
    RL_REG(FC_U_, PIO_TAG),
    RL_REG(FC_U_, TXQ_FREE),
    RL_REG(FC_U_, RX_RELEASE),
    RL_REG(FC_U_, RX_DROPS),
    RL_REG(FC_U_, PIO_BUF),
    { 0, NULL }
};

/* A control page register's name; a channel's register is named as in its table. */
static const char *fc_ctrl_reg_name(hwaddr addr)
{
    if (addr >= FC_CH_REG(0, 0) && addr < FC_CH_REG(FC_CHANNELS, 0)) {
        return rl_reg_name(fc_ch_names, (addr - FC_CH_REG(0, 0)) % 0x40);
    }
    return rl_reg_name(fc_ctrl_names, addr);
}

static void fc_refused(FcState *s, const char *bar, hwaddr addr, unsigned size, bool write,
                       const char *why)
{
    rl_board_guest_error(s->rl, "%u-byte %s at %s offset 0x%" HWADDR_PRIx " refused: %s",
                         size, write ? "write" : "read", bar, addr, why);
}

/* ---- BAR0: the control page ------------------------------------------------- */

static void fc_ctrl_error(FcState *s, uint32_t err, const char *what)
{
    rl_board_guest_error(s->rl, "%s refused (FC_ERR %u)", what, err);
    s->error = err;
}

/* A channel with this configuration can be enabled: its table and ring are usable. */
static bool fc_channel_config_ok(FcState *s, FcChannel *ch)
{
    uint64_t ring_bytes = (uint64_t)ch->rx_slots * FC_RX_SLOT_SIZE;

    if ((ch->dvma.table_lo & 7) || ch->dvma.pages == 0 || ch->dvma.pages > FC_DVMA_MAX_PAGES ||
        (ch->rx_ring % FC_DVMA_PAGE) || ch->rx_slots == 0 || ch->rx_slots > FC_RX_MAX_SLOTS ||
        ch->rx_ring + ring_bytes > (uint64_t)ch->dvma.pages * FC_DVMA_PAGE) {
        return false;
    }
    return rl_dma_window_map(&ch->dvma, ch->rx_ring, ring_bytes, true, RL_DMA_ANY_TAG, NULL);
}

static void fc_channel_enable(FcState *s, uint32_t c, bool on)
{
    FcChannel *ch = &s->ch[c];

    if (!on) {
        if (ch->ctrl & FC_CH_ENABLE) {
            fc_tx_abort(s, c);
            fc_rx_abort(s, c);
            ch->ctrl = 0;
            trace_retrolink_fc_channel(s->rl->node, c, false, fc_now());
        }
        return;
    }
    if (ch->ctrl & FC_CH_ENABLE) {
        return;
    }
    if (!fc_ready(s)) {
        fc_ctrl_error(s, FC_ERR_DISABLED, "enabling a channel of an adapter that is not "
                      "enabled and READY");
        return;
    }
    if (!fc_channel_config_ok(s, ch)) {
        fc_ctrl_error(s, FC_ERR_CONFIG, "enabling a channel whose DVMA table or receive "
                      "ring is bad (alignment, sizes, or ring not mapped writable)");
        return;
    }
    ch->ctrl = FC_CH_ENABLE;
    ch->rx_next = 0;
    ch->rx_free = ch->rx_slots;
    ch->rx_host = 0;
    trace_retrolink_fc_channel(s->rl->node, c, true, fc_now());
}

static void fc_adapter_ctrl(FcState *s, uint32_t val)
{
    if (val & FC_CTRL_RESET) {
        fc_board_reset(s);
        return;
    }
    if (!(val & FC_CTRL_ENABLE)) {
        for (uint32_t c = 0; c < FC_CHANNELS; c++) {
            fc_channel_enable(s, c, false);
        }
    } else if (!(s->ctrl & FC_CTRL_ENABLE)) {
        /* link initialization and fabric login before it is READY */
        s->ready_at = fc_now() + s->rl->start_us * 1000;
    }
    s->ctrl = val & FC_CTRL_ENABLE;
}

static uint32_t fc_ch_read(FcState *s, uint32_t c, hwaddr r, bool *ok)
{
    FcChannel *ch = &s->ch[c];

    switch (r) {
    case FC_CH_CTRL: return ch->ctrl;
    case FC_CH_STATUS:
        return (ch->ctrl & FC_CH_ENABLE ? FC_CHS_ENABLED : 0) |
               (ch->tx_active ? 0 : FC_CHS_IDLE);
    case FC_CH_DVMA_LO: return ch->dvma.table_lo;
    case FC_CH_DVMA_HI: return ch->dvma.table_hi;
    case FC_CH_DVMA_PAGES: return ch->dvma.pages;
    case FC_CH_RX_RING: return ch->rx_ring;
    case FC_CH_RX_SLOTS: return ch->rx_slots;
    case FC_CH_TX_FRAMES: return ch->tx_frames;
    case FC_CH_RX_FRAMES: return ch->rx_frames;
    case FC_CH_RX_DROPS: return ch->rx_drops;
    case FC_CH_ERRORS: return ch->errors;
    default:
        *ok = false;
        return 0;
    }
}

static bool fc_ch_write(FcState *s, uint32_t c, hwaddr r, uint32_t val)
{
    FcChannel *ch = &s->ch[c];
    uint32_t *field;

    switch (r) {
    case FC_CH_CTRL:
        fc_channel_enable(s, c, val & FC_CH_ENABLE);
        return true;
    case FC_CH_DVMA_LO: field = &ch->dvma.table_lo; break;
    case FC_CH_DVMA_HI: field = &ch->dvma.table_hi; break;
    case FC_CH_DVMA_PAGES: field = &ch->dvma.pages; break;
    case FC_CH_RX_RING: field = &ch->rx_ring; break;
    case FC_CH_RX_SLOTS: field = &ch->rx_slots; break;
    default:
        return false;
    }
    if (ch->ctrl & FC_CH_ENABLE) {
        fc_ctrl_error(s, FC_ERR_CHANNEL_ON, "configuring an enabled channel");
        return true;
    }
    *field = val;
    return true;
}

static uint64_t fc_ctrl_read(void *opaque, hwaddr addr, unsigned size)
{
    FcState *s = opaque;
    bool ok = true;
    uint32_t val = 0;

    rl_bus_pio(&s->bus, size);
    if (size != 4 || (addr & 3)) {
        fc_refused(s, "control page", addr, size, false, "the registers are 32-bit");
        return 0;
    }
    switch (addr) {
    case FC_REG_ID: val = FC_ID_VALUE; break;
    case FC_REG_VERSION: val = 1; break;
    case FC_REG_NODE_ID: val = s->rl->node; break;
    case FC_REG_NUM_NODES: val = s->rl->nodes; break;
    case FC_REG_CTRL: val = s->ctrl; break;
    case FC_REG_STATUS:
        val = (s->rl->port && rl_port_is_up(s->rl->port) ? FC_STATUS_LINK_UP : 0) |
              (fc_ready(s) ? FC_STATUS_READY : 0);
        break;
    case FC_REG_IRQ_STATUS: val = s->rl->irq_status; break;
    case FC_REG_IRQ_MASK: val = s->rl->irq_mask; break;
    case FC_REG_MAC_LO: val = ldl_le_p(s->mac.a); break;
    case FC_REG_MAC_HI: val = lduw_le_p(s->mac.a + 4); break;
    case FC_REG_PEERS_UP: val = s->peers_up; break;
    case FC_REG_ERROR: val = s->error; break;
    default:
        if (addr >= FC_CH_REG(0, 0) && addr < FC_CH_REG(FC_CHANNELS, 0)) {
            val = fc_ch_read(s, (addr - FC_CH_REG(0, 0)) / 0x40, addr & 0x3f, &ok);
        } else {
            ok = false;
        }
    }
    if (!ok) {
        fc_refused(s, "control page", addr, size, false, "no such register");
        return 0;
    }
    trace_retrolink_fc_reg_read(s->rl->node, "ctrl", fc_ctrl_reg_name(addr), addr, val);
    return val;
}

static void fc_ctrl_write(void *opaque, hwaddr addr, uint64_t val64, unsigned size)
{
    FcState *s = opaque;
    uint32_t val = val64;
    bool ok = true;

    rl_bus_pio(&s->bus, size);
    if (size != 4 || (addr & 3)) {
        fc_refused(s, "control page", addr, size, true, "the registers are 32-bit");
        return;
    }
    trace_retrolink_fc_reg_write(s->rl->node, "ctrl", fc_ctrl_reg_name(addr), addr, val);
    switch (addr) {
    case FC_REG_CTRL:
        fc_adapter_ctrl(s, val);
        break;
    case FC_REG_IRQ_STATUS:
        rl_board_ack(s->rl, val);
        break;
    case FC_REG_IRQ_MASK:
        rl_board_set_mask(s->rl, val);
        break;
    default:
        if (addr >= FC_CH_REG(0, 0) && addr < FC_CH_REG(FC_CHANNELS, 0)) {
            ok = fc_ch_write(s, (addr - FC_CH_REG(0, 0)) / 0x40, addr & 0x3f, val);
        } else {
            ok = false;
        }
    }
    if (!ok) {
        fc_refused(s, "control page", addr, size, true, "read-only or unknown register");
    }
}

/* ---- BAR2: the channel pages -------------------------------------------------- */

static uint64_t fc_chan_read(void *opaque, hwaddr addr, unsigned size)
{
    FcState *s = opaque;
    uint32_t c = addr / FC_CHAN_PAGE_SIZE, r = addr % FC_CHAN_PAGE_SIZE;
    FcChannel *ch;
    uint32_t val;

    rl_bus_pio(&s->bus, size);
    if (c >= FC_CHANNELS || size != 4 || (addr & 3)) {
        fc_refused(s, "channel page", addr, size, false, "the registers are 32-bit");
        return 0;
    }
    ch = &s->ch[c];
    switch (r) {
    case FC_U_NODE_ID: val = s->rl->node; break;
    case FC_U_NUM_NODES: val = s->rl->nodes; break;
    case FC_U_TX_ADDR: val = ch->tx_addr; break;
    case FC_U_TX_LEN: val = ch->tx_len; break;
    case FC_U_TX_DEST: val = ch->tx_dest; break;
    case FC_U_TX_TAG: val = ch->tx_tag; break;
    case FC_U_TX_BUSY: val = ch->tx_active; break;
    case FC_U_TX_STATUS: val = ch->tx_status; break;
    case FC_U_TX_DONE: val = ch->tx_done; break;
    case FC_U_PIO_TAG: val = ch->pio_tag; break;
    case FC_U_TXQ_FREE: val = fc_txq_free(s); break;
    case FC_U_RX_DROPS: val = ch->rx_drops; break;
    default:
        fc_refused(s, "channel page", addr, size, false, "write-only or unknown register");
        return 0;
    }
    trace_retrolink_fc_reg_read(s->rl->node, "chan", rl_reg_name(fc_chan_names, r), addr, val);
    return val;
}

static void fc_chan_write(void *opaque, hwaddr addr, uint64_t val64, unsigned size)
{
    FcState *s = opaque;
    uint32_t c = addr / FC_CHAN_PAGE_SIZE, r = addr % FC_CHAN_PAGE_SIZE;
    uint32_t val = val64;
    uint64_t bus_end = rl_bus_pio(&s->bus, size);
    FcChannel *ch;

    if (c >= FC_CHANNELS) {
        fc_refused(s, "channel page", addr, size, true, "no such channel");
        return;
    }
    ch = &s->ch[c];
    if (r >= FC_U_PIO_BUF) {
        if ((size != 4 && size != 8) || (addr & (size - 1))) {
            fc_refused(s, "channel page", addr, size, true,
                       "the PIO buffer takes aligned 32- and 64-bit stores");
            return;
        }
        if (size == 8) {
            rl_board_stq(s->rl, ch->pio_buf + (r - FC_U_PIO_BUF), val64);
        } else {
            rl_board_stl(s->rl, ch->pio_buf + (r - FC_U_PIO_BUF), val);
        }
        return;
    }
    if (size != 4 || (addr & 3)) {
        fc_refused(s, "channel page", addr, size, true, "the registers are 32-bit");
        return;
    }
    trace_retrolink_fc_reg_write(s->rl->node, "chan", rl_reg_name(fc_chan_names, r), addr, val);
    switch (r) {
    case FC_U_TX_ADDR: ch->tx_addr = val; break;
    case FC_U_TX_LEN: ch->tx_len = val; break;
    case FC_U_TX_DEST: ch->tx_dest = val; break;
    case FC_U_TX_TAG: ch->tx_tag = val; break;
    case FC_U_TX_GO: fc_tx_go(s, c, bus_end); break;
    case FC_U_PIO_SEND: fc_pio_send(s, c, val, bus_end); break;
    case FC_U_PIO_TAG: ch->pio_tag = val; break;
    case FC_U_RX_RELEASE: fc_rx_release(s, c, val); break;
    default:
        fc_refused(s, "channel page", addr, size, true, "read-only or unknown register");
        break;
    }
}

/*
 * Every width and alignment reaches the handlers whole (with a narrower .valid the
 * memory core would split a wide access into pieces that each have side effects, and
 * log refusals as invalid_mem, not guest_errors); the handlers enforce fc-regs.h. One
 * of each in either byte order: the PCI card's little-endian, the SBus card's
 * big-endian (rl_board_ops).
 */
#define FC_OPS(_read, _write, _endianness) {                                          \
    .read = _read,                                                                  \
    .write = _write,                                                                \
    .endianness = _endianness,                                                      \
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },     \
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },      \
}

const MemoryRegionOps fc_ctrl_ops[2] = {
    FC_OPS(fc_ctrl_read, fc_ctrl_write, DEVICE_LITTLE_ENDIAN),
    FC_OPS(fc_ctrl_read, fc_ctrl_write, DEVICE_BIG_ENDIAN),
};

const MemoryRegionOps fc_chan_ops[2] = {
    FC_OPS(fc_chan_read, fc_chan_write, DEVICE_LITTLE_ENDIAN),
    FC_OPS(fc_chan_read, fc_chan_write, DEVICE_BIG_ENDIAN),
};
