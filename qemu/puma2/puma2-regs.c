/*
 * PUMA-II board: the host's two windows (puma2-regs.h). BAR0 is the control page,
 * BAR1 the board memory. Every access is programmed I/O across the VME bus: each
 * 32-bit transaction costs 'vme-overhead-ns' + 4 bytes at 'vme-rate', refused ones
 * too (the bus transfer happens whatever the board makes of it), and the vCPU is held
 * until the transfer ends (rl_bus_hold). The board counts that time (BUS_NS).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/bswap.h"

#include "puma2.h"
#include "hw/retrolink/trace.h"

static const RlRegName puma2_reg_names[] = {
    RL_REG(PUMA2_REG_, ID),
    RL_REG(PUMA2_REG_, VERSION),
    RL_REG(PUMA2_REG_, NODE_ID),
    RL_REG(PUMA2_REG_, NUM_NODES),
    RL_REG(PUMA2_REG_, CTRL),
    RL_REG(PUMA2_REG_, STATUS),
    RL_REG(PUMA2_REG_, IRQ_STATUS),
    RL_REG(PUMA2_REG_, IRQ_MASK),
    RL_REG(PUMA2_REG_, ERROR),
    RL_REG(PUMA2_REG_, SPACE_PAGES),
    RL_REG(PUMA2_REG_, CMD),
    RL_REG(PUMA2_REG_, CMD_FREE),
    RL_REG(PUMA2_REG_, RESP),
    RL_REG(PUMA2_REG_, RESP_COUNT),
    RL_REG(PUMA2_REG_, BUS_NS_LO),
    RL_REG(PUMA2_REG_, BUS_NS_HI),
    RL_REG(PUMA2_REG_, NET_NS_LO),
    RL_REG(PUMA2_REG_, NET_NS_HI),
    RL_REG(PUMA2_REG_, PAGES_IN),
    RL_REG(PUMA2_REG_, PAGES_OUT),
    RL_REG(PUMA2_REG_, MSGS_IN),
    RL_REG(PUMA2_REG_, MSGS_OUT),
    RL_REG(PUMA2_REG_, INVALIDATED),
    { 0, NULL }
};

/* An access of `bytes` crosses the bus as 32-bit transactions: book them, hold the vCPU. */
static uint64_t puma2_vme_access(Puma2State *s, unsigned bytes)
{
    uint64_t ns = puma2_vme_ns(s, bytes);

    s->bus_ns += ns;
    return rl_bus_hold(&s->bus, ns);
}

static void G_GNUC_PRINTF(3, 4) puma2_refuse(Puma2State *s, uint32_t err, const char *fmt,
                                             ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_autofree char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    rl_board_guest_error(s->rl, "%s (PUMA2_ERR %u)", what, err);
    s->error = err;
    rl_board_raise(s->rl, PUMA2_IRQ_ERROR);
}

/* ---- BAR0: the control page ------------------------------------------------------ */

static uint64_t puma2_ctrl_read(void *opaque, hwaddr addr, unsigned size)
{
    Puma2State *s = opaque;
    uint64_t now = puma2_now();
    uint64_t end = puma2_vme_access(s, size);
    uint32_t v = 0;

    if (size != 4 || (addr & 3)) {
        puma2_refuse(s, PUMA2_ERR_BAD_ACCESS, "%u-byte read at control offset 0x%"
                     HWADDR_PRIx " refused: registers take aligned 32-bit accesses",
                     size, addr);
        return 0;
    }
    switch (addr) {
    case PUMA2_REG_ID:
        v = PUMA2_ID_VALUE;
        break;
    case PUMA2_REG_VERSION:
        v = 1;
        break;
    case PUMA2_REG_NODE_ID:
        v = s->rl->node;
        break;
    case PUMA2_REG_NUM_NODES:
        v = s->rl->nodes;
        break;
    case PUMA2_REG_CTRL:
        v = s->ctrl;
        break;
    case PUMA2_REG_STATUS:
        v = puma2_ready(s) ? PUMA2_STATUS_READY : 0;
        break;
    case PUMA2_REG_IRQ_STATUS:
        v = s->rl->irq_status;
        break;
    case PUMA2_REG_IRQ_MASK:
        v = s->rl->irq_mask;
        break;
    case PUMA2_REG_ERROR:
        v = s->error;
        break;
    case PUMA2_REG_SPACE_PAGES:
        v = s->npages;
        break;
    case PUMA2_REG_CMD_FREE:
        v = PUMA2_CMD_DEPTH - s->cmd.count;
        break;
    case PUMA2_REG_RESP:
        v = rl_fifo_pop(&s->resp, PUMA2_RESP_EMPTY);
        if (v != PUMA2_RESP_EMPTY) {
            puma2_resp_popped(s, end);
        }
        break;
    case PUMA2_REG_RESP_COUNT:
        v = s->resp.count;
        break;
    case PUMA2_REG_BUS_NS_LO:
        v = s->bus_ns;
        s->hi_latch = s->bus_ns >> 32;
        break;
    case PUMA2_REG_NET_NS_LO: {
        uint64_t net = puma2_net_ns(s);
        v = net;
        s->hi_latch = net >> 32;
        break;
    }
    case PUMA2_REG_BUS_NS_HI:
    case PUMA2_REG_NET_NS_HI:
        v = s->hi_latch;
        break;
    case PUMA2_REG_PAGES_IN:
        v = s->pages_in;
        break;
    case PUMA2_REG_PAGES_OUT:
        v = s->pages_out;
        break;
    case PUMA2_REG_MSGS_IN:
        v = s->msgs_in;
        break;
    case PUMA2_REG_MSGS_OUT:
        v = s->msgs_out;
        break;
    case PUMA2_REG_INVALIDATED:
        v = s->invalidated;
        break;
    case PUMA2_REG_CMD:
        rl_board_guest_error(s->rl, "read of the write-only CMD register");
        break;
    default:
        rl_board_guest_error(s->rl, "read of unknown control offset 0x%" HWADDR_PRIx, addr);
        break;
    }
    trace_retrolink_puma2_reg_read(s->rl->node, rl_reg_name(puma2_reg_names, addr), addr, v,
                                   now);
    return v;
}

