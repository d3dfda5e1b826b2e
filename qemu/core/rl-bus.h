/*
 * retrolink host bus: what programmed I/O costs in the guest's virtual time.
 *
 * A stock MMIO access costs one guest instruction. A board on a slow bus (the
 * PUMA-III adapter on a 20 MHz SBus: about 20 MB/s of PIO) makes every access
 * cost its bytes at the bus's PIO rate instead: rl_bus_pio() books the transfer
 * on the bus (after any transfer still under way) and holds the vCPU that made
 * the access halted until the transfer ends, from a QEMU_CLOCK_VIRTUAL timer
 * (qemu/patches/0006: CPUState.io_stall keeps it halted, and idle, so the icount
 * idle warp moves virtual time straight to the end of the transfer).
 *
 * Without a vCPU in the access (qtest), nothing is held, but the bus still books
 * the transfer: the next access starts after it, and a board can time what the
 * access causes (a PIO send's frame) from the transfer's end.
 */
#ifndef RL_BUS_H
#define RL_BUS_H

#include "qemu/timer.h"
#include "migration/vmstate.h"

typedef struct RlBus {
    uint64_t pio_rate;          /* bytes per second */
    uint64_t free_at;           /* the last booked transfer ends (virtual ns) */
    QEMUTimer *stall_timer;     /* releases the held vCPU */
    CPUState *stalled;          /* the vCPU held, or NULL */
} RlBus;

void rl_bus_init(RlBus *b, uint64_t pio_rate);
/* Let a held vCPU go at once and stop the timer (unplug, reset). */
void rl_bus_release(RlBus *b);
void rl_bus_destroy(RlBus *b);

/*
 * A PIO access of 'bytes' made now by the current vCPU (if any): book it on the
 * bus and hold that vCPU until it ends. Returns the end of the transfer.
 */
uint64_t rl_bus_pio(RlBus *b, unsigned bytes);

/*
 * The same for an access (or an operation it starts) that costs a fixed 'ns' rather
 * than bytes at a rate: book ns on the bus and hold the current vCPU until it ends.
 */
uint64_t rl_bus_hold(RlBus *b, uint64_t ns);

/*
 * The bus is busy, and the current vCPU held, until 'end' (at least until the transfer
 * booked last ends): a non-posted access whose data came back at a known time.
 */
uint64_t rl_bus_hold_until(RlBus *b, uint64_t end);

/* A vCPU is held now (a board refuses to be saved then). */
bool rl_bus_stalling(const RlBus *b);

/* Saves free_at; a stall in progress is the owner's pre_save to refuse. */
extern const VMStateDescription vmstate_rl_bus;
#define VMSTATE_RL_BUS(_field, _state) \
    VMSTATE_STRUCT(_field, _state, 0, vmstate_rl_bus, RlBus)

#endif /* RL_BUS_H */
