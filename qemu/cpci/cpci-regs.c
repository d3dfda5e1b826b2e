/*
 * The CompactPCI backplane board: BAR0, the control page (cpci-regs.h). Registers take
 * aligned 32-bit accesses; any other access, an unknown register or a write to a
 * read-only one reads 0, writes nothing, sets CPCI_ERR_BAD_ACCESS and is logged as a
 * guest error. Every access holds the vCPU for one single-phase transaction on the
 * node's PCI (rl-bus): the bridge's registers answer without wait states.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

#include "cpci.h"
#include "hw/retrolink/trace.h"

static const RlRegName cpci_ctrl_names[] = {
    RL_REG(CPCI_REG_, ID), RL_REG(CPCI_REG_, VERSION), RL_REG(CPCI_REG_, NODE),
    RL_REG(CPCI_REG_, NODES), RL_REG(CPCI_REG_, CTRL), RL_REG(CPCI_REG_, STATUS),
    RL_REG(CPCI_REG_, EXPORT_LO), RL_REG(CPCI_REG_, EXPORT_HI),
    RL_REG(CPCI_REG_, EXPORT_SIZE), RL_REG(CPCI_REG_, WINDOW_SIZE),
    RL_REG(CPCI_REG_, DB_RING), RL_REG(CPCI_REG_, DB_STATUS), RL_REG(CPCI_REG_, DB_MASK),
    RL_REG(CPCI_REG_, IRQ_STATUS), RL_REG(CPCI_REG_, ERR_STATUS),
    RL_REG(CPCI_REG_, ERR_MASK), RL_REG(CPCI_REG_, ERR_ADDR), RL_REG(CPCI_REG_, MAC_LO),
    RL_REG(CPCI_REG_, MAC_HI), RL_REG(CPCI_REG_, TX_WRITES), RL_REG(CPCI_REG_, TX_BYTES),
    RL_REG(CPCI_REG_, TX_READS), RL_REG(CPCI_REG_, RX_WRITES), RL_REG(CPCI_REG_, RX_BYTES),
    RL_REG(CPCI_REG_, RX_READS), RL_REG(CPCI_REG_, RX_REJECTED), RL_REG(CPCI_REG_, DB_SENT),
    RL_REG(CPCI_REG_, DB_RECEIVED),
    { 0, NULL }
};

static void cpci_bad_access(CpciState *s, hwaddr addr, unsigned size, bool write,
                            const char *why)
{
    rl_board_guest_error(s->rl, "%u-byte %s at BAR0 offset 0x%" HWADDR_PRIx " refused: %s",
                         size, write ? "write" : "read", addr, why);
    cpci_error(s, CPCI_ERR_BAD_ACCESS, addr);
}

static void cpci_bad_value(CpciState *s, hwaddr addr, uint32_t val, const char *why)
{
    rl_board_guest_error(s->rl, "0x%x written to %s ignored: %s", val,
                         rl_reg_name(cpci_ctrl_names, addr), why);
    cpci_error(s, CPCI_ERR_BAD_VALUE, addr);
}

/* The causes a mask write let through that were not pending before it. */
static uint32_t cpci_unmasked(CpciState *s, uint32_t old)
{
    return (((s->db_status & ~s->db_mask) ? CPCI_IRQ_DOORBELL : 0) |
            ((s->err_status & ~s->err_mask) ? CPCI_IRQ_ERROR : 0)) & ~old;
}

static bool cpci_reg_read(CpciState *s, hwaddr addr, uint32_t *val)
{
    switch (addr) {
    case CPCI_REG_ID: *val = CPCI_ID_MAGIC; break;
    case CPCI_REG_VERSION: *val = CPCI_VERSION; break;
    case CPCI_REG_NODE: *val = s->rl->node; break;
    case CPCI_REG_NODES: *val = s->up ? s->rl->nodes : 0; break;
    case CPCI_REG_CTRL: *val = s->ctrl; break;
    case CPCI_REG_STATUS: *val = s->up && rl_port_is_up(s->rl->port) ? CPCI_STATUS_UP : 0; break;
    case CPCI_REG_EXPORT_LO: *val = s->export_lo; break;
    case CPCI_REG_EXPORT_HI: *val = s->export_hi; break;
    case CPCI_REG_EXPORT_SIZE: *val = s->export_size; break;
    case CPCI_REG_WINDOW_SIZE: *val = CPCI_WINDOW_SIZE; break;
    case CPCI_REG_DB_STATUS: *val = s->db_status; break;
    case CPCI_REG_DB_MASK: *val = s->db_mask; break;
    case CPCI_REG_IRQ_STATUS: *val = s->rl->irq_status; break;
    case CPCI_REG_ERR_STATUS: *val = s->err_status; break;
    case CPCI_REG_ERR_MASK: *val = s->err_mask; break;
    case CPCI_REG_ERR_ADDR: *val = s->err_addr; break;
    case CPCI_REG_MAC_LO: *val = ldl_le_p(s->mac.a); break;
    case CPCI_REG_MAC_HI: *val = lduw_le_p(s->mac.a + 4); break;
    case CPCI_REG_TX_WRITES: *val = s->tx_writes; break;
    case CPCI_REG_TX_BYTES: *val = s->tx_bytes; break;
    case CPCI_REG_TX_READS: *val = s->tx_reads; break;
    case CPCI_REG_RX_WRITES: *val = s->rx_writes; break;
    case CPCI_REG_RX_BYTES: *val = s->rx_bytes; break;
    case CPCI_REG_RX_READS: *val = s->rx_reads; break;
    case CPCI_REG_RX_REJECTED: *val = s->rx_rejected; break;
    case CPCI_REG_DB_SENT: *val = s->db_sent; break;
    case CPCI_REG_DB_RECEIVED: *val = s->db_received; break;
    default:
        return false;
    }
    return true;
}

