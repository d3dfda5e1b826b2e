/*
 * The VIA NIC: the registers (via-regs.h). BAR0 is the control page, BAR2 the doorbell
 * pages. Every access is programmed I/O on the PCI bus and holds the vCPU for its time
 * (rl_bus_hold): a store 'pio-write-ns', a load 'pio-read-ns', refused ones too.
 *
 * Registers take aligned 32-bit accesses, the doorbells aligned 64-bit stores; any
 * other access reads 0, writes nothing, has no side effect and is logged as a guest
 * error, as is a write to a read-only or unknown register.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

#include "via.h"
#include "hw/retrolink/trace.h"

static const RlRegName via_ctrl_names[] = {
    RL_REG(VIA_REG_, ID), RL_REG(VIA_REG_, VERSION), RL_REG(VIA_REG_, NODE_ID),
    RL_REG(VIA_REG_, NUM_NODES), RL_REG(VIA_REG_, CTRL), RL_REG(VIA_REG_, STATUS),
    RL_REG(VIA_REG_, IRQ_STATUS), RL_REG(VIA_REG_, IRQ_MASK), RL_REG(VIA_REG_, MAC_LO),
    RL_REG(VIA_REG_, MAC_HI), RL_REG(VIA_REG_, PEERS_UP), RL_REG(VIA_REG_, ERROR),
    RL_REG(VIA_REG_, TPT_LO), RL_REG(VIA_REG_, TPT_HI), RL_REG(VIA_REG_, TPT_PAGES),
    RL_REG(VIA_REG_, MR_INDEX), RL_REG(VIA_REG_, MR_VA_LO), RL_REG(VIA_REG_, MR_VA_HI),
    RL_REG(VIA_REG_, MR_LEN), RL_REG(VIA_REG_, MR_TPT), RL_REG(VIA_REG_, MR_PTAG),
    RL_REG(VIA_REG_, MR_CMD), RL_REG(VIA_REG_, VI_INDEX), RL_REG(VIA_REG_, VI_PTAG),
    RL_REG(VIA_REG_, VI_CQ), RL_REG(VIA_REG_, VI_PEER), RL_REG(VIA_REG_, VI_CMD),
    RL_REG(VIA_REG_, VI_STATE), RL_REG(VIA_REG_, CQ_INDEX), RL_REG(VIA_REG_, CQ_ADDR_LO),
    RL_REG(VIA_REG_, CQ_ADDR_HI), RL_REG(VIA_REG_, CQ_ENTRIES), RL_REG(VIA_REG_, CQ_CMD),
    RL_REG(VIA_REG_, CQ_STATUS), RL_REG(VIA_REG_, CQ_COUNT), RL_REG(VIA_REG_, ARM),
    { VIA_REG_VI_EVENTS(0), "VI_EVENTS0" }, { VIA_REG_VI_EVENTS(1), "VI_EVENTS1" },
    { VIA_REG_VI_EVENTS(2), "VI_EVENTS2" }, { VIA_REG_VI_EVENTS(3), "VI_EVENTS3" },
    RL_REG(VIA_REG_, CQ_EVENTS),
    { VIA_REG_VI_ERRORS(0), "VI_ERRORS0" }, { VIA_REG_VI_ERRORS(1), "VI_ERRORS1" },
    RL_REG(VIA_REG_, CQ_ERRORS), RL_REG(VIA_REG_, CM_TX_DEST), RL_REG(VIA_REG_, CM_TX_GO),
    RL_REG(VIA_REG_, CM_RX_COUNT), RL_REG(VIA_REG_, CM_RX_SRC), RL_REG(VIA_REG_, CM_RX_POP),
    RL_REG(VIA_REG_, TX_MSGS), RL_REG(VIA_REG_, RX_MSGS), RL_REG(VIA_REG_, RX_DROPS),
    RL_REG(VIA_REG_, DESC_ERRORS), RL_REG(VIA_REG_, DB_REFUSED),
    { 0, NULL }
};

static const RlRegName via_db_names[] = {
    RL_REG(VIA_DB_, SEND), RL_REG(VIA_DB_, RECV), RL_REG(VIA_DB_, STATE),
    RL_REG(VIA_DB_, SQ_DONE), RL_REG(VIA_DB_, RQ_DONE), RL_REG(VIA_DB_, ERROR),
    { 0, NULL }
};

static const char *via_ctrl_reg_name(hwaddr addr)
{
    if (addr >= VIA_REG_CM_TX_WORD(0) && addr < VIA_REG_CM_TX_WORD(VIA_CM_WORDS)) {
        return "CM_TX_WORD";
    }
    if (addr >= VIA_REG_CM_RX_WORD(0) && addr < VIA_REG_CM_RX_WORD(VIA_CM_WORDS)) {
        return "CM_RX_WORD";
    }
    return rl_reg_name(via_ctrl_names, addr);
}

static void via_refused(ViaState *s, const char *bar, hwaddr addr, unsigned size,
                        bool write, const char *why)
{
    rl_board_guest_error(s->rl, "%u-byte %s at %s offset 0x%" HWADDR_PRIx " refused: %s",
                         size, write ? "write" : "read", bar, addr, why);
}

static void via_error(ViaState *s, uint32_t err, const char *what)
{
    rl_board_guest_error(s->rl, "%s refused (VIA_ERR %u)", what, err);
    s->error = err;
}

/* ---- commands ------------------------------------------------------------------ */

