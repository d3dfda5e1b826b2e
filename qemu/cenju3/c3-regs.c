/*
 * Cenju-3 interface: BAR0 (cenju3-regs.h). Every access is an uncached load or store
 * across the PE's bus to the interface and holds the vCPU for 'reg-access-ns' of
 * virtual time, refused ones too (the bus cycle happens whatever the interface makes
 * of it): rl_bus_hold(). A cache operation then holds it for its own time.
 *
 * Registers take aligned 32-bit accesses only; anything else reads 0, writes nothing,
 * has no side effect and is logged as a guest error, as is a write to a read-only or
 * unknown register and a read of CACHE_OP.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/log.h"

#include "c3.h"
#include "hw/retrolink/trace.h"

/* For trace events (rl_reg_name). */
static const RlRegName c3_reg_names[] = {
    RL_REG(C3_REG_, ID),
    RL_REG(C3_REG_, VERSION),
    RL_REG(C3_REG_, NODE_ID),
    RL_REG(C3_REG_, NUM_NODES),
    RL_REG(C3_REG_, CTRL),
    RL_REG(C3_REG_, STATUS),
    RL_REG(C3_REG_, IRQ_STATUS),
    RL_REG(C3_REG_, IRQ_MASK),
    RL_REG(C3_REG_, ERROR),
    RL_REG(C3_REG_, REQ_BASE_LO),
    RL_REG(C3_REG_, REQ_BASE_HI),
    RL_REG(C3_REG_, REQ_SIZE),
    RL_REG(C3_REG_, EVQ_BASE_LO),
    RL_REG(C3_REG_, EVQ_BASE_HI),
    RL_REG(C3_REG_, EVQ_SIZE),
    RL_REG(C3_REG_, RXT_BASE_LO),
    RL_REG(C3_REG_, RXT_BASE_HI),
    RL_REG(C3_REG_, RXT_SLOTS),
    RL_REG(C3_REG_, REQ_TAIL),
    RL_REG(C3_REG_, REQ_HEAD),
    RL_REG(C3_REG_, EVQ_TAIL),
    RL_REG(C3_REG_, EVQ_HEAD),
    RL_REG(C3_REG_, CACHE_ADDR_LO),
    RL_REG(C3_REG_, CACHE_ADDR_HI),
    RL_REG(C3_REG_, CACHE_LEN),
    RL_REG(C3_REG_, CACHE_OP),
    RL_REG(C3_REG_, NOW_LO),
    RL_REG(C3_REG_, NOW_HI),
    RL_REG(C3_REG_, TX_PACKETS),
    RL_REG(C3_REG_, RX_PACKETS),
    RL_REG(C3_REG_, REQ_ERRORS),
    RL_REG(C3_REG_, STALLS),
    RL_REG(C3_REG_, CACHE_MISSES),
    RL_REG(C3_REG_, RDMA_ERRORS),
    RL_REG(C3_REG_, CACHE_OPS),
    { 0, NULL }
};

static void c3_refused(C3State *s, hwaddr addr, unsigned size, bool write, const char *why)
{
    rl_board_guest_error(s->rl, "%u-byte %s at offset 0x%" HWADDR_PRIx " refused: %s", size,
                   write ? "write" : "read", addr, why);
}

/* A refused control write: logged, and its C3_ERR_* in C3_REG_ERROR. */
static void c3_ctrl_error(C3State *s, uint32_t err, const char *what)
{
    rl_board_guest_error(s->rl, "%s refused (C3_ERR %u)", what, err);
    s->error = err;
}

/* ---- enable, disable ----------------------------------------------------------- */

static bool c3_ring_ok(C3State *s, uint32_t lo, uint32_t hi, uint32_t size, uint32_t align)
{
    uint64_t base = c3_u64(lo, hi);

    return size >= 2 && size <= C3_RING_MAX && is_power_of_2(size) && base % align == 0 &&
           c3_ram_ok(s, base, (uint64_t)size * 32, true);
}

