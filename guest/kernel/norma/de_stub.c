// SPDX-License-Identifier: GPL-2.0
/*
 * norma.ko: a stand-in for the NORMA IPC/DE transport (norma.h) until de_*.c lands:
 * one node and no interface, so every port is local. Sends to and lookups on other
 * nodes fail with -ENODEV at once; the clock is the kernel's (under icount it is the
 * virtual clock too).
 */
#include <linux/ktime.h>
#include <linux/module.h>

#include "norma.h"

bool norma_piggyback_accept;
bool norma_page_sender;

int norma_de_init(void)
{
	return 0;
}

void norma_de_exit(void)
{
}

u32 norma_de_node(void)
{
	return 0;
}

u32 norma_de_nodes(void)
{
	return 1;
}

int norma_de_send(struct norma_tx *tx)
{
	return -ENODEV;
}

void norma_de_cancel(struct norma_tx *tx)
{
}

void norma_de_accepted(u16 node, struct norma_uid uid, u32 seqno, bool dead)
{
}

int norma_de_lookup(u16 node, const char *name,
		    void (*cb)(void *ctx, int status, struct norma_uid uid), void *ctx)
{
	return -ENODEV;
}

u64 norma_de_now(void)
{
	return ktime_get_ns();
}