static void via_ctrl(ViaState *s, uint32_t val)
{
    if (val & VIA_CTRL_RESET) {
        via_board_reset(s);
        return;
    }
    if ((val & VIA_CTRL_ENABLE) && !(s->ctrl & VIA_CTRL_ENABLE)) {
        /* link training and the switch's port setup before it is READY */
        s->ready_at = via_now() + s->rl->start_us * 1000;
    }
    s->ctrl = val & VIA_CTRL_ENABLE;
}

static void via_mr_cmd(ViaState *s, uint32_t cmd)
{
    ViaRegion *r = &s->mr[s->mr_index];

    if (cmd == VIA_MR_CLEAR) {
        memset(r, 0, sizeof(*r));
        return;
    }
    if (cmd != VIA_MR_SET) {
        via_error(s, VIA_ERR_CMD, "MR_CMD");
        return;
    }
    uint64_t va = ((uint64_t)s->mr_va_hi << 32) | s->mr_va_lo;
    uint64_t pages = ((va & (VIA_PAGE - 1)) + (uint64_t)s->mr_len + VIA_PAGE - 1) / VIA_PAGE;
    if (r->ptag) {
        via_error(s, VIA_ERR_BUSY, "MR_SET of a region that is set");
    } else if (s->mr_ptag == 0 || s->mr_ptag > 255) {
        via_error(s, VIA_ERR_TAG, "MR_SET");
    } else if (s->mr_len == 0 ||
               s->mr_len > (uint64_t)VIA_TPT_MAX_PAGES * VIA_PAGE - (VIA_PAGE - 1) ||
               va + s->mr_len < va ||
               (uint64_t)s->mr_tpt + pages > VIA_TPT_MAX_PAGES) {
        via_error(s, VIA_ERR_RANGE, "MR_SET (length, or pages beyond the TPT)");
    } else {
        r->va = va;
        r->len = s->mr_len;
        r->tpt = s->mr_tpt;
        r->ptag = s->mr_ptag;
        trace_retrolink_via_mr(s->rl->node, s->mr_index, va, r->len, r->tpt, r->ptag);
    }
}

static bool via_cq_ok(ViaState *s, uint32_t c)
{
    return c == VIA_NO_CQ || (c < VIA_MAX_CQS && (s->cq[c].status & VIA_CQ_ACTIVE));
}

