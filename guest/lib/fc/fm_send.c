/*
 * Fast Messages: sending. A message is one or more adapter sends to one node, the
 * first flagged BEGIN and the last END (docs/boards/fm.md, "Wire format"):
 *  - PIO: frames of up to pio_max bytes stored into the adapter by the CPU;
 *  - DMA: sends straight from FM_alloc_buffer memory, cut where the credits or the
 *    adapter's FC_MAX_SEND end, the adapter cutting each into frames of max_payload.
 * Frames of one node's messages must not interleave at the receiver, so one message
 * is sent at a time, and a PIO frame waits until a DMA send has read all its data
 * (the adapter queues frames in the order they were made).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "fm_internal.h"

static int is_dma_memory(const void *buf, unsigned len)
{
    uint32_t dvma;
    return buf && len && fcraw_dvma(fm.raw, buf, len, &dvma) == 0;
}

/* One PIO frame of a message: low is the handler and BEGIN/END. */
static int pio_frame(unsigned dest, uint32_t low, const void *data, unsigned len)
{
    struct fm_peer *p = &fm.peers[dest];
    unsigned granted;
    int r = fm_take_credits(dest, 1, &granted);
    if (r < 0) {
        return r;
    }
    uint32_t tag = 0;
    if (fcraw_dma_wait(fm.raw) < 0 ||
        fcraw_send_pio(fm.raw, data, len, (int)dest, tag = fm_tag(dest, low)) < 0) {
        p->credits += granted;
        p->owed += FM_TAG_CREDITS(tag);
        return fm_raw_err();
    }
    p->tx_seq++;
    fm.stats.frames_sent++;
    return 0;
}

/* A whole message by PIO straight from buf. */
static int pio_message(unsigned dest, unsigned handler, const unsigned char *buf,
                       unsigned len)
{
    unsigned done = 0;
    do {
        unsigned n = len - done < fm.pio_max ? len - done : fm.pio_max;
        uint32_t low = handler | (done == 0 ? FM_TAG_BEGIN : 0) |
                       (done + n == len ? FM_TAG_END : 0);
        int r = pio_frame(dest, low, buf ? buf + done : NULL, n);
        if (r < 0) {
            return r;
        }
        done += n;
    } while (done < len);
    return 0;
}

/*
 * Start one DMA send of [buf + *started, buf + len): as many frames as there are
 * credits, at most FC_MAX_SEND bytes. BEGIN if it is the first (and begin), END if
 * it is the last (and end). wait: wait for the DMA engine and a credit; else
 * return 0 when either is missing. Returns 1 when a send started.
 */
static int dma_chunk(unsigned dest, unsigned handler, const unsigned char *buf, unsigned len,
                     unsigned *started, int begin, int end, int wait)
{
    struct fm_peer *p = &fm.peers[dest];
    unsigned mp = fm.max_payload, left = len - *started, granted;
    if (!wait) {
        int busy = fcraw_dma_busy(fm.raw);
        if (busy) {
            return busy < 0 ? fm_raw_err() : 0;
        }
        if (!p->credits) {
            int r = fm_poll_waiting();     /* credits may be waiting behind other frames */
            if (r < 0 || !p->credits) {
                return r < 0 ? r : 0;
            }
        }
    }
    int r = fm_take_credits(dest, (left + mp - 1) / mp, &granted);
    if (r < 0) {
        return r;
    }
    left = len - *started;      /* (the wait cannot have sent any of it: fm.sending) */
    unsigned chunk = left, max = (FC_MAX_SEND / mp) * mp;
    if ((uint64_t)granted * mp < chunk) {
        chunk = granted * mp;
    }
    if (chunk > max) {
        chunk = max;
    }
    unsigned frames = (chunk + mp - 1) / mp;
    p->credits += granted - frames;
    uint32_t low = handler | (begin && *started == 0 ? FM_TAG_BEGIN : 0) |
                   (end && *started + chunk == len ? FM_TAG_END : 0);
    uint32_t tag = fm_tag(dest, low);
    if (fcraw_dma_start(fm.raw, buf + *started, chunk, (int)dest, tag) < 0) {
        p->credits += frames;
        p->owed += FM_TAG_CREDITS(tag);
        return fm_raw_err();
    }
    p->tx_seq++;
    fm.stats.frames_sent += frames;
    *started += chunk;
    return 1;
}

/* A zero-copy DMA piece: returns when the adapter has read all of it. */
static int dma_piece(unsigned dest, unsigned handler, const unsigned char *buf, unsigned len,
                     int begin, int end)
{
    unsigned started = 0;
    while (started < len) {
        int r = dma_chunk(dest, handler, buf, len, &started, begin, end, 1);
        if (r < 0) {
            return r;
        }
    }
    return fcraw_dma_wait(fm.raw) < 0 ? fm_raw_err() : 0;
}

