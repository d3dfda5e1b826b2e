/*
 * retrolink: hold a node's virtual clock still while its VM stops itself.
 *
 * A device that stops the VM from the vCPU (vm_stop at an instruction boundary:
 * the boot barrier, for a snapshot) must keep the clock where it is until the VM
 * has stopped. Under icount, the idle warp would move the clock on to the next
 * timer deadline in between. An expired timer keeps the nearest deadline at
 * "now", which keeps the warp away; it is on a timer list nobody runs, since a
 * timer re-armed from its own callback would run again at once. Start the hold
 * just before vm_stop; end it when the VM runs again (a vm-state handler).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_CLOCK_HOLD_H
#define RL_CLOCK_HOLD_H

#include "qemu/timer.h"

typedef struct RlClockHold {
    QEMUTimerListGroup tlg;
    QEMUTimer *timer;
} RlClockHold;

void rl_clock_hold_init(RlClockHold *h);
void rl_clock_hold_destroy(RlClockHold *h);
/* From now until rl_clock_hold_end, the virtual clock stands still unless the vCPU runs */
void rl_clock_hold_start(RlClockHold *h);
void rl_clock_hold_end(RlClockHold *h);

#endif