static void via_vi_open(ViaState *s, ViaVi *vi, uint32_t state)
{
    uint32_t scq = s->vi_cq & 0xffff, rcq = s->vi_cq >> 16;

    if (vi->state != VIA_VI_CLOSED) {
        via_error(s, VIA_ERR_STATE, "VI OPEN/DATAGRAM of a VI that is open");
    } else if (s->vi_ptag == 0 || s->vi_ptag > 255) {
        via_error(s, VIA_ERR_TAG, "VI OPEN/DATAGRAM");
    } else if (!via_cq_ok(s, scq) || !via_cq_ok(s, rcq)) {
        via_error(s, VIA_ERR_RANGE, "VI OPEN/DATAGRAM with a CQ that is not set");
    } else {
        vi->state = state;
        vi->ptag = s->vi_ptag;
        vi->send_cq = scq;
        vi->recv_cq = rcq;
        vi->tx_seq = vi->tx_ack_seq = vi->rx_seq = 0;
    }
}

static void via_vi_cmd(ViaState *s, uint32_t cmd)
{
    uint32_t v = s->vi_index;
    ViaVi *vi = &s->vi[v];
    uint32_t node = s->vi_peer & 0xffff, pvi = s->vi_peer >> 16;

    switch (cmd) {
    case VIA_VI_CMD_OPEN:
        via_vi_open(s, vi, VIA_VI_IDLE);
        break;
    case VIA_VI_CMD_DATAGRAM:
        via_vi_open(s, vi, VIA_VI_DATAGRAM);
        break;
    case VIA_VI_CMD_CONNECT:
        if (vi->state != VIA_VI_IDLE) {
            via_error(s, VIA_ERR_STATE, "VI CONNECT of a VI that is not IDLE");
        } else if (!via_ready(s)) {
            via_error(s, VIA_ERR_NOT_READY, "VI CONNECT");
        } else if (node >= s->rl->nodes || node == s->rl->node) {
            via_error(s, VIA_ERR_DEST, "VI CONNECT to a node not another of the network");
        } else if (pvi >= VIA_MAX_VIS) {
            via_error(s, VIA_ERR_RANGE, "VI CONNECT to a VI out of range");
        } else {
            vi->state = VIA_VI_CONNECTED;
            vi->peer_node = node;
            vi->peer_vi = pvi;
            vi->tx_seq = vi->tx_ack_seq = vi->rx_seq = 0;
        }
        break;
    case VIA_VI_CMD_DISCONNECT:
        if (vi->state != VIA_VI_CONNECTED && vi->state != VIA_VI_ERROR) {
            via_error(s, VIA_ERR_STATE, "VI DISCONNECT of a VI not CONNECTED or ERROR");
            break;
        }
        vi->state = VIA_VI_IDLE;
        via_vi_abort(s, v);
        via_vi_flush(s, v, 0, via_now());
        break;
    case VIA_VI_CMD_CLOSE:
        vi->gen++;
        via_vi_abort(s, v);
        via_vi_flush(s, v, 0, via_now());
        via_vi_flush(s, v, 1, via_now());
        vi->state = VIA_VI_CLOSED;
        break;
    default:
        via_error(s, VIA_ERR_CMD, "VI_CMD");
        return;
    }
    trace_retrolink_via_vi(s->rl->node, v, cmd, vi->state, via_now());
}

static void via_cq_cmd(ViaState *s, uint32_t cmd)
{
    uint32_t c = s->cq_index;
    ViaCq *cq = &s->cq[c];

    if (cmd == VIA_CQ_CLEAR) {
        if (via_cq_in_use(s, c)) {
            via_error(s, VIA_ERR_BUSY, "CQ_CLEAR of a CQ a VI uses");
            return;
        }
        memset(cq, 0, sizeof(*cq));
        s->cq_armed &= ~(1u << c);
        return;
    }
    if (cmd != VIA_CQ_SET) {
        via_error(s, VIA_ERR_CMD, "CQ_CMD");
        return;
    }
    if (cq->status & VIA_CQ_ACTIVE) {
        via_error(s, VIA_ERR_BUSY, "CQ_SET of a CQ that is set");
    } else if (!s->cq_entries || s->cq_entries > VIA_CQ_MAX_ENTRIES ||
               !is_power_of_2(s->cq_entries)) {
        via_error(s, VIA_ERR_RANGE, "CQ_SET (entries)");
    } else if (s->cq_addr_lo & 7) {
        via_error(s, VIA_ERR_ALIGN, "CQ_SET (ring address)");
    } else {
        cq->addr = ((uint64_t)s->cq_addr_hi << 32) | s->cq_addr_lo;
        cq->entries = s->cq_entries;
        cq->status = VIA_CQ_ACTIVE;
        cq->count = 0;
    }
}

