/*
 * retrolink boot barrier: the device core, whichever bus the guest reaches it on
 * (rl-barrier.c: an ISA port on the PC; rl-sun4m.c: the SPARCstation 5's system bus).
 * The registers are bytes: STATUS (write ARRIVE, read WAITING or PASSED), then the
 * microseconds left to the barrier's time, little-endian, latched when the first is
 * read (rl-barrier-core.c has the protocol).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_BARRIER_H
#define RL_BARRIER_H

#include "exec/hwaddr.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "hw/retrolink/core/rl-clock-hold.h"

#define RL_BARRIER_STATUS       0       /* register offsets */
#define RL_BARRIER_LEFT_US      1       /* .. 4: microseconds to T */
#define RL_BARRIER_REGS         5

typedef struct RlBarrier {
    bool stop_at_arrival;   /* without a fabric: stop there for a snapshot */
    RlClockHold hold;       /* the clock while the VM stops */
    VMChangeStateEntry *vm_state;

    /* VMState (VMSTATE_RL_BARRIER) */
    bool arrived;
    bool time_known;
    uint64_t time;          /* the barrier's time T, once known */
    uint32_t left_us;       /* latched by a read of RL_BARRIER_LEFT_US */
} RlBarrier;

void rl_barrier_init(RlBarrier *b);
uint64_t rl_barrier_read(RlBarrier *b, hwaddr addr);
void rl_barrier_write(RlBarrier *b, hwaddr addr, uint64_t val);
int rl_barrier_post_load(RlBarrier *b);

/* the state's fields, in the order every front end saves them */
#define VMSTATE_RL_BARRIER(_f, _s)                  \
    VMSTATE_BOOL(_f.arrived, _s),                   \
    VMSTATE_BOOL(_f.time_known, _s),                \
    VMSTATE_UINT64(_f.time, _s),                    \
    VMSTATE_UINT32(_f.left_us, _s)

#endif
