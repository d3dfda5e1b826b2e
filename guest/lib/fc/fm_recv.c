/*
 * Fast Messages: receiving. FM_extract takes the first frame of a message and runs
 * its handler at once; the handler's FM_receive copies the message's bytes out of
 * the ring (or the backlog) and waits for frames still on their way. What the
 * handler leaves is skipped when it returns.
 */
#include <limits.h>
#include <string.h>

#include "fm_internal.h"

static int message_ends_here(const struct fm_frame *f)
{
    return (f->tag & FM_TAG_END) && f->offset + f->len == f->msg_len;
}

/* Done with the current frame: the next one of the same message. */
static int next_piece(FM_stream *s)
{
    int r = fm_done_frame(&s->cur);
    if (r < 0 || (r = fm_wait_frame(s->sender, &s->cur)) < 0) {
        return r;
    }
    s->pos = 0;
    /* a message's later sends carry no BEGIN, and the same handler */
    if (((s->cur.tag & FM_TAG_BEGIN) && s->cur.offset == 0) ||
        FM_TAG_HANDLER(s->cur.tag) != s->handler) {
        fm.fatal = FM_EPROTO;
        return fm_err(FM_EPROTO);
    }
    return 0;
}

int FM_receive(void *buf, FM_stream *stream, unsigned length)
{
    int r = fm_check();
    if (r) {
        return r;
    }
    FM_stream *s = stream;
    if (s != &fm.rx || s->dir != FM_DIR_RECV || !fm.in_handler || (!buf && length)) {
        return fm_err(FM_EINVAL);
    }
    if (s->error) {
        return fm_err(s->error);
    }
    unsigned got = 0;
    while (got < length) {
        if (s->pos == s->cur.len) {
            if (message_ends_here(&s->cur)) {
                break;
            }
            if ((r = next_piece(s)) < 0) {
                s->error = r;
                return r;
            }
            continue;
        }
        unsigned n = length - got < s->cur.len - s->pos ? length - got : s->cur.len - s->pos;
        memcpy((unsigned char *)buf + got, s->cur.data + s->pos, n);
        s->pos += n;
        got += n;
    }
    s->total += got;
    return got > INT_MAX ? INT_MAX : (int)got;
}

/* After the handler: skip what it left of the message, and let the last frame go. */
static int finish_message(FM_stream *s)
{
    int r = s->error;
    while (!r && !(s->pos == s->cur.len && message_ends_here(&s->cur))) {
        if (s->pos < s->cur.len) {
            s->total += s->cur.len - s->pos;
            s->pos = s->cur.len;
        } else {
            r = next_piece(s);
        }
    }
    if (!r) {
        r = fm_done_frame(&s->cur);
    }
    s->dir = FM_DIR_NONE;
    return r;
}

long long fm_extract_messages(unsigned maxbytes)
{
    fm.extracting = 1;      /* a wait in here copies frames aside, it does not extract */
    int r = fm_split_progress();
    unsigned long long total = 0;
    while (r >= 0 && total < maxbytes) {
        struct fm_frame f;
        r = fm_next_frame(FM_WANT_ANY, &f);
        if (r == 0) {
            r = fm_idle();
        }
        if (r <= 0) {
            break;
        }
        if (!(f.tag & FM_TAG_BEGIN) || f.offset != 0) {
            fm.fatal = FM_EPROTO;   /* the middle of a message nobody began */
            r = fm_err(FM_EPROTO);
            break;
        }
        FM_stream *s = &fm.rx;
        s->dir = FM_DIR_RECV;
        s->error = 0;
        s->sender = f.src;
        s->handler = FM_TAG_HANDLER(f.tag);
        s->total = 0;
        s->cur = f;
        s->pos = 0;
        FM_handler *h = fm_handlers[s->handler];
        int ret = FM_CONTINUE;
        if (h) {
            fm.in_handler = 1;
            ret = h(s, f.src);
            fm.in_handler = 0;
        } else {
            fm.handler_missing = 1;     /* FM's rule: such a message is dropped, and said */
        }
        if ((r = finish_message(s)) < 0) {
            break;
        }
        total += s->total;
        fm.stats.messages_received++;
        if (ret == FM_QUIT) {
            break;
        }
    }
    fm.extracting = 0;
    return r < 0 ? fm_err(r) : (long long)total;
}

int FM_extract(unsigned maxbytes)
{
    int r = fm_check();
    if (r) {
        return r;
    }
    if (fm.in_handler) {
        return fm_err(FM_EBUSY);
    }
    if (maxbytes == 0) {
        return fm_err(FM_EINVAL);
    }
    long long n = fm_extract_messages(maxbytes);
    if (n < 0) {
        return (int)n;
    }
    /* also a message skipped while a send waited and ran the handlers */
    if (fm.handler_missing) {
        fm.handler_missing = 0;
        return fm_err(FM_EHANDLER);
    }
    return n > INT_MAX ? INT_MAX : (int)n;
}