/* The rings and the receive table are usable (checked when ENABLE is set). */
static bool c3_config_ok(C3State *s)
{
    uint64_t rxt = c3_u64(s->rxt_base_lo, s->rxt_base_hi);

    return c3_ring_ok(s, s->req_base_lo, s->req_base_hi, s->req_size, C3_REQ_ALIGN) &&
           c3_ring_ok(s, s->evq_base_lo, s->evq_base_hi, s->evq_size, C3_EVQ_ALIGN) &&
           rxt % 8 == 0 && s->rxt_slots >= 1 && s->rxt_slots <= C3_MAX_SLOTS &&
           c3_ram_ok(s, rxt, (uint64_t)s->rl->nodes * s->rxt_slots * 8, false);
}

static void c3_enable(C3State *s)
{
    if (!c3_config_ok(s)) {
        c3_ctrl_error(s, C3_ERR_CONFIG, "ENABLE with a bad request ring, event ring or "
                      "receive table (size, alignment, or not in memory)");
        return;
    }
    s->ctrl = C3_CTRL_ENABLE;
    s->req_head = s->req_tail = s->evq_head = s->evq_tail = 0;
    memset(s->rx_next_slot, 0, sizeof(s->rx_next_slot));
    s->evq_wait_n = s->evq_reserved = 0;
    s->stalled = s->rx_stalled = false;
    /* on the network start-us later: the packets that came meanwhile wait in the FIFO */
    s->ready_at = c3_now() + s->rl->start_us * 1000;
    rl_sched_add(&s->rl->sched, s->ready_at, RL_EV_CLASS_INTERNAL, 0, C3_EVK_READY, 0,
                 s->enable_gen, NULL);
    trace_retrolink_c3_enable(s->rl->node, true, s->ready_at);
}

static bool c3_keep_not_ready(void *opaque, RlEvent *ev)
{
    return ev->kind != C3_EVK_READY;
}

/* Off the network: requests stop at once; packets that arrived stay in the FIFO. */
void c3_disable(C3State *s)
{
    c3_tx_stop(s);
    c3_rx_stop(s);
    rl_sched_filter(&s->rl->sched, c3_keep_not_ready, s);
    s->enable_gen++;
    s->ctrl = 0;
    s->evq_wait_n = s->evq_reserved = 0;
    s->stalled = false;
    trace_retrolink_c3_enable(s->rl->node, false, c3_now());
}

static void c3_ctrl_write(C3State *s, uint32_t val)
{
    if (val & ~(C3_CTRL_ENABLE | C3_CTRL_RESET)) {
        rl_board_guest_error(s->rl, "CTRL 0x%x has bits of no meaning: ignored", val);
    }
    if (val & C3_CTRL_RESET) {
        c3_board_reset(s);
        return;
    }
    if ((val & C3_CTRL_ENABLE) && !c3_enabled(s)) {
        c3_enable(s);
    } else if (!(val & C3_CTRL_ENABLE) && c3_enabled(s)) {
        c3_disable(s);
    }
}

/* ---- the request ring's doorbell ------------------------------------------------ */

static void c3_req_tail_write(C3State *s, uint32_t val, uint64_t bus_end)
{
    if (!c3_enabled(s)) {
        c3_ctrl_error(s, C3_ERR_CONFIG, "REQ_TAIL write while the interface is not enabled");
        return;
    }
    /* it may only move forward, and never past a full ring */
    if (val - s->req_head < s->req_tail - s->req_head || val - s->req_head > s->req_size) {
        rl_board_guest_error(s->rl, "REQ_TAIL %u: the interface has taken %u and the ring holds %u "
                       "(was %u)", val, s->req_head, s->req_size, s->req_tail);
        c3_ctrl_error(s, C3_ERR_LENGTH, "REQ_TAIL write");
        return;
    }
    s->req_tail = val;
    c3_tx_kick(s, bus_end);
}

/* ---- cache control ---------------------------------------------------------------- */

bool c3_ledger_covers(C3State *s, uint64_t addr, uint32_t len)
{
    for (uint32_t i = 0; i < s->ledger_count; i++) {
        if (addr >= s->ledger_addr[i] &&
            addr - s->ledger_addr[i] + len <= s->ledger_len[i]) {
            return true;
        }
    }
    return false;
}

/*
 * The VR4400's CACHE instructions over the range, as the driver would run them: the
 * emulated CPU is coherent, so only their time is modelled (cenju3-regs.h).
 */
