/*
 * The CompactPCI backplane board: BAR2, the windows, the initiator side. Window n
 * (CPCI_WINDOW_SIZE bytes at n * CPCI_WINDOW_SIZE) is node n's exported region. An
 * access of 1, 2, 4 or 8 bytes, naturally aligned, is one transaction: it holds the vCPU
 * for its time on the node's PCI (arbitration, address, a data phase a word,
 * turnaround: rl-bus), then the bridge forwards it to the backplane ('bridge-ns'), where
 * it is a frame (proto/cpci.h) ready at that time.
 *
 * A store is a posted write. A load is non-posted: its data lives in the peer's QEMU,
 * and waiting for it inside this callback is not done yet (docs/boards/cpci.md,
 * "Limits"): a load reads all ones, sets CPCI_ERR_PEER_ABORT and is logged as
 * unimplemented. Refused accesses (cpci-regs.h, "Errors") cost their PCI time too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"

#include "cpci.h"
#include "hw/retrolink/trace.h"

/* An access the bridge takes: 1, 2, 4 or 8 bytes, naturally aligned. */
static bool cpci_win_access_ok(CpciState *s, hwaddr addr, unsigned size, bool write)
{
    if ((size != 1 && size != 2 && size != 4 && size != 8) || (addr & (size - 1))) {
        rl_board_guest_error(s->rl, "%u-byte %s at window offset 0x%" HWADDR_PRIx
                             " refused: 1, 2, 4 or 8 bytes, naturally aligned", size,
                             write ? "write" : "read", addr);
        cpci_error(s, CPCI_ERR_BAD_ACCESS, addr);
        return false;
    }
    return true;
}

static uint64_t cpci_win_read(void *opaque, hwaddr addr, unsigned size)
{
    CpciState *s = opaque;
    uint32_t node = addr / CPCI_WINDOW_SIZE;

    rl_bus_hold(&s->bus, cpci_pci_ns(s, size));
    trace_retrolink_cpci_window(s->rl->node, false, node, addr % CPCI_WINDOW_SIZE, size, 0,
                                s->bus.free_at);
    if (!cpci_win_access_ok(s, addr, size, false) || !cpci_peer_ok(s, node, addr)) {
        return size == 8 ? UINT64_MAX : MAKE_64BIT_MASK(0, size * 8);
    }
    qemu_log_mask(LOG_UNIMP, "retrolink-cpci node %u: a load from node %u's window "
                  "(offset 0x%" HWADDR_PRIx ") reads all ones: loads are not modelled\n",
                  s->rl->node, node, addr % CPCI_WINDOW_SIZE);
    cpci_error(s, CPCI_ERR_PEER_ABORT, addr);
    return size == 8 ? UINT64_MAX : MAKE_64BIT_MASK(0, size * 8);
}

static void cpci_win_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    CpciState *s = opaque;
    uint32_t node = addr / CPCI_WINDOW_SIZE;
    uint64_t bus_end = rl_bus_hold(&s->bus, cpci_pci_ns(s, size));
    CpciFrame f = { .h = { .type = CPCI_T_WRITE, .len = size,
                           .offset = addr % CPCI_WINDOW_SIZE, .src_node = s->rl->node } };

    trace_retrolink_cpci_window(s->rl->node, true, node, addr % CPCI_WINDOW_SIZE, size, data,
                                bus_end);
    if (!cpci_win_access_ok(s, addr, size, true) || !cpci_peer_ok(s, node, addr)) {
        return;
    }
    stq_le_p(f.data, data);
    s->tx_writes++;
    s->tx_bytes += size;
    cpci_send(s, node, &f, bus_end + s->bridge_ns);
}

const MemoryRegionOps cpci_win_ops = {
    .read = cpci_win_read,
    .write = cpci_win_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};
