/*
 * cpci_map: what the CompactPCI backplane's programs (cpci_pingpong, cpci_test) do
 * alike over /dev/cpci0: open it, ask which node this is, map a peer's user area
 * through the window and this node's own, and ring and wait for user doorbells.
 */
#ifndef CPCI_MAP_H
#define CPCI_MAP_H

#include <stdint.h>

#include "retrolink/uapi/cpci.h"

#define CPCI_DEV        "/dev/cpci0"

struct cpci_map {
    int fd;
    struct cpci_info info;
    volatile uint32_t *win;     /* the peer's user area (every access a transaction) */
    volatile uint32_t *local;   /* this node's own user area */
};

/* Open /dev/cpci0 and CPCI_IOC_INFO; then, for peer >= 0, map its user area and ours:
 * 0 or a message. */
const char *cpci_map_open(struct cpci_map *m, int peer);
void cpci_map_close(struct cpci_map *m);
/* CPCI_IOC_RING; CPCI_IOC_WAIT for (src, bit), taking and ignoring others until then
 * (timeout_ms 0: no limit). 0 or -1 with errno. */
int cpci_map_ring(struct cpci_map *m, unsigned node, unsigned bit);
int cpci_map_wait(struct cpci_map *m, unsigned src, unsigned bit, unsigned timeout_ms);
/* CLOCK_MONOTONIC in ns: the guest's modelled time */
int64_t cpci_now_ns(void);

#endif
