/* cpci_map: /dev/cpci0's opening, mappings and doorbells (cpci_map.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cpci_map.h"

const char *cpci_map_open(struct cpci_map *m, int peer)
{
    void *p;

    memset(m, 0, sizeof(*m));
    m->fd = open(CPCI_DEV, O_RDWR);
    if (m->fd < 0)
        return "open " CPCI_DEV;
    if (ioctl(m->fd, CPCI_IOC_INFO, &m->info))
        return "CPCI_IOC_INFO";
    if (peer < 0)
        return NULL;
    p = mmap(NULL, CPCI_USER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd,
             CPCI_MMAP_WINDOW(peer));
    if (p == MAP_FAILED)
        return "mmap of the peer's window";
    m->win = p;
    p = mmap(NULL, CPCI_USER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, CPCI_MMAP_LOCAL);
    if (p == MAP_FAILED)
        return "mmap of the local user area";
    m->local = p;
    return NULL;
}

void cpci_map_close(struct cpci_map *m)
{
    if (m->win)
        munmap((void *)m->win, CPCI_USER_SIZE);
    if (m->local)
        munmap((void *)m->local, CPCI_USER_SIZE);
    if (m->fd >= 0)
        close(m->fd);
}

int cpci_map_ring(struct cpci_map *m, unsigned node, unsigned bit)
{
    return ioctl(m->fd, CPCI_IOC_RING, &(struct cpci_ring){ .node = node, .bit = bit });
}

int cpci_map_wait(struct cpci_map *m, unsigned src, unsigned bit, unsigned timeout_ms)
{
    struct cpci_wait w;

    do {
        w = (struct cpci_wait){ .timeout_ms = timeout_ms };
        if (ioctl(m->fd, CPCI_IOC_WAIT, &w))
            return -1;
    } while (w.src != src || w.bit != bit);
    return 0;
}

int64_t cpci_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