static void via_arm(ViaState *s, uint32_t val)
{
    if (val & 0x10000) {
        uint32_t c = val & 0xffff;
        if (val >> 17 || c >= VIA_MAX_CQS) {
            via_error(s, VIA_ERR_RANGE, "ARM of a CQ out of range");
            return;
        }
        s->cq_armed |= 1u << c;
        return;
    }
    if (val >= 2 * VIA_MAX_VIS) {
        via_error(s, VIA_ERR_RANGE, "ARM of a VI out of range");
        return;
    }
    s->vi_armed[val / 32] |= 1u << (val % 32);
}

/* Write an index register: a value out of range is refused and not taken. */
static void via_index(ViaState *s, uint32_t *field, uint32_t val, uint32_t limit)
{
    if (val >= limit) {
        via_error(s, VIA_ERR_RANGE, "an index out of range");
        return;
    }
    *field = val;
}

/* ---- BAR0 ------------------------------------------------------------------------ */

static bool via_ctrl_read_reg(ViaState *s, hwaddr addr, uint32_t *val)
{
    switch (addr) {
    case VIA_REG_ID: *val = VIA_ID_VALUE; break;
    case VIA_REG_VERSION: *val = 1; break;
    case VIA_REG_NODE_ID: *val = s->rl->node; break;
    case VIA_REG_NUM_NODES: *val = s->rl->nodes; break;
    case VIA_REG_CTRL: *val = s->ctrl; break;
    case VIA_REG_STATUS:
        *val = (s->rl->port && rl_port_is_up(s->rl->port) ? VIA_STATUS_LINK_UP : 0) |
               (via_ready(s) ? VIA_STATUS_READY : 0);
        break;
    case VIA_REG_IRQ_STATUS: *val = s->rl->irq_status; break;
    case VIA_REG_IRQ_MASK: *val = s->rl->irq_mask; break;
    case VIA_REG_MAC_LO: *val = ldl_le_p(s->mac.a); break;
    case VIA_REG_MAC_HI: *val = lduw_le_p(s->mac.a + 4); break;
    case VIA_REG_PEERS_UP: *val = s->peers_up; break;
    case VIA_REG_ERROR: *val = s->error; break;
    case VIA_REG_TPT_LO: *val = s->tpt.table_lo; break;
    case VIA_REG_TPT_HI: *val = s->tpt.table_hi; break;
    case VIA_REG_TPT_PAGES: *val = s->tpt.pages; break;
    case VIA_REG_MR_INDEX: *val = s->mr_index; break;
    case VIA_REG_MR_VA_LO: *val = s->mr_va_lo; break;
    case VIA_REG_MR_VA_HI: *val = s->mr_va_hi; break;
    case VIA_REG_MR_LEN: *val = s->mr_len; break;
    case VIA_REG_MR_TPT: *val = s->mr_tpt; break;
    case VIA_REG_MR_PTAG: *val = s->mr_ptag; break;
    case VIA_REG_VI_INDEX: *val = s->vi_index; break;
    case VIA_REG_VI_PTAG: *val = s->vi_ptag; break;
    case VIA_REG_VI_CQ: *val = s->vi_cq; break;
    case VIA_REG_VI_PEER: *val = s->vi_peer; break;
    case VIA_REG_VI_STATE: *val = s->vi[s->vi_index].state; break;
    case VIA_REG_CQ_INDEX: *val = s->cq_index; break;
    case VIA_REG_CQ_ADDR_LO: *val = s->cq_addr_lo; break;
    case VIA_REG_CQ_ADDR_HI: *val = s->cq_addr_hi; break;
    case VIA_REG_CQ_ENTRIES: *val = s->cq_entries; break;
    case VIA_REG_CQ_STATUS: *val = s->cq[s->cq_index].status; break;
    case VIA_REG_CQ_COUNT: *val = s->cq[s->cq_index].count; break;
    case VIA_REG_VI_EVENTS(0) ... VIA_REG_VI_EVENTS(3):
        *val = s->vi_events[(addr - VIA_REG_VI_EVENTS(0)) / 4];
        break;
    case VIA_REG_CQ_EVENTS: *val = s->cq_events; break;
    case VIA_REG_VI_ERRORS(0) ... VIA_REG_VI_ERRORS(1):
        *val = s->vi_errors[(addr - VIA_REG_VI_ERRORS(0)) / 4];
        break;
    case VIA_REG_CQ_ERRORS: *val = s->cq_errors; break;
    case VIA_REG_CM_TX_DEST: *val = s->cm_dest; break;
    case VIA_REG_CM_TX_WORD(0) ... VIA_REG_CM_TX_WORD(VIA_CM_WORDS - 1):
        *val = s->cm_word[(addr - VIA_REG_CM_TX_WORD(0)) / 4];
        break;
    case VIA_REG_CM_RX_COUNT: *val = s->cm_rx.count / VIA_CM_ENTRY_WORDS; break;
    case VIA_REG_CM_RX_SRC:
    case VIA_REG_CM_RX_WORD(0) ... VIA_REG_CM_RX_WORD(VIA_CM_WORDS - 1): {
        uint32_t i = (addr - VIA_REG_CM_RX_SRC) / 4;
        *val = s->cm_rx.count ? s->cm_rx.entry[(s->cm_rx.head + i) % s->cm_rx.depth] : 0;
        break;
    }
    case VIA_REG_TX_MSGS: *val = s->tx_msgs; break;
    case VIA_REG_RX_MSGS: *val = s->rx_msgs; break;
    case VIA_REG_RX_DROPS: *val = s->rx_drops; break;
    case VIA_REG_DESC_ERRORS: *val = s->desc_errors; break;
    case VIA_REG_DB_REFUSED: *val = s->db_refused; break;
    default:
        return false;
    }
    return true;
}

