/*
 * fcraw: the PUMA-III raw ("own") protocol: the adapter's user channel mapped into
 * the process, DMA sends straight from buffers in the DMA area, PIO sends, and the
 * receive ring read in place. Reference: docs/boards/fm.md ("The raw protocol").
 *
 * The library adds no header and no flow control: a frame that finds the receiver's
 * ring full is dropped by the adapter (and counted, fcraw_rx_drops). Every register
 * access crosses the SBus and costs ~200 ns of modelled time; reads of the ring are
 * host memory and free, so the library touches registers only when it must.
 *
 * Every call returns 0 (or a count) on success and -1 with errno set on failure; a
 * send the adapter refused also leaves its FC_ERR_* in fcraw_tx_status().
 */
#ifndef FCRAW_H
#define FCRAW_H

#include <stddef.h>
#include <stdint.h>

typedef struct fcraw fcraw_t;

/* One received frame, as fcraw_poll shows it: the payload stays in the ring. */
struct fcraw_frame {
    const void *data;       /* len bytes, valid until fcraw_consume */
    uint32_t len;           /* payload bytes of this frame */
    uint32_t src;           /* the sending port */
    uint32_t tag;           /* the send's tag */
    uint32_t offset;        /* this frame's offset in its send */
    uint32_t msg_len;       /* the whole send's length */
};

fcraw_t *fcraw_open(const char *path);          /* NULL: "/dev/fc0" */
int fcraw_close(fcraw_t *raw);

int fcraw_node_id(const fcraw_t *raw);
int fcraw_num_nodes(const fcraw_t *raw);
int fcraw_rx_slots(const fcraw_t *raw);         /* slots in the receive ring */
int fcraw_max_payload(const fcraw_t *raw);      /* bytes a DMA send puts in a frame */
int fcraw_pio_max(const fcraw_t *raw);          /* the most one PIO send carries */
int fcraw_peer_up(fcraw_t *raw, int node);      /* 1 reachable, 0 not, -1 error */

/* DMA memory: allocated by the driver, mapped read-write into the process. */
void *fcraw_alloc(fcraw_t *raw, size_t size);   /* page-aligned; NULL with errno */
int fcraw_free(fcraw_t *raw, void *buf);
/* The DVMA address of [p, p + len) if it lies inside one fcraw_alloc buffer. */
int fcraw_dvma(const fcraw_t *raw, const void *p, size_t len, uint32_t *dvma);

/*
 * DMA sends. fcraw_dma_start waits (busy, bounded) until the previous DMA no longer
 * reads memory, starts this one and returns; fcraw_dma_wait busy-waits on
 * FC_U_TX_BUSY until the data has been read (the buffer may then be reused).
 * fcraw_send_dma is both. buf must lie inside one fcraw_alloc buffer (else EFAULT,
 * and the adapter is not touched). fcraw_dma_start_dvma names the DVMA address
 * itself and leaves the check to the adapter: outside the channel's DMA memory it
 * fails with EFAULT and fcraw_tx_status() == FC_ERR_WINDOW.
 */
int fcraw_dma_start(fcraw_t *raw, const void *buf, size_t len, int dest, uint32_t tag);
int fcraw_dma_start_dvma(fcraw_t *raw, uint32_t dvma, size_t len, int dest, uint32_t tag);
int fcraw_dma_busy(fcraw_t *raw);               /* 1 reading memory, 0 idle (one read) */
int fcraw_dma_wait(fcraw_t *raw);
int fcraw_send_dma(fcraw_t *raw, const void *buf, size_t len, int dest, uint32_t tag);

/* PIO send of one frame (0 .. fcraw_pio_max bytes from any memory). */
int fcraw_send_pio(fcraw_t *raw, const void *buf, size_t len, int dest, uint32_t tag);

/* FC_ERR_* of the last send this library started (FC_ERR_NONE if accepted). */
int fcraw_tx_status(const fcraw_t *raw);

/*
 * Receiving: fcraw_poll shows the frame at the head of the ring (1), or says there is
 * none (0); it does not move. fcraw_consume moves past it; consumed slots go back to
 * the adapter every 'batch' frames (fcraw_set_release_batch; 0: only by
 * fcraw_release), one register write for the lot.
 */
int fcraw_poll(fcraw_t *raw, struct fcraw_frame *frame);
int fcraw_consume(fcraw_t *raw);
int fcraw_release(fcraw_t *raw);                /* give back every consumed slot now */
int fcraw_set_release_batch(fcraw_t *raw, unsigned batch);
int fcraw_unreleased(const fcraw_t *raw);       /* consumed slots not yet given back */
long fcraw_rx_drops(fcraw_t *raw);              /* frames the adapter dropped: ring full */

/* Bound on every busy-wait (DMA engine, transmit queue), in ns of CLOCK_MONOTONIC;
 * a wait that runs out fails with ETIMEDOUT. Default 10 s. */
int fcraw_set_timeout(fcraw_t *raw, int64_t ns);

/* One 32-bit register of the channel page (an FC_U_* offset below FC_U_PIO_BUF). */
int fcraw_reg_read(fcraw_t *raw, unsigned offset, uint32_t *value);

#endif
