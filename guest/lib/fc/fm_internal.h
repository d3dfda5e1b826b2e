/*
 * Fast Messages: what the library's files share. The wire format (all of FM's
 * header is in the adapter's 32-bit tag, so a zero-copy DMA send carries the user's
 * bytes and nothing else) and the flow control are in docs/boards/fm.md.
 */
#ifndef FM_INTERNAL_H
#define FM_INTERNAL_H

#include <stdint.h>

#include "fm.h"
#include "fcraw.h"
#include "retrolink/regs/fc-regs.h"

/* ---- the tag of every FM frame ------------------------------------------- */
#define FM_TAG_HANDLER(t)   ((t) & 0xffu)           /* data: the handler id */
#define FM_TAG_BEGIN        (1u << 8)               /* this send starts a message */
#define FM_TAG_END          (1u << 9)               /* this send ends its message */
#define FM_TAG_CTRL         (1u << 10)              /* a control frame, not a message */
#define FM_TAG_SEQ(t)       (((t) >> 12) & 0xffu)   /* data sends to this node, mod 256 */
#define FM_TAG_CREDITS(t)   ((t) >> 20)             /* credits given back to the receiver */
#define FM_TAG_MAKE(low, seq, credits) \
    ((uint32_t)(low) | ((uint32_t)(seq) & 0xffu) << 12 | (uint32_t)(credits) << 20)
#define FM_MAX_TAG_CREDITS  0xfffu

/* control frames: the kind in the handler bits */
#define FM_CTRL_CREDIT      0   /* no payload: the credits are in the tag */
#define FM_CTRL_HELLO       1   /* payload: u32 the sender's session */
#define FM_CTRL_HELLO_ACK   2   /* payload: u32 the session being acknowledged */

/* slots of the ring kept per sender for its control frames (docs/boards/fm.md) */
#define FM_CTRL_RESERVE     4

struct fm_backlog_entry {
    uint32_t tag, offset, len, msg_len;
    int credited;           /* its credit went back when it was copied */
    unsigned char data[FC_MAX_PAYLOAD];
};

/* A data frame being read: in the ring (bl NULL) or copied aside. */
struct fm_frame {
    uint32_t src, tag, offset, len, msg_len;
    const unsigned char *data;
    struct fm_backlog_entry *bl;
};

struct fm_peer {
    /* sending to it */
    int ready;              /* it acknowledged our hello: its channel is on */
    unsigned credits;       /* frames we may still send it */
    uint8_t tx_seq;
    /* receiving from it */
    uint32_t session;       /* its session, from its hello (0: none yet) */
    uint8_t rx_seq;
    uint32_t rx_off;        /* the offset expected next in its current send */
    unsigned wait_release;  /* credits due once our consumed slots go back */
    unsigned owed;          /* credits we owe it */
    struct fm_backlog_entry *bl;    /* frames copied aside: a ring of bl_cap */
    unsigned bl_cap, bl_head, bl_count, bl_uncredited;
};

enum { FM_DIR_NONE, FM_DIR_SEND, FM_DIR_RECV };

struct FM_stream {
    int dir;
    int error;              /* a send that failed: the stream only ends */
    /* sending */
    unsigned dest, handler, declared, sent;
    int begun, ended;       /* BEGIN / END have gone out */
    unsigned staged;
    unsigned char stage[FC_PIO_MAX];
    /* receiving */
    unsigned sender, total;
    struct fm_frame cur;
    unsigned pos;           /* bytes of cur taken */
};

/* The split API's one active request (the older ones are complete). */
struct fm_split {
    FM_request id;          /* 0: none yet */
    unsigned dest, handler;
    const unsigned char *buf;
    unsigned len, started;  /* bytes whose DMA has started */
    FM_request failed;      /* a request whose send failed, and how */
    int failed_err;
};

struct fm_state {
    fcraw_t *raw;
    int mode;
    int64_t timeout_ns;
    unsigned max_payload, pio_max, slots;
    unsigned credits;       /* per peer: C */
    unsigned threshold;     /* owed credits that make a control frame: T */
    uint32_t session;
    struct fm_peer *peers;
    int in_handler;
    int extracting;         /* inside fm_extract_messages */
    int sending;            /* inside FM_send, FM_send_4, FM_send_request, or a stream's
                               start: the send queue is taken (a handler run by a waiting
                               send cannot send) */
    int split_busy;         /* starting the split request's DMA sends (no re-entry) */
    int handler_missing;    /* a message for no handler was skipped, not yet said */
    int credit_due;         /* some peer is owed >= T */
    unsigned ctrl_unreleased;
    int head_seen;          /* the ring's head frame went through intake() */
    unsigned bl_next;       /* where extract looks for copied frames first */
    unsigned bl_total;      /* frames copied aside, all peers */
    int fatal;              /* FM_EPROTO: nothing works any more */
    int hw_status;
    long drops_at_start;    /* the adapter's drop count when FM started */
    FM_stream tx, rx;
    struct fm_split split;
    struct FM_stats stats;
};

extern struct fm_state fm;
extern FM_handler *fm_handlers[FM_MAX_HANDLERS];

int fm_err(int code);
int fm_raw_err(void);               /* errno of a failed fcraw call as FM_E* */
int fm_check(void);                 /* FM_EINIT / fatal, else 0 */
int fm_check_dest(unsigned dest);
int64_t fm_now_ns(void);
/* Call with *deadline 0 and spins 0, 1, 2..: 1 once the timeout has passed. */
int fm_waited_too_long(int64_t *deadline, unsigned spins);

/* fm_flow.c: the ring, credits, hellos */
#define FM_WANT_ANY     (-1)        /* the next data frame from anyone */
#define FM_WANT_NONE    (-2)        /* none: copy data aside, handle control frames */
int fm_next_frame(int want, struct fm_frame *f);
int fm_wait_frame(unsigned src, struct fm_frame *f);
int fm_done_frame(struct fm_frame *f);
int fm_idle(void);
int fm_take_credits(unsigned dest, unsigned wanted, unsigned *granted);
int fm_poll_waiting(void);
int fm_connect(unsigned dest);
uint32_t fm_tag(unsigned dest, uint32_t low);

/* fm_recv.c: FM_extract's work; the bytes extracted or < 0 */
long long fm_extract_messages(unsigned maxbytes);

/* fm_send.c */
int fm_split_drain(void);
int fm_split_progress(void);

#endif