static uint64_t via_ctrl_read(void *opaque, hwaddr addr, unsigned size)
{
    ViaState *s = opaque;
    uint32_t val = 0;

    rl_bus_hold(&s->bus, s->pio_read_ns);
    if (size != 4 || (addr & 3)) {
        via_refused(s, "control page", addr, size, false, "the registers are 32-bit");
        return 0;
    }
    if (!via_ctrl_read_reg(s, addr, &val)) {
        via_refused(s, "control page", addr, size, false, "write-only or unknown register");
        return 0;
    }
    trace_retrolink_via_reg_read(s->rl->node, "ctrl", via_ctrl_reg_name(addr), addr, val);
    return val;
}

/* A register that takes its value as it is: the TPT's (not while enabled) and fields. */
static uint32_t *via_ctrl_field(ViaState *s, hwaddr addr)
{
    switch (addr) {
    case VIA_REG_MR_VA_LO: return &s->mr_va_lo;
    case VIA_REG_MR_VA_HI: return &s->mr_va_hi;
    case VIA_REG_MR_LEN: return &s->mr_len;
    case VIA_REG_MR_TPT: return &s->mr_tpt;
    case VIA_REG_MR_PTAG: return &s->mr_ptag;
    case VIA_REG_VI_PTAG: return &s->vi_ptag;
    case VIA_REG_VI_CQ: return &s->vi_cq;
    case VIA_REG_VI_PEER: return &s->vi_peer;
    case VIA_REG_CQ_ADDR_LO: return &s->cq_addr_lo;
    case VIA_REG_CQ_ADDR_HI: return &s->cq_addr_hi;
    case VIA_REG_CQ_ENTRIES: return &s->cq_entries;
    case VIA_REG_CM_TX_DEST: return &s->cm_dest;
    case VIA_REG_CM_TX_WORD(0) ... VIA_REG_CM_TX_WORD(VIA_CM_WORDS - 1):
        return &s->cm_word[(addr - VIA_REG_CM_TX_WORD(0)) / 4];
    default:
        return NULL;
    }
}