static void c3_cache_op(C3State *s, uint32_t op)
{
    uint64_t addr = c3_u64(s->cache_addr_lo, s->cache_addr_hi);
    uint32_t len = s->cache_len;

    if (op != C3_CACHE_FLUSH && op != C3_CACHE_INVAL) {
        c3_ctrl_error(s, C3_ERR_OP, "CACHE_OP with an unknown operation");
        return;
    }
    if (len == 0 || len > C3_CACHE_LEN_MAX) {
        c3_ctrl_error(s, C3_ERR_LENGTH, "CACHE_OP with CACHE_LEN 0 or above 16 MiB");
        return;
    }
    if (!c3_cpu_ram_ok(addr, len)) {
        c3_ctrl_error(s, C3_ERR_ADDR, "CACHE_OP on a range outside memory");
        return;
    }
    uint64_t lines = (addr + len - 1) / C3_CACHE_LINE - addr / C3_CACHE_LINE + 1;
    uint64_t end = rl_bus_hold(&s->bus, s->cache_op_ns + lines * s->cache_line_ns);

    if (op == C3_CACHE_FLUSH) {
        s->ledger_addr[s->ledger_next] = addr;
        s->ledger_len[s->ledger_next] = len;
        s->ledger_next = (s->ledger_next + 1) % C3_FLUSH_LEDGER;
        s->ledger_count = MIN(s->ledger_count + 1, C3_FLUSH_LEDGER);
    }
    s->cache_ops++;
    trace_retrolink_c3_cache_op(s->rl->node, op, addr, len, lines, end);
}

/* ---- the accesses ------------------------------------------------------------------- */

static uint64_t c3_read(void *opaque, hwaddr addr, unsigned size)
{
    C3State *s = opaque;
    uint32_t val;

    rl_bus_hold(&s->bus, s->reg_access_ns);
    if (size != 4 || (addr & 3)) {
        c3_refused(s, addr, size, false, "the registers are 32-bit");
        return 0;
    }
    switch (addr) {
    case C3_REG_ID: val = C3_ID_VALUE; break;
    case C3_REG_VERSION: val = C3_VERSION; break;
    case C3_REG_NODE_ID: val = s->rl->node; break;
    case C3_REG_NUM_NODES: val = s->rl->nodes; break;
    case C3_REG_CTRL: val = s->ctrl; break;
    case C3_REG_STATUS:
        val = (c3_enabled(s) ? C3_STATUS_ENABLED : 0) |
              (s->stalled ? C3_STATUS_RX_STALLED : 0) |
              (c3_tx_idle(s) ? C3_STATUS_TX_IDLE : 0);
        break;
    case C3_REG_IRQ_STATUS: val = s->rl->irq_status; break;
    case C3_REG_IRQ_MASK: val = s->rl->irq_mask; break;
    case C3_REG_ERROR: val = s->error; break;
    case C3_REG_REQ_BASE_LO: val = s->req_base_lo; break;
    case C3_REG_REQ_BASE_HI: val = s->req_base_hi; break;
    case C3_REG_REQ_SIZE: val = s->req_size; break;
    case C3_REG_EVQ_BASE_LO: val = s->evq_base_lo; break;
    case C3_REG_EVQ_BASE_HI: val = s->evq_base_hi; break;
    case C3_REG_EVQ_SIZE: val = s->evq_size; break;
    case C3_REG_RXT_BASE_LO: val = s->rxt_base_lo; break;
    case C3_REG_RXT_BASE_HI: val = s->rxt_base_hi; break;
    case C3_REG_RXT_SLOTS: val = s->rxt_slots; break;
    case C3_REG_REQ_TAIL: val = s->req_tail; break;
    case C3_REG_REQ_HEAD: val = s->req_head; break;
    case C3_REG_EVQ_TAIL: val = s->evq_tail; break;
    case C3_REG_EVQ_HEAD: val = s->evq_head; break;
    case C3_REG_CACHE_ADDR_LO: val = s->cache_addr_lo; break;
    case C3_REG_CACHE_ADDR_HI: val = s->cache_addr_hi; break;
    case C3_REG_CACHE_LEN: val = s->cache_len; break;
    case C3_REG_NOW_LO: {
        /* the time the access reached the interface; HI is latched with it */
        uint64_t now = c3_now();
        s->now_hi = now >> 32;
        val = now;
        break;
    }
    case C3_REG_NOW_HI: val = s->now_hi; break;
    case C3_REG_TX_PACKETS: val = s->tx_packets; break;
    case C3_REG_RX_PACKETS: val = s->rx_packets; break;
    case C3_REG_REQ_ERRORS: val = s->req_errors; break;
    case C3_REG_STALLS: val = s->stalls; break;
    case C3_REG_CACHE_MISSES: val = s->cache_misses; break;
    case C3_REG_RDMA_ERRORS: val = s->rdma_errors; break;
    case C3_REG_CACHE_OPS: val = s->cache_ops; break;
    default:
        c3_refused(s, addr, size, false, "write-only or unknown register");
        return 0;
    }
    trace_retrolink_c3_reg_read(s->rl->node, rl_reg_name(c3_reg_names, addr), addr, val);
    return val;
}

