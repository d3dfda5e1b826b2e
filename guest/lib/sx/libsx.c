/* libsx: see sx.h and docs/boards/libsx.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sx.h"
#include "retrolink/uapi/sx.h"

#define SX_WINDOW_BYTES 0x20000

struct sx {
    int fd;
    struct sx_info info;
    void *window;
    int64_t last_rx_time_ns;
};

sx_t *sx_open(const char *path)
{
    sx_t *sx = calloc(1, sizeof(*sx));
    if (!sx) {
        return NULL;
    }
    sx->fd = open(path ? path : "/dev/sx0", O_RDWR | O_CLOEXEC);
    if (sx->fd < 0 || ioctl(sx->fd, SX_IOC_INFO, &sx->info) < 0) {
        int e = errno;
        if (sx->fd >= 0) {
            close(sx->fd);
        }
        free(sx);
        errno = e;
        return NULL;
    }
    return sx;
}

int sx_close(sx_t *sx)
{
    if (!sx) {
        errno = EINVAL;
        return -1;
    }
    if (sx->window) {
        munmap(sx->window, SX_WINDOW_BYTES);
    }
    int r = close(sx->fd);
    free(sx);
    return r;
}

int sx_fd(const sx_t *sx) { return sx->fd; }
int64_t sx_last_rx_time_ns(const sx_t *sx) { return sx->last_rx_time_ns; }
int sx_node_id(const sx_t *sx) { return sx->info.node; }
int sx_num_nodes(const sx_t *sx) { return sx->info.nodes; }
int sx_tx_slots(const sx_t *sx) { return sx->info.tx_slots; }

int sx_peer_up(sx_t *sx, int node)
{
    if (ioctl(sx->fd, SX_IOC_INFO, &sx->info) < 0) {
        return -1;
    }
    if (node < 0 || node >= (int)sx->info.nodes) {
        errno = EINVAL;
        return -1;
    }
    return node < 32 ? (sx->info.peers_up >> node) & 1 : 1;
}

static int do_send(sx_t *sx, unsigned long cmd, int dst, const void *buf, size_t len,
                   uint32_t tag, sx_handle_t *handle)
{
    if (dst < 0) {
        errno = EINVAL;
        return -1;
    }
    if (len > SX_MAX_MSG) {
        errno = EMSGSIZE;
        return -1;
    }
    struct sx_send_req req = { .dst = dst, .len = len, .tag = tag,
                               .buf = (uintptr_t)buf };
    if (ioctl(sx->fd, cmd, &req) < 0) {
        return -1;
    }
    if (handle) {
        *handle = req.ticket;
    }
    return 0;
}

int sx_send(sx_t *sx, int dst, const void *buf, size_t len, uint32_t tag)
{
    return do_send(sx, SX_IOC_SEND, dst, buf, len, tag, NULL);
}

int sx_send_async(sx_t *sx, int dst, const void *buf, size_t len, uint32_t tag,
                  sx_handle_t *handle)
{
    return do_send(sx, SX_IOC_SEND_ASYNC, dst, buf, len, tag, handle);
}

static int wait_ticket(sx_t *sx, sx_handle_t h, uint32_t flags)
{
    struct sx_wait_req req = { .ticket = h, .flags = flags };
    if (ioctl(sx->fd, SX_IOC_WAIT, &req) < 0) {
        return -1;
    }
    if (req.status) {
        errno = req.status;
        return -1;
    }
    return 0;
}

int sx_wait(sx_t *sx, sx_handle_t handle)
{
    return wait_ticket(sx, handle, 0);
}

int sx_test(sx_t *sx, sx_handle_t handle)
{
    if (wait_ticket(sx, handle, SX_WAIT_NONBLOCK) == 0) {
        return 1;
    }
    return errno == EAGAIN ? 0 : -1;
}

static ssize_t do_recv(sx_t *sx, void *buf, size_t len, int *src, uint32_t *tag, uint32_t flags)
{
    struct sx_recv_req req = { .buf = (uintptr_t)buf,
                               .len = len > SX_MAX_MSG ? SX_MAX_MSG : len,
                               .flags = flags };
    if (ioctl(sx->fd, SX_IOC_RECV, &req) < 0) {
        return -1;
    }
    if (src) {
        *src = req.src;
    }
    if (tag) {
        *tag = req.tag;
    }
    sx->last_rx_time_ns = req.rx_time_ns;
    return req.len;
}

ssize_t sx_recv(sx_t *sx, void *buf, size_t len, int *src, uint32_t *tag)
{
    return do_recv(sx, buf, len, src, tag, 0);
}

ssize_t sx_recv_nb(sx_t *sx, void *buf, size_t len, int *src, uint32_t *tag)
{
    return do_recv(sx, buf, len, src, tag, SX_RECV_NONBLOCK);
}

const volatile void *sx_map_window(sx_t *sx, size_t *size)
{
    if (!sx->window) {
        void *p = mmap(NULL, SX_WINDOW_BYTES, PROT_READ, MAP_SHARED, sx->fd, 0);
        if (p == MAP_FAILED) {
            return NULL;
        }
        sx->window = p;
    }
    if (size) {
        *size = SX_WINDOW_BYTES;
    }
    return sx->window;
}