static void via_tpt_write(ViaState *s, hwaddr addr, uint32_t val)
{
    if (s->ctrl & VIA_CTRL_ENABLE) {
        via_error(s, VIA_ERR_ENABLED, "a TPT register written while enabled");
    } else if (addr == VIA_REG_TPT_LO && (val & 7)) {
        via_error(s, VIA_ERR_ALIGN, "TPT_LO");
    } else if (addr == VIA_REG_TPT_PAGES && val > VIA_TPT_MAX_PAGES) {
        via_error(s, VIA_ERR_RANGE, "TPT_PAGES");
    } else if (addr == VIA_REG_TPT_LO) {
        s->tpt.table_lo = val;
    } else if (addr == VIA_REG_TPT_HI) {
        s->tpt.table_hi = val;
    } else {
        s->tpt.pages = val;
    }
}

static void via_ctrl_write(void *opaque, hwaddr addr, uint64_t val64, unsigned size)
{
    ViaState *s = opaque;
    uint32_t val = val64;
    uint64_t bus_end = rl_bus_hold(&s->bus, s->pio_write_ns);
    uint32_t *field;

    if (size != 4 || (addr & 3)) {
        via_refused(s, "control page", addr, size, true, "the registers are 32-bit");
        return;
    }
    trace_retrolink_via_reg_write(s->rl->node, "ctrl", via_ctrl_reg_name(addr), addr, val);
    s->error = VIA_ERR_NONE;
    switch (addr) {
    case VIA_REG_CTRL: via_ctrl(s, val); return;
    case VIA_REG_IRQ_STATUS: rl_board_ack(s->rl, val); return;
    case VIA_REG_IRQ_MASK: rl_board_set_mask(s->rl, val); return;
    case VIA_REG_TPT_LO:
    case VIA_REG_TPT_HI:
    case VIA_REG_TPT_PAGES:
        via_tpt_write(s, addr, val);
        return;
    case VIA_REG_MR_INDEX: via_index(s, &s->mr_index, val, VIA_MAX_REGIONS); return;
    case VIA_REG_VI_INDEX: via_index(s, &s->vi_index, val, VIA_MAX_VIS); return;
    case VIA_REG_CQ_INDEX: via_index(s, &s->cq_index, val, VIA_MAX_CQS); return;
    case VIA_REG_MR_CMD: via_mr_cmd(s, val); return;
    case VIA_REG_VI_CMD: via_vi_cmd(s, val); return;
    case VIA_REG_CQ_CMD: via_cq_cmd(s, val); return;
    case VIA_REG_ARM: via_arm(s, val); return;
    case VIA_REG_VI_EVENTS(0) ... VIA_REG_VI_EVENTS(3):
        s->vi_events[(addr - VIA_REG_VI_EVENTS(0)) / 4] &= ~val;
        return;
    case VIA_REG_CQ_EVENTS: s->cq_events &= ~val; return;
    case VIA_REG_VI_ERRORS(0) ... VIA_REG_VI_ERRORS(1):
        s->vi_errors[(addr - VIA_REG_VI_ERRORS(0)) / 4] &= ~val;
        return;
    case VIA_REG_CQ_ERRORS: s->cq_errors &= ~val; return;
    case VIA_REG_CM_TX_GO: via_cm_send(s, bus_end); return;
    case VIA_REG_CM_RX_POP:
        if (s->cm_rx.count) {
            for (uint32_t i = 0; i < VIA_CM_ENTRY_WORDS; i++) {
                rl_fifo_pop(&s->cm_rx, 0);
            }
        }
        return;
    }
    field = via_ctrl_field(s, addr);
    if (!field) {
        via_refused(s, "control page", addr, size, true, "read-only or unknown register");
        return;
    }
    *field = val;
}

