/*
 * The CompactPCI backplane board: BAR2, the windows, the initiator side. Window n
 * (CPCI_WINDOW_SIZE bytes at n * CPCI_WINDOW_SIZE) is node n's exported region. An
 * access of 1, 2, 4 or 8 bytes, naturally aligned, is one transaction: it holds the vCPU
 * for its time on the node's PCI (arbitration, address, a data phase a word,
 * turnaround: rl-bus), then the bridge forwards it to the backplane ('bridge-ns'), where
 * it is a frame (proto/cpci.h) ready at that time.
 *
 * A store is a posted write. A load is non-posted, a PCI delayed transaction: the CPU's
 * first attempt is retried while the bridge sends the request (CPCI_T_READ), and the
 * vCPU is held until the completion is back and the CPU's retry has read it (arbitration,
 * address, its data phases, turnaround). The data lives in the peer's QEMU: this
 * callback waits for the completion's frame in the vCPU thread (rl_port_wait), the clock
 * standing still, running this board's own events the grants allow meanwhile (a peer's
 * load of this node's export is served even while this node waits for one of its own).
 * A load refused by the peer, or whose completion cannot come (the link lost, QEMU
 * quitting), reads all ones with CPCI_ERR_PEER_ABORT. Refused accesses (cpci-regs.h,
 * "Errors") cost their PCI time too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/bswap.h"

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

/* The completion is here, or cannot come: its peer left the backplane. */
static bool cpci_load_done(void *opaque)
{
    CpciState *s = opaque;

    return s->load.have || !(s->peers_up & (1u << s->load.node));
}

/*
 * The fabric granted up to 'grant': no completion can arrive before it, and this
 * board's events before it (and before the load's end, when its data is back) may run.
 */
static void cpci_load_progress(void *opaque, uint64_t grant)
{
    CpciState *s = opaque;
    uint64_t end = grant;

    if (s->load.have) {
        end = MIN(end, s->load.arrival + cpci_pci_ns(s, s->load.size));
    } else {
        s->load.floor = MAX(s->load.floor, grant);
    }
    rl_sched_run_before(&s->rl->sched, end);
}

/* A load of 'size' bytes at 'off' of node's export, its first attempt ended at bus_end. */
static uint64_t cpci_win_load(CpciState *s, uint32_t node, uint32_t off, unsigned size,
                              hwaddr addr, uint64_t bus_end)
{
    uint64_t ready = bus_end + s->bridge_ns;
    CpciFrame f = { .h = { .type = CPCI_T_READ, .len = size, .offset = off,
                           .tag = ++s->tag, .src_node = s->rl->node } };
    bool back;

    s->tx_reads++;
    s->load = (CpciLoad) { .pending = true, .tag = f.h.tag, .node = node, .size = size,
                           .floor = ready + 1 };
    cpci_send(s, node, &f, ready);
    back = rl_port_wait(s->rl->port, cpci_load_done, cpci_load_progress, s) &&
           s->load.have;
    s->load.pending = false;
    /* the wait ran this node's events on: the CPU goes on after them (rl_port_wait) */
    rl_bus_hold_until(&s->bus, rl_port_reached(s->rl->port) + 1);
    if (back) {
        /* the CPU's retry reads the data the bridge holds */
        rl_bus_hold_until(&s->bus, s->load.arrival + cpci_pci_ns(s, size));
    }
    if (!back || s->load.abort) {
        rl_board_guest_error(s->rl, "load of node %u at 0x%x %s", node, off,
                             back ? "refused by the peer" : "got no completion");
        cpci_error(s, CPCI_ERR_PEER_ABORT, addr);
        return size == 8 ? UINT64_MAX : MAKE_64BIT_MASK(0, size * 8);
    }
    return ldn_le_p(s->load.data, size);
}

static uint64_t cpci_win_read(void *opaque, hwaddr addr, unsigned size)
{
    CpciState *s = opaque;
    uint32_t node = addr / CPCI_WINDOW_SIZE;
    uint64_t bus_end = rl_bus_hold(&s->bus, cpci_pci_ns(s, size));

    trace_retrolink_cpci_window(s->rl->node, false, node, addr % CPCI_WINDOW_SIZE, size, 0,
                                bus_end);
    if (!cpci_win_access_ok(s, addr, size, false) || !cpci_peer_ok(s, node, addr)) {
        return size == 8 ? UINT64_MAX : MAKE_64BIT_MASK(0, size * 8);
    }
    return cpci_win_load(s, node, addr % CPCI_WINDOW_SIZE, size, addr, bus_end);
}

static void cpci_win_write(void *opaque, hwaddr addr, uint64_t data, unsigned size)
{
    CpciState *s = opaque;
    uint32_t node = addr / CPCI_WINDOW_SIZE;
    uint64_t bus_end = cpci_pw_hold(s, cpci_phases(s, size) * s->width,
                                    cpci_pci_ns(s, size));
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
