/*
 * The retrolink netdev when the device set leaves it out (CONFIG_RETROLINK_NET unset):
 * net/net.c still names net_init_retrolink (qemu/patches/0002-...).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "net/net.h"
#include "net/clients.h"

int net_init_retrolink(const Netdev *netdev, const char *name, NetClientState *peer,
                       Error **errp)
{
    error_setg(errp, "the retrolink netdev is not in this QEMU's device set "
               "(CONFIG_RETROLINK_NET)");
    return -1;
}