/* What every send checks and does first: FM ready, a real peer and handler, no
 * message half sent, the peer's channel on, and the split API's sends all started
 * (so that they stay in order with this one). */
static int send_prologue(unsigned dest, unsigned handler)
{
    int r = fm_check();
    if (r || (r = fm_check_dest(dest))) {
        return r;
    }
    if (handler >= FM_MAX_HANDLERS) {
        return fm_err(FM_EHANDLER);
    }
    if (fm.sending || fm.tx.dir == FM_DIR_SEND) {
        return fm_err(FM_EBUSY);
    }
    fm.sending = 1;         /* the caller clears it (send_done) */
    if ((r = fm_connect(dest)) < 0 || (r = fm_split_drain()) < 0) {
        fm.sending = 0;
        return r;
    }
    return 0;
}

/* The end of a send that send_prologue began: r is its result. */
static int send_done(int r)
{
    fm.sending = 0;
    if (r < 0) {
        return fm_err(r);
    }
    fm.stats.messages_sent++;
    return FM_OK;
}

/* DMA or PIO for len bytes at buf: FM_ENOTDMA if DMA is required and impossible. */
static int use_dma(const void *buf, unsigned len, int *dma)
{
    int in_dma_memory = is_dma_memory(buf, len);
    if (fm.mode == FM_SEND_DMA && len && !in_dma_memory) {
        return fm_err(FM_ENOTDMA);
    }
    *dma = len && fm.mode != FM_SEND_PIO && in_dma_memory;
    return 0;
}

/* ---- FM 2.x streams ------------------------------------------------------ */

FM_stream *FM_begin_message(unsigned dest, unsigned length, unsigned handler)
{
    if (send_prologue(dest, handler) < 0) {
        return NULL;
    }
    FM_stream *s = &fm.tx;
    memset(s, 0, offsetof(FM_stream, stage));
    fm.sending = 0;         /* the open stream holds the send queue now */
    s->dir = FM_DIR_SEND;
    s->dest = dest;
    s->handler = handler;
    s->declared = length;
    return s;
}

static int flush_stage(FM_stream *s, uint32_t end)
{
    uint32_t low = s->handler | (s->begun ? 0 : FM_TAG_BEGIN) | end;
    int r = pio_frame(s->dest, low, s->staged ? s->stage : NULL, s->staged);
    if (r == 0) {
        s->begun = 1;
        s->staged = 0;
    }
    return r;
}

int FM_send_piece(FM_stream *stream, const void *buf, unsigned length)
{
    int r = fm_check(), dma;
    if (r) {
        return r;
    }
    FM_stream *s = stream;
    if (s != &fm.tx || s->dir != FM_DIR_SEND || (!buf && length)) {
        return fm_err(FM_EINVAL);
    }
    if (s->error) {
        return fm_err(s->error);
    }
    if (length > s->declared - s->sent) {
        return fm_err(FM_ELENGTH);
    }
    if ((r = use_dma(buf, length, &dma)) < 0) {
        return r;
    }
    const unsigned char *b = buf;
    if (dma) {
        int end = s->sent + length == s->declared;
        if (s->staged && (r = flush_stage(s, 0)) < 0) {
            return fm_err(s->error = r);
        }
        if ((r = dma_piece(s->dest, s->handler, b, length, !s->begun, end)) < 0) {
            return fm_err(s->error = r);
        }
        s->begun = 1;
        s->ended = end;
    } else {
        /* PIO: bytes gather in a frame that goes out when full and more come */
        for (unsigned left = length; left;) {
            if (s->staged == fm.pio_max && (r = flush_stage(s, 0)) < 0) {
                return fm_err(s->error = r);
            }
            unsigned n = left < fm.pio_max - s->staged ? left : fm.pio_max - s->staged;
            memcpy(s->stage + s->staged, b, n);
            s->staged += n;
            b += n;
            left -= n;
        }
    }
    s->sent += length;
    return FM_OK;
}

int FM_end_message(FM_stream *stream)
{
    int r = fm_check();
    if (r) {
        return r;
    }
    FM_stream *s = stream;
    if (s != &fm.tx || s->dir != FM_DIR_SEND) {
        return fm_err(FM_EINVAL);
    }
    r = s->error;
    if (!r && !s->ended) {
        r = flush_stage(s, FM_TAG_END);     /* the rest, or an empty frame marking the end */
    }
    s->dir = FM_DIR_NONE;
    if (r < 0) {
        return fm_err(r);
    }
    fm.stats.messages_sent++;
    return FM_OK;
}

