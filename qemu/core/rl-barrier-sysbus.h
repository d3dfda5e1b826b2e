/*
 * retrolink boot barrier on a system bus (rl-barrier-sysbus.c).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RL_BARRIER_SYSBUS_H
#define RL_BARRIER_SYSBUS_H

#define TYPE_RL_BARRIER_SYSBUS "retrolink-barrier-sysbus"

#endif
