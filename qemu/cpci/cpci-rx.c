/*
 * The CompactPCI backplane board: transactions from peers, the target side. A frame
 * reaches this bridge at its arrival time (the fabric's bus charged its backplane time
 * and the bridge's forwarding); the bridge then masters the node's own PCI for it, one
 * transaction at a time in arrival order (the 'target' server): a write lands in memory
 * at the end of its last data phase, a doorbell in DB_STATUS likewise, so a doorbell rung
 * after stores lands after them; a load reads memory ('mem-read-ns' of wait states) and
 * its completion goes back onto the backplane after 'bridge-ns'. What the node's memory
 * refuses (bus mastering off: the bridge cannot master the node's bus) is refused like
 * an access outside the export.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"

#include "cpci.h"
#include "hw/retrolink/trace.h"

/* A frame as proto/cpci.h allows it, from node src, with 'payload' data bytes. */
bool cpci_frame_valid(const CpciFrame *f, uint32_t payload, uint32_t src)
{
    const struct cpci_wire_hdr *h = &f->h;
    bool access = h->len >= 1 && h->len <= CPCI_MAX_ACCESS && h->offset < CPCI_EXPORT_MAX;

    if (h->src_node != src || src >= CPCI_MAX_NODES ||
        (h->flags & ~(h->type == CPCI_T_READ_DONE ? CPCI_FF_ABORT : 0))) {
        return false;
    }
    switch (h->type) {
    case CPCI_T_WRITE:
        return access && payload == h->len;
    case CPCI_T_READ:
        return access && payload == 0;
    case CPCI_T_DOORBELL:
        return h->len == 0 && payload == 0 && h->offset < CPCI_DB_PER_NODE;
    case CPCI_T_READ_DONE:
        return h->len >= 1 && h->len <= CPCI_MAX_ACCESS &&
               payload == (h->flags & CPCI_FF_ABORT ? 0 : h->len);
    default:
        return false;
    }
}

/* The export takes an access of len bytes at offset (EXPORT on, inside it). */
static bool cpci_export_ok(CpciState *s, const struct cpci_wire_hdr *h)
{
    return (s->ctrl & CPCI_CTRL_EXPORT) && h->offset + h->len <= s->export_size;
}

static uint64_t cpci_export_addr(CpciState *s, uint32_t offset)
{
    return ((uint64_t)s->export_hi << 32 | s->export_lo) + offset;
}

static void cpci_rx_reject(CpciState *s, CpciFrame *f, const char *why, uint64_t now)
{
    trace_retrolink_cpci_rx_reject(s->rl->node, f->h.src_node, f->h.type, f->h.offset, why,
                                   now);
    s->rx_rejected++;
    cpci_error(s, CPCI_ERR_INBOUND, f->h.type == CPCI_T_DOORBELL ? CPCI_REG_DB_STATUS
                                                                 : f->h.offset);
}

/* At its arrival: book the node's PCI for it. */
void cpci_rx_arrive(CpciState *s, CpciFrame *f, uint64_t now)
{
    uint64_t end;
    uint64_t turnaround = s->turnaround_cycles * s->cycle_ns;

    switch (f->h.type) {
    case CPCI_T_WRITE:
    case CPCI_T_DOORBELL:
        end = rl_server_run(&s->target, now, cpci_pci_ns(s, f->h.len));
        rl_sched_add(&s->rl->sched, end - turnaround, RL_EV_CLASS_INTERNAL, 0, CPCI_EV_LAND,
                     0, 0, f);
        break;
    case CPCI_T_READ:
        end = rl_server_run(&s->target, now, cpci_pci_ns(s, f->h.len) + s->mem_read_ns);
        rl_sched_add(&s->rl->sched, end, RL_EV_CLASS_INTERNAL, 0, CPCI_EV_SERVE, 0, 0, f);
        break;
    default:
        g_free(f);              /* completions never become events (cpci.c) */
        break;
    }
}

/* A write or a doorbell reaches memory or DB_STATUS. */
void cpci_rx_land(CpciState *s, CpciFrame *f, uint64_t now)
{
    if (f->h.type == CPCI_T_DOORBELL) {
        if (!(s->ctrl & CPCI_CTRL_ENABLE)) {
            cpci_rx_reject(s, f, "board not enabled", now);
        } else {
            uint32_t bit = 1u << CPCI_DB_BIT(f->h.src_node, f->h.offset);
            s->db_status |= bit;
            s->db_received++;
            trace_retrolink_cpci_doorbell(s->rl->node, f->h.src_node, f->h.offset, now);
            cpci_update_irq(s, bit & ~s->db_mask ? CPCI_IRQ_DOORBELL : 0);
        }
    } else if (!cpci_export_ok(s, &f->h)) {
        cpci_rx_reject(s, f, "outside the export, or the export off", now);
    } else if (rl_board_dma_write(s->rl, cpci_export_addr(s, f->h.offset), f->data,
                                  f->h.len) != MEMTX_OK) {
        cpci_rx_reject(s, f, "the node's memory refused it (bus mastering off?)", now);
    } else {
        s->rx_writes++;
        s->rx_bytes += f->h.len;
        trace_retrolink_cpci_land(s->rl->node, f->h.src_node, f->h.offset, f->h.len, now);
    }
    g_free(f);
}

/* A peer's load has read the export (or was refused): its completion goes back. */
void cpci_rx_serve(CpciState *s, CpciFrame *f, uint64_t now)
{
    CpciFrame done = { .h = { .type = CPCI_T_READ_DONE, .len = f->h.len,
                              .offset = f->h.offset, .tag = f->h.tag,
                              .src_node = s->rl->node } };

    if (!cpci_export_ok(s, &f->h)) {
        cpci_rx_reject(s, f, "load outside the export, or the export off", now);
        done.h.flags = CPCI_FF_ABORT;
    } else if (rl_board_dma_read(s->rl, cpci_export_addr(s, f->h.offset), done.data,
                                 f->h.len) != MEMTX_OK) {
        cpci_rx_reject(s, f, "the node's memory refused the load (bus mastering off?)", now);
        done.h.flags = CPCI_FF_ABORT;
    } else {
        s->rx_reads++;
    }
    cpci_send(s, f->h.src_node, &done, now + s->bridge_ns);
    g_free(f);
}

/*
 * A completion: the data of the load this node waits for, taken as it is delivered (the
 * vCPU is held in the load until it arrives, cpci-window.c). Any other is a peer's
 * mistake: dropped.
 */
void cpci_load_completion(CpciState *s, const CpciFrame *f, uint64_t at)
{
    CpciLoad *ld = &s->load;

    if (!ld->pending || ld->have || f->h.tag != ld->tag || f->h.src_node != ld->node ||
        f->h.len != ld->size) {
        warn_report("retrolink-cpci node %u: a load completion from node %u that no load "
                    "waits for (tag %u)", s->rl->node, f->h.src_node, f->h.tag);
        return;
    }
    ld->have = true;
    ld->arrival = at;
    ld->abort = f->h.flags & CPCI_FF_ABORT;
    memcpy(ld->data, f->data, sizeof(ld->data));
    trace_retrolink_cpci_load_done(s->rl->node, f->h.src_node, f->h.tag, ld->abort, at);
}