/* ---- FM 1.x short forms -------------------------------------------------- */

int FM_send(unsigned dest, unsigned handler, const void *buf, unsigned length)
{
    int r = fm_check(), dma;
    if (r) {
        return r;
    }
    if (!buf && length) {
        return fm_err(FM_EINVAL);
    }
    /* what is wrong with the arguments is said before anything goes on the wire */
    if ((r = use_dma(buf, length, &dma)) < 0 || (r = send_prologue(dest, handler)) < 0) {
        return r;
    }
    return send_done(dma ? dma_piece(dest, handler, buf, length, 1, 1)
                         : pio_message(dest, handler, buf, length));
}

int FM_send_4(unsigned dest, unsigned handler, uint32_t i0, uint32_t i1, uint32_t i2,
              uint32_t i3)
{
    uint32_t words[4] = { i0, i1, i2, i3 };
    int r = send_prologue(dest, handler);
    if (r < 0) {
        return r;
    }
    return send_done(pio_message(dest, handler, (const unsigned char *)words, sizeof(words)));
}

/* ---- the split API ------------------------------------------------------- */

static int split_fail(int r)
{
    fm.split.failed = fm.split.id;
    fm.split.failed_err = r;
    fm.split.started = fm.split.len;     /* nothing more of it will be sent */
    return fm_err(r);
}

/* Start the active request's next DMA send if the engine and credits allow. */
int fm_split_progress(void)
{
    struct fm_split *q = &fm.split;
    if (!q->id || q->started == q->len || fm.split_busy) {
        return 0;
    }
    fm.split_busy = 1;
    int r = dma_chunk(q->dest, q->handler, q->buf, q->len, &q->started, 1, 1, 0);
    fm.split_busy = 0;
    return r < 0 ? split_fail(r) : 0;
}

/* Start all of the active request's sends (waiting for credits as needed). */
int fm_split_drain(void)
{
    struct fm_split *q = &fm.split;
    int r = 0;
    if (fm.split_busy) {
        return 0;
    }
    fm.split_busy = 1;
    while (r >= 0 && q->id && q->started < q->len) {
        r = dma_chunk(q->dest, q->handler, q->buf, q->len, &q->started, 1, 1, 1);
    }
    fm.split_busy = 0;
    return r < 0 ? split_fail(r) : 0;
}

int FM_send_request(unsigned dest, unsigned handler, const void *buf, unsigned length,
                    FM_request *request)
{
    if (!request || (!buf && length)) {
        int r = fm_check();
        return r ? r : fm_err(FM_EINVAL);
    }
    int r = fm_check();
    if (r) {
        return r;
    }
    if (length && !is_dma_memory(buf, length)) {
        return fm_err(FM_ENOTDMA);
    }
    if ((r = send_prologue(dest, handler)) < 0) {
        return r;
    }
    struct fm_split *q = &fm.split;
    FM_request id = q->id + 1;
    *q = (struct fm_split){ .id = id, .dest = dest, .handler = handler, .buf = buf,
                            .len = length, .failed = q->failed, .failed_err = q->failed_err };
    fm.split_busy = 1;
    if (length == 0) {
        r = pio_frame(dest, handler | FM_TAG_BEGIN | FM_TAG_END, NULL, 0);
    } else {
        r = dma_chunk(dest, handler, q->buf, length, &q->started, 1, 1, 1);
    }
    fm.split_busy = 0;
    if (r < 0) {
        fm.sending = 0;
        return split_fail(r);
    }
    *request = id;
    return send_done(0);
}

int FM_send_complete(FM_request request)
{
    int r = fm_check();
    if (r) {
        return r;
    }
    struct fm_split *q = &fm.split;
    if (request == 0 || request > q->id) {
        return fm_err(FM_ENOENT);
    }
    if (request == q->failed) {
        return fm_err(q->failed_err);
    }
    if (request < q->id) {
        return 1;       /* a later request started: this one's DMA had finished */
    }
    if ((r = fm_split_progress()) < 0) {
        return r;
    }
    if (q->started < q->len) {
        return 0;
    }
    int busy = fcraw_dma_busy(fm.raw);
    return busy < 0 ? fm_raw_err() : !busy;
}

int FM_send_wait(FM_request request)
{
    int64_t deadline = 0;
    for (unsigned i = 0;; i++) {
        int r = FM_send_complete(request);
        if (r) {
            return r < 0 ? r : FM_OK;
        }
        if ((r = fm_idle()) < 0) {
            return r;
        }
        if (fm_waited_too_long(&deadline, i)) {
            return fm_err(FM_ETIMEDOUT);
        }
    }
}
