/*
 * libsx: messages with delivery confirmation over the SX board (/dev/sxN).
 * Reference: docs/boards/libsx.md. Every call returns 0 (or a count) on success and
 * -1 with errno set on failure.
 */
#ifndef SX_H
#define SX_H

#include <stddef.h>
#include <stdint.h>

#include "retrolink/uapi/sx.h"   /* SX_MAX_MSG: the longest message */

typedef struct sx sx_t;
typedef uint64_t sx_handle_t;

sx_t *sx_open(const char *path);            /* NULL: "/dev/sx0" */
int sx_close(sx_t *sx);
int sx_fd(const sx_t *sx);                  /* for poll/select: POLLIN, POLLOUT */
int sx_node_id(const sx_t *sx);
int sx_num_nodes(const sx_t *sx);
int sx_tx_slots(const sx_t *sx);            /* sends that can be unfinished at once */
int sx_peer_up(sx_t *sx, int node);         /* 1 up, 0 down, -1 error */

/* Send len bytes to node dst; returns when dst has confirmed delivery. */
int sx_send(sx_t *sx, int dst, const void *buf, size_t len, uint32_t tag);
/* Start a send; the buffer may be reused at once. Complete it with sx_wait/sx_test. */
int sx_send_async(sx_t *sx, int dst, const void *buf, size_t len, uint32_t tag,
                  sx_handle_t *handle);
int sx_wait(sx_t *sx, sx_handle_t handle);  /* 0 delivered; -1 errno = why not */
int sx_test(sx_t *sx, sx_handle_t handle);  /* 1 delivered, 0 still going, -1 failed */

/* Receive one message; returns its length (it may exceed len: truncated). */
ssize_t sx_recv(sx_t *sx, void *buf, size_t len, int *src, uint32_t *tag);
ssize_t sx_recv_nb(sx_t *sx, void *buf, size_t len, int *src, uint32_t *tag);

/* CLOCK_MONOTONIC ns at which the last received message reached this node's memory. */
int64_t sx_last_rx_time_ns(const sx_t *sx);

/* The message window (descriptors and buffers), mapped read-only. */
const volatile void *sx_map_window(sx_t *sx, size_t *size);

#endif
