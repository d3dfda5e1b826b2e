/*
 * Fast Messages (FM 2.x API, with FM 1.x short forms) over the PUMA-III Fibre
 * Channel adapter's user channel. Reference: docs/boards/fm.md.
 *
 * Messages go to a handler at the receiver, which runs inside FM_extract as soon as
 * the first frame of the message is there and takes the data with FM_receive.
 * Delivery is reliable and in order per sender; a receiver that does not extract
 * makes its senders wait (credits), it never drops.
 *
 * Three ways to send:
 *  - PIO (the Myrinet FM baseline): the CPU stores the data into the adapter;
 *  - zero-copy DMA: from a buffer of FM_alloc_buffer (in the DMA area, mapped into
 *    the process); the send returns when the adapter has read the buffer;
 *  - split (PUMA-III's proposal): FM_send_request starts a DMA send and returns;
 *    FM_send_complete / FM_send_wait say when the buffer may be reused.
 * FM_set_send_mode chooses between PIO and DMA for FM_send and FM_send_piece.
 *
 * Every call returns FM_OK (0), a count, or a negative FM_E* code below, also kept in
 * FM_errno; FM_begin_message and FM_alloc_buffer return NULL and set FM_errno.
 * FM_strerror names a code. The library is not thread-safe: one thread uses it.
 */
#ifndef FM_H
#define FM_H

#include <stddef.h>
#include <stdint.h>

#define FM_OK           0
#define FM_EINIT        (-1)    /* FM_initialize not called, or called twice */
#define FM_EDEVICE      (-2)    /* the adapter could not be opened or mapped (errno: why) */
#define FM_EINVAL       (-3)    /* a bad argument: NULL pointer, unknown mode, closed stream */
#define FM_EDEST        (-4)    /* not another node: unknown id, or the caller itself */
#define FM_EHANDLER     (-5)    /* handler id >= FM_MAX_HANDLERS; or a message came for a
                                   handler not registered here (it was skipped) */
#define FM_ENOTDMA      (-6)    /* a DMA send from memory not from FM_alloc_buffer */
#define FM_EBUSY        (-7)    /* a message is already being sent (one stream at a
                                   time), or FM_extract called inside a handler */
#define FM_ELENGTH      (-8)    /* more bytes than FM_begin_message declared */
#define FM_ENOMEM       (-9)    /* no DMA memory, or no host memory */
#define FM_ETIMEDOUT    (-10)   /* no credits, peer or DMA within FM_set_timeout's bound */
#define FM_EUNREACH     (-11)   /* the destination cannot be reached (link down) */
#define FM_EHW          (-12)   /* the adapter refused a send: FM_hw_status() says why */
#define FM_EPROTO       (-13)   /* a frame out of sequence or not FM's: FM stops */
#define FM_ENOENT       (-14)   /* not a request FM_send_request returned */

/* What a handler returns: go on extracting, or make FM_extract return now. */
#define FM_CONTINUE     0
#define FM_QUIT         1

#define FM_MAX_HANDLERS 256         /* handler ids 0 .. 255 (8 bits on the wire) */
#define FM_ANY_ID       (~0u)       /* FM_register_handler: the lowest free id */

/* FM_set_send_mode */
#define FM_SEND_AUTO    0   /* DMA from FM_alloc_buffer memory, PIO from anything else */
#define FM_SEND_PIO     1   /* always PIO */
#define FM_SEND_DMA     2   /* always zero-copy DMA: other memory is FM_ENOTDMA */

typedef struct FM_stream FM_stream;
typedef int FM_handler(FM_stream *stream, unsigned sender);
typedef uint64_t FM_request;

/* Set by FM_initialize: this node's id (0 .. FM_numnodes - 1) and the node count. */
extern unsigned FM_nodeid, FM_numnodes;
/* The last error any call returned. */
extern int FM_errno;

int FM_initialize(void);                /* opens /dev/fc0 (FM_DEVICE in the environment) */
int FM_finalize(void);
int FM_register_handler(unsigned id, FM_handler *handler);     /* returns the id */

/* FM 2.x streams: length is an upper bound; a message may be shorter. */
FM_stream *FM_begin_message(unsigned dest, unsigned length, unsigned handler);
int FM_send_piece(FM_stream *stream, const void *buf, unsigned length);
int FM_end_message(FM_stream *stream);
/* In a handler: take up to length bytes of the message; returns how many (fewer at
 * its end). What the handler does not take is discarded when it returns. */
int FM_receive(void *buf, FM_stream *stream, unsigned length);
/* Run the handlers of arrived messages, about maxbytes of them (whole messages):
 * returns the bytes extracted (0: nothing had come). */
int FM_extract(unsigned maxbytes);

/* FM 1.x short forms */
int FM_send(unsigned dest, unsigned handler, const void *buf, unsigned length);
int FM_send_4(unsigned dest, unsigned handler, uint32_t i0, uint32_t i1, uint32_t i2,
              uint32_t i3);

/* Zero-copy DMA */
int FM_set_send_mode(int mode);
void *FM_alloc_buffer(size_t size);     /* page-aligned, in the DMA area; NULL + FM_errno */
int FM_free_buffer(void *buf);

/* The split API: the request returns once its DMA has started (it waits for the one
 * DMA engine to finish reading the previous send); completion: 1 the buffer may be
 * reused, 0 not yet. buf must come from FM_alloc_buffer. */
int FM_send_request(unsigned dest, unsigned handler, const void *buf, unsigned length,
                    FM_request *request);
int FM_send_complete(FM_request request);
int FM_send_wait(FM_request request);

/* Bound on every wait (credits, a peer's start, the DMA engine); default 60000 ms. */
int FM_set_timeout(unsigned ms);
const char *FM_strerror(int err);
int FM_hw_status(void);                 /* FC_ERR_* of the adapter's last refusal */

struct FM_stats {
    uint64_t messages_sent, messages_received;
    uint64_t frames_sent, frames_received;      /* data frames */
    uint64_t control_sent, control_received;    /* credit and hello frames */
    uint64_t credit_waits;          /* sends that found no credit and waited */
    uint64_t backlog_frames;        /* frames copied aside (not extracted yet) */
    uint64_t rx_drops;              /* frames the adapter dropped since FM_initialize:
                                       stays 0 under FM */
    uint32_t credits_per_peer;      /* frames a sender may have unreturned here */
};
int FM_get_stats(struct FM_stats *stats);

#endif