static void puma2_ctrl_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    Puma2State *s = opaque;
    uint64_t end = puma2_vme_access(s, size);
    uint32_t v = val;

    trace_retrolink_puma2_reg_write(s->rl->node, rl_reg_name(puma2_reg_names, addr), addr, v,
                                    puma2_now());
    if (size != 4 || (addr & 3)) {
        puma2_refuse(s, PUMA2_ERR_BAD_ACCESS, "%u-byte write at control offset 0x%"
                     HWADDR_PRIx " refused: registers take aligned 32-bit accesses",
                     size, addr);
        return;
    }
    switch (addr) {
    case PUMA2_REG_CTRL:
        if (v & PUMA2_CTRL_RESET) {
            puma2_host_reset(s, end);
            s->ctrl = 0;
            s->ready_at = 0;
            break;
        }
        if ((v & PUMA2_CTRL_ENABLE) && !(s->ctrl & PUMA2_CTRL_ENABLE)) {
            s->ready_at = end + s->rl->start_us * 1000;
        } else if (!(v & PUMA2_CTRL_ENABLE) && (s->ctrl & PUMA2_CTRL_ENABLE)) {
            puma2_host_reset(s, end);
        }
        s->ctrl = v & PUMA2_CTRL_ENABLE;
        if (v & ~(PUMA2_CTRL_ENABLE | PUMA2_CTRL_RESET)) {
            rl_board_guest_error(s->rl, "CTRL bits 0x%x ignored",
                                 v & ~(PUMA2_CTRL_ENABLE | PUMA2_CTRL_RESET));
        }
        break;
    case PUMA2_REG_IRQ_STATUS:
        rl_board_ack(s->rl, v);
        break;
    case PUMA2_REG_IRQ_MASK:
        rl_board_set_mask(s->rl, v);
        break;
    case PUMA2_REG_CMD:
        if (!puma2_ready(s)) {
            puma2_refuse(s, PUMA2_ERR_NOT_READY, "%u-byte CMD write at 0x%" HWADDR_PRIx
                         " refused: the board is not enabled and ready", size, addr);
        } else if (!rl_fifo_push(&s->cmd, v)) {
            puma2_refuse(s, PUMA2_ERR_CMD_FULL, "%u-byte CMD write at 0x%" HWADDR_PRIx
                         " refused: the command FIFO is full (read CMD_FREE first)",
                         size, addr);
        } else {
            puma2_cmd_written(s, end);
        }
        break;
    default:
        rl_board_guest_error(s->rl, "write of read-only or unknown control offset 0x%"
                             HWADDR_PRIx, addr);
        break;
    }
}

const MemoryRegionOps puma2_ctrl_ops = {
    .read = puma2_ctrl_read,
    .write = puma2_ctrl_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

/* ---- BAR1: the board memory ------------------------------------------------------- */

static uint64_t puma2_mem_read(void *opaque, hwaddr addr, unsigned size)
{
    Puma2State *s = opaque;

    puma2_vme_access(s, size);
    if (addr & (size - 1)) {
        puma2_refuse(s, PUMA2_ERR_BAD_ACCESS, "%u-byte read at memory offset 0x%"
                     HWADDR_PRIx " refused: unaligned", size, addr);
        return 0;
    }
    return ldn_le_p(s->mem_ptr + addr, size);
}

static void puma2_mem_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    Puma2State *s = opaque;

    puma2_vme_access(s, size);
    if (addr & (size - 1)) {
        puma2_refuse(s, PUMA2_ERR_BAD_ACCESS, "%u-byte write at memory offset 0x%"
                     HWADDR_PRIx " refused: unaligned", size, addr);
        return;
    }
    if (s->pages[addr / PUMA2_PAGE].hold != PUMA2_OP_WRITE) {
        puma2_refuse(s, PUMA2_ERR_NOT_WRITABLE, "%u-byte write at memory offset 0x%"
                     HWADDR_PRIx " refused: the host does not hold its page for writing",
                     size, addr);
        return;
    }
    stn_le_p(s->mem_ptr + addr, size, val);
}

const MemoryRegionOps puma2_mem_ops = {
    .read = puma2_mem_read,
    .write = puma2_mem_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};