static uint64_t cpci_ctrl_read(void *opaque, hwaddr addr, unsigned size)
{
    CpciState *s = opaque;
    uint32_t val = 0;

    rl_bus_hold(&s->bus, cpci_pci_ns(s, size));
    if (size != 4 || (addr & 3)) {
        cpci_bad_access(s, addr, size, false, "registers take aligned 32-bit accesses");
    } else if (addr == CPCI_REG_DB_RING || !cpci_reg_read(s, addr, &val)) {
        cpci_bad_access(s, addr, size, false, addr == CPCI_REG_DB_RING ? "write-only"
                                                                       : "no such register");
        val = 0;
    }
    trace_retrolink_cpci_reg_read(s->rl->node, rl_reg_name(cpci_ctrl_names, addr), addr, val);
    return val;
}

/* CTRL: RESET, ENABLE, EXPORT (taking the export's address and size as they are). */
static void cpci_ctrl(CpciState *s, uint32_t val)
{
    if (val & CPCI_CTRL_RESET) {
        cpci_board_reset(s);
        return;
    }
    if (val & ~(CPCI_CTRL_ENABLE | CPCI_CTRL_EXPORT)) {
        cpci_bad_value(s, CPCI_REG_CTRL, val, "bits other than ENABLE, EXPORT and RESET");
        return;
    }
    s->ctrl = val;
}

/* DB_RING: CPCI_DB_RING_VALUE(node, bit), a posted write to the peer's doorbell. */
static void cpci_db_ring(CpciState *s, uint32_t val, uint64_t bus_end)
{
    uint32_t node = val >> 16, bit = val & 0xffff;
    CpciFrame f = { .h = { .type = CPCI_T_DOORBELL, .offset = bit,
                           .src_node = s->rl->node } };

    if (node >= CPCI_MAX_NODES || bit >= CPCI_DB_PER_NODE) {
        cpci_bad_value(s, CPCI_REG_DB_RING, val, "no such node or doorbell");
        return;
    }
    if (!cpci_peer_ok(s, node, CPCI_REG_DB_RING)) {
        return;
    }
    s->db_sent++;
    cpci_send(s, node, &f, bus_end + s->bridge_ns);
}

static void cpci_ctrl_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    CpciState *s = opaque;
    uint32_t val = data;
    /* a write of DB_RING is a posted write: it waits for room in the buffer */
    uint64_t bus_end = addr == CPCI_REG_DB_RING ?
                       cpci_pw_hold(s, cpci_phases(s, 0) * s->width, cpci_pci_ns(s, size)) :
                       rl_bus_hold(&s->bus, cpci_pci_ns(s, size));
    uint32_t old = s->rl->irq_status;

    trace_retrolink_cpci_reg_write(s->rl->node, rl_reg_name(cpci_ctrl_names, addr), addr,
                                   val);
    if (size != 4 || (addr & 3)) {
        cpci_bad_access(s, addr, size, true, "registers take aligned 32-bit accesses");
        return;
    }
    switch (addr) {
    case CPCI_REG_CTRL:
        cpci_ctrl(s, val);
        break;
    case CPCI_REG_EXPORT_LO:
    case CPCI_REG_EXPORT_HI:
    case CPCI_REG_EXPORT_SIZE:
        if (s->ctrl & CPCI_CTRL_EXPORT) {
            cpci_bad_value(s, addr, val, "the export is on (clear CTRL_EXPORT first)");
        } else if (addr == CPCI_REG_EXPORT_LO && val % CPCI_PAGE_SIZE) {
            cpci_bad_value(s, addr, val, "not page-aligned");
        } else if (addr == CPCI_REG_EXPORT_SIZE &&
                   (val % CPCI_PAGE_SIZE || val > CPCI_EXPORT_MAX)) {
            cpci_bad_value(s, addr, val, "not whole pages, or larger than CPCI_EXPORT_MAX");
        } else if (addr == CPCI_REG_EXPORT_LO) {
            s->export_lo = val;
        } else if (addr == CPCI_REG_EXPORT_HI) {
            s->export_hi = val;
        } else {
            s->export_size = val;
        }
        break;
    case CPCI_REG_DB_RING:
        cpci_db_ring(s, val, bus_end);
        break;
    case CPCI_REG_DB_STATUS:
        s->db_status &= ~val;
        cpci_update_irq(s, 0);
        break;
    case CPCI_REG_DB_MASK:
        s->db_mask = val;
        cpci_update_irq(s, cpci_unmasked(s, old));      /* pending, unmasked now: an MSI */
        break;
    case CPCI_REG_ERR_STATUS:
        s->err_status &= ~val;
        cpci_update_irq(s, 0);
        break;
    case CPCI_REG_ERR_MASK:
        if (val & ~CPCI_ERR_ALL) {
            cpci_bad_value(s, addr, val, "bits of no error");
            break;
        }
        s->err_mask = val;
        cpci_update_irq(s, cpci_unmasked(s, old));
        break;
    default: {
        uint32_t dummy;
        cpci_bad_access(s, addr, size, true, cpci_reg_read(s, addr, &dummy)
                                             ? "read-only register" : "no such register");
        break;
    }
    }
}

const MemoryRegionOps cpci_ctrl_ops = {
    .read = cpci_ctrl_read,
    .write = cpci_ctrl_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};
