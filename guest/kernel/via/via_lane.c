// SPDX-License-Identifier: GPL-2.0
/*
 * VIA kernel agent: LAN emulation over VI 0 in datagram mode (not yet: the interface
 * is not registered, VI 0 stays the kernel's).
 */
#include "via.h"

int via_lane_probe(struct via_dev *via)
{
	return 0;
}

void via_lane_remove(struct via_dev *via)
{
}

void via_lane_irq(struct via_dev *via, u32 cause)
{
}