/* ---- BAR2: the doorbells ----------------------------------------------------------- */

static uint64_t via_db_read(void *opaque, hwaddr addr, unsigned size)
{
    ViaState *s = opaque;
    uint32_t v = addr / VIA_DB_PAGE_SIZE, r = addr % VIA_DB_PAGE_SIZE;
    uint32_t val;

    rl_bus_hold(&s->bus, s->pio_read_ns);
    if (v >= VIA_MAX_VIS || size != 4 || (addr & 3)) {
        via_refused(s, "doorbell page", addr, size, false, "the registers are 32-bit");
        return 0;
    }
    switch (r) {
    case VIA_DB_STATE: val = s->vi[v].state; break;
    case VIA_DB_SQ_DONE: val = s->vi[v].wq[0].done; break;
    case VIA_DB_RQ_DONE: val = s->vi[v].wq[1].done; break;
    case VIA_DB_ERROR: val = s->vi[v].db_error; break;
    default:
        via_refused(s, "doorbell page", addr, size, false, "write-only or unknown register");
        return 0;
    }
    trace_retrolink_via_reg_read(s->rl->node, "db", rl_reg_name(via_db_names, r), addr, val);
    return val;
}

/* A post to queue q of VI v: refused (VIA_DBE_*) or queued, and a send started. */
static void via_post(ViaState *s, uint32_t v, uint32_t q, uint64_t db, uint64_t bus_end)
{
    ViaVi *vi = &s->vi[v];
    ViaWq *wq = &vi->wq[q];
    uint32_t err = VIA_DBE_NONE;

    if (VIA_DB_OFFSET(db) & (VIA_DESC_ALIGN - 1)) {
        err = VIA_DBE_ALIGN;
    } else if (vi->state == VIA_VI_CLOSED ||
               (q == 0 && vi->state != VIA_VI_CONNECTED && vi->state != VIA_VI_DATAGRAM)) {
        err = VIA_DBE_STATE;
    } else if (wq->count >= VIA_WQ_DEPTH) {
        err = VIA_DBE_FULL;
    }
    vi->db_error = err;
    trace_retrolink_via_post(s->rl->node, v, q, VIA_DB_HANDLE(db), VIA_DB_OFFSET(db), err,
                             bus_end);
    if (err) {
        rl_board_guest_error(s->rl, "VI %u: %s post refused (VIA_DBE %u)", v,
                             q ? "receive" : "send", err);
        s->db_refused++;
        return;
    }
    wq->db[(wq->head + wq->count) % VIA_WQ_DEPTH] = db;
    wq->count++;
    if (q == 0) {
        via_tx_kick(s, v, bus_end);
    }
}

static void via_db_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    ViaState *s = opaque;
    uint32_t v = addr / VIA_DB_PAGE_SIZE, r = addr % VIA_DB_PAGE_SIZE;
    uint64_t bus_end = rl_bus_hold(&s->bus, s->pio_write_ns);

    if (v >= VIA_MAX_VIS || size != 8 || (r != VIA_DB_SEND && r != VIA_DB_RECV)) {
        via_refused(s, "doorbell page", addr, size, true,
                    "the doorbells take aligned 64-bit stores");
        return;
    }
    trace_retrolink_via_reg_write(s->rl->node, "db", rl_reg_name(via_db_names, r), addr,
                                  (uint32_t)val);
    via_post(s, v, r == VIA_DB_RECV, val, bus_end);
}

/*
 * Every width and alignment reaches the handlers whole (as fc-regs.c); the handlers
 * enforce via-regs.h.
 */
const MemoryRegionOps via_ctrl_ops = {
    .read = via_ctrl_read,
    .write = via_ctrl_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

const MemoryRegionOps via_db_ops = {
    .read = via_db_read,
    .write = via_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};