/* A configuration register: written only while the interface is disabled. */
static uint32_t *c3_config_reg(C3State *s, hwaddr addr)
{
    switch (addr) {
    case C3_REG_REQ_BASE_LO: return &s->req_base_lo;
    case C3_REG_REQ_BASE_HI: return &s->req_base_hi;
    case C3_REG_REQ_SIZE: return &s->req_size;
    case C3_REG_EVQ_BASE_LO: return &s->evq_base_lo;
    case C3_REG_EVQ_BASE_HI: return &s->evq_base_hi;
    case C3_REG_EVQ_SIZE: return &s->evq_size;
    case C3_REG_RXT_BASE_LO: return &s->rxt_base_lo;
    case C3_REG_RXT_BASE_HI: return &s->rxt_base_hi;
    case C3_REG_RXT_SLOTS: return &s->rxt_slots;
    default: return NULL;
    }
}

static void c3_write(void *opaque, hwaddr addr, uint64_t val64, unsigned size)
{
    C3State *s = opaque;
    uint32_t val = val64;
    uint64_t bus_end = rl_bus_hold(&s->bus, s->reg_access_ns);
    uint32_t *cfg;

    if (size != 4 || (addr & 3)) {
        c3_refused(s, addr, size, true, "the registers are 32-bit");
        return;
    }
    trace_retrolink_c3_reg_write(s->rl->node, rl_reg_name(c3_reg_names, addr), addr, val);
    cfg = c3_config_reg(s, addr);
    if (cfg) {
        if (c3_enabled(s)) {
            c3_ctrl_error(s, C3_ERR_ENABLED, "configuration write while enabled");
            return;
        }
        *cfg = val;
        return;
    }
    switch (addr) {
    case C3_REG_CTRL:
        c3_ctrl_write(s, val);
        break;
    case C3_REG_IRQ_STATUS:
        rl_board_ack(s->rl, val);
        break;
    case C3_REG_IRQ_MASK:
        if (val & ~C3_IRQ_ALL) {
            rl_board_guest_error(s->rl, "IRQ_MASK 0x%x has bits of no cause: ignored", val);
        }
        rl_board_set_mask(s->rl, val);
        break;
    case C3_REG_REQ_TAIL:
        c3_req_tail_write(s, val, bus_end);
        break;
    case C3_REG_EVQ_TAIL:
        c3_evq_tail_write(s, val, bus_end);
        break;
    case C3_REG_CACHE_ADDR_LO: s->cache_addr_lo = val; break;
    case C3_REG_CACHE_ADDR_HI: s->cache_addr_hi = val; break;
    case C3_REG_CACHE_LEN: s->cache_len = val; break;
    case C3_REG_CACHE_OP:
        c3_cache_op(s, val);
        break;
    default:
        c3_refused(s, addr, size, true, "read-only or unknown register");
        break;
    }
}

/*
 * Every width and alignment reaches the handlers whole (with a narrower .valid the
 * memory core would split a wide access into pieces that each have side effects, and
 * log refusals as invalid_mem, not guest_errors); the handlers enforce cenju3-regs.h.
 */
const MemoryRegionOps c3_bar_ops = {
    .read = c3_read,
    .write = c3_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};
