/*
 * Fast Messages: the receive ring, credits and hellos (docs/boards/fm.md, "Flow
 * control"). The ring is read in order. A data frame nobody is extracting yet (a
 * sender waiting for credits, a handler waiting for more of its own message) is
 * copied aside into its sender's backlog so that the frames behind it, credits
 * among them, can be seen: two nodes sending to each other cannot block each other.
 *
 * Credits: each other node may have fm.credits (C) data frames here that it has not
 * had back. A frame's credit goes back once its slot is given back to the adapter
 * (or once it is copied aside, for the first C frames in a backlog): piggy-backed on
 * the next data send to it, or in a control frame as soon as T = C/2 are owed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fm_internal.h"

/* A hello is repeated until it is acknowledged, first after 1 ms, then at doubling
 * intervals up to 1 s: a peer that is up but not polling gets few of them (they take
 * ring slots kept for control frames). */
#define HELLO_FIRST_NS 1000000LL
#define HELLO_MAX_NS 1000000000LL

static struct fm_peer *peer(unsigned node)
{
    return &fm.peers[node];
}

static int proto_error(void)
{
    fm.fatal = FM_EPROTO;
    return fm_err(FM_EPROTO);
}

/* A control frame: never counted against credits (FM_CTRL_RESERVE slots are kept). */
static int send_control(unsigned dest, unsigned kind, uint32_t credits, const void *payload,
                        unsigned len)
{
    uint32_t tag = FM_TAG_MAKE(FM_TAG_CTRL | kind, 0, credits);
    if (fcraw_send_pio(fm.raw, payload, len, (int)dest, tag) < 0) {
        return fm_raw_err();
    }
    fm.stats.control_sent++;
    return 0;
}

static void note_credit(struct fm_peer *p)
{
    if (p->owed + p->wait_release >= fm.threshold) {
        fm.credit_due = 1;
    }
}

/* Give the consumed slots back (one register write): their credits become owed. */
static int release(void)
{
    if (fcraw_release(fm.raw) < 0) {
        return fm_raw_err();
    }
    for (unsigned i = 0; i < FM_numnodes; i++) {
        struct fm_peer *p = peer(i);
        p->owed += p->wait_release;
        p->wait_release = 0;
    }
    fm.ctrl_unreleased = 0;
    return 0;
}

/* Send a control frame to every peer owed T or more. */
static int return_credits(void)
{
    int r = release();
    fm.credit_due = 0;
    for (unsigned i = 0; r == 0 && i < FM_numnodes; i++) {
        struct fm_peer *p = peer(i);
        if (p->owed >= fm.threshold) {
            uint32_t n = p->owed > FM_MAX_TAG_CREDITS ? FM_MAX_TAG_CREDITS : p->owed;
            r = send_control(i, FM_CTRL_CREDIT, n, NULL, 0);
            if (r == 0) {
                p->owed -= n;
            }
        }
    }
    return r;
}

int fm_waited_too_long(int64_t *deadline, unsigned spins)
{
    if (spins & 63) {
        return 0;           /* the clock is looked at every 64 turns */
    }
    if (!*deadline) {
        *deadline = fm_now_ns() + fm.timeout_ns;
        return 0;
    }
    return fm_now_ns() > *deadline;
}

int fm_idle(void)
{
    return fm.credit_due ? return_credits() : 0;
}

uint32_t fm_tag(unsigned dest, uint32_t low)
{
    struct fm_peer *p = peer(dest);
    uint32_t credits = p->owed > FM_MAX_TAG_CREDITS ? FM_MAX_TAG_CREDITS : p->owed;
    p->owed -= credits;
    return FM_TAG_MAKE(low, p->tx_seq, credits);
}

/* A hello from src: a new session of it starts both directions afresh. */
static int hello(unsigned src, uint32_t session)
{
    struct fm_peer *p = peer(src);
    if (session != p->session) {
        /* a restarted peer: its ring is new, and it expects our sequence from 0 */
        p->session = session;
        p->rx_seq = 0;
        p->rx_off = 0;
        p->owed = p->wait_release = 0;
        fm.bl_total -= p->bl_count;
        p->bl_head = p->bl_count = p->bl_uncredited = 0;
        p->credits = fm.credits;
        p->tx_seq = 0;
        p->ready = 1;   /* it sent: its channel is on, and it knows nothing of us */
    }
    return send_control(src, FM_CTRL_HELLO_ACK, 0, &session, sizeof(session));
}

/* What the ring's head frame says, once: control frames are handled here. Returns
 * 1 for a data frame (its order checked, its piggy-backed credits taken), 0 for a
 * control frame (handled), < 0 for an error. */
static int intake(const struct fcraw_frame *rf)
{
    if (rf->src >= FM_numnodes || rf->src == FM_nodeid) {
        return proto_error();
    }
    struct fm_peer *p = peer(rf->src);
    uint32_t tag = rf->tag, session;
    if (tag & FM_TAG_CTRL) {
        fm.stats.control_received++;
        switch (FM_TAG_HANDLER(tag)) {
        case FM_CTRL_CREDIT:
            p->credits += FM_TAG_CREDITS(tag);
            break;
        case FM_CTRL_HELLO:
            if (rf->len != sizeof(session)) {
                return proto_error();
            }
            memcpy(&session, rf->data, sizeof(session));
            return hello(rf->src, session);
        case FM_CTRL_HELLO_ACK:
            if (rf->len != sizeof(session)) {
                return proto_error();
            }
            memcpy(&session, rf->data, sizeof(session));
            if (session == fm.session) {
                p->ready = 1;
            }
            return 0;
        default:
            return proto_error();
        }
        return p->credits > fm.credits ? proto_error() : 0;
    }
    /* a send's frames come in order, and sends in the order they were made */
    if (rf->offset != p->rx_off) {
        return proto_error();
    }
    if (rf->offset == 0) {
        if (FM_TAG_SEQ(tag) != p->rx_seq) {
            return proto_error();
        }
        p->rx_seq++;
        p->credits += FM_TAG_CREDITS(tag);
        if (p->credits > fm.credits) {
            return proto_error();
        }
    }
    p->rx_off = rf->offset + rf->len == rf->msg_len ? 0 : rf->offset + rf->len;
    fm.stats.frames_received++;
    return 1;
}

static int consume_head(void)
{
    fm.head_seen = 0;
    return fcraw_consume(fm.raw) < 0 ? fm_raw_err() : 0;
}

static struct fm_backlog_entry *backlog_slot(struct fm_peer *p, int at_front)
{
    if (!p->bl) {
        p->bl_cap = 2 * fm.credits + 2;
        p->bl = malloc((size_t)p->bl_cap * sizeof(*p->bl));
        if (!p->bl) {
            return NULL;
        }
    }
    if (p->bl_count == p->bl_cap) {
        return NULL;    /* cannot happen: a sender has at most C frames uncredited */
    }
    unsigned i;
    if (at_front) {
        p->bl_head = p->bl_head ? p->bl_head - 1 : p->bl_cap - 1;
        i = p->bl_head;
    } else {
        i = (p->bl_head + p->bl_count) % p->bl_cap;
    }
    p->bl_count++;
    fm.bl_total++;
    fm.stats.backlog_frames++;
    return &p->bl[i];
}

/* Copy the head data frame into its sender's backlog and move past it. */
static int copy_aside(const struct fcraw_frame *rf)
{
    struct fm_peer *p = peer(rf->src);
    struct fm_backlog_entry *e = backlog_slot(p, 0);
    if (!e) {
        return p->bl ? proto_error() : fm_err(FM_ENOMEM);
    }
    *e = (struct fm_backlog_entry){ .tag = rf->tag, .offset = rf->offset, .len = rf->len,
                                    .msg_len = rf->msg_len };
    memcpy(e->data, rf->data, rf->len);
    /* up to C frames aside get their credit back at once, the rest when extracted */
    e->credited = p->bl_count - 1 - p->bl_uncredited < fm.credits;
    if (e->credited) {
        p->wait_release++;
        note_credit(p);
    } else {
        p->bl_uncredited++;
    }
    return consume_head();
}

/*
 * The frame a handler is reading may be the ring's head; before anything looks past
 * the head it is moved to the front of its sender's backlog (rarely: only a handler
 * that waits for credits or a peer does it).
 */
static int pin_current(void)
{
    FM_stream *s = &fm.rx;
    if (s->dir != FM_DIR_RECV || !s->cur.data || s->cur.bl) {
        return 0;
    }
    struct fm_peer *p = peer(s->sender);
    struct fm_backlog_entry *e = backlog_slot(p, 1);
    if (!e) {
        return p->bl ? proto_error() : fm_err(FM_ENOMEM);
    }
    *e = (struct fm_backlog_entry){ .tag = s->cur.tag, .offset = s->cur.offset,
                                    .len = s->cur.len, .msg_len = s->cur.msg_len,
                                    .credited = 1 };
    memcpy(e->data, s->cur.data, s->cur.len);
    s->cur.data = e->data;
    s->cur.bl = e;
    p->wait_release++;
    note_credit(p);
    return consume_head();
}

static void from_backlog(unsigned src, struct fm_frame *f)
{
    struct fm_peer *p = peer(src);
    struct fm_backlog_entry *e = &p->bl[p->bl_head];
    *f = (struct fm_frame){ .src = src, .tag = e->tag, .offset = e->offset, .len = e->len,
                            .msg_len = e->msg_len, .data = e->data, .bl = e };
}

int fm_next_frame(int want, struct fm_frame *f)
{
    int r = pin_current();
    if (r < 0) {
        return r;
    }
    if (want >= 0 && peer(want)->bl_count) {
        from_backlog(want, f);
        return 1;
    }
    if (want == FM_WANT_ANY && fm.bl_total) {
        for (unsigned k = 0; k < FM_numnodes; k++) {
            unsigned i = (fm.bl_next + k) % FM_numnodes;
            if (peer(i)->bl_count) {
                fm.bl_next = i;
                from_backlog(i, f);
                return 1;
            }
        }
    }
    for (;;) {
        struct fcraw_frame rf;
        r = fcraw_poll(fm.raw, &rf);
        if (r <= 0) {
            return r < 0 ? fm_raw_err() : 0;
        }
        if (!fm.head_seen) {
            r = intake(&rf);
            if (r < 0) {
                return r;
            }
            if (r == 0) {
                /* a control frame: handled; its slot goes back soon (FM_CTRL_RESERVE) */
                if ((r = consume_head()) < 0) {
                    return r;
                }
                if (++fm.ctrl_unreleased >= FM_CTRL_RESERVE / 2 && (r = release()) < 0) {
                    return r;
                }
                continue;
            }
            fm.head_seen = 1;
        }
        if (want == FM_WANT_ANY || want == (int)rf.src) {
            *f = (struct fm_frame){ .src = rf.src, .tag = rf.tag, .offset = rf.offset,
                                    .len = rf.len, .msg_len = rf.msg_len,
                                    .data = rf.data };
            return 1;
        }
        if ((r = copy_aside(&rf)) < 0) {
            return r;
        }
    }
}

int fm_done_frame(struct fm_frame *f)
{
    struct fm_peer *p = peer(f->src);
    if (f->bl) {
        if (!f->bl->credited) {
            p->bl_uncredited--;
            p->wait_release++;
        }
        p->bl_head = (p->bl_head + 1) % p->bl_cap;
        p->bl_count--;
        fm.bl_total--;
    } else {
        int r = consume_head();
        if (r < 0) {
            return r;
        }
        p->wait_release++;
    }
    f->data = NULL;
    note_credit(p);
    return fm_idle();
}

/* Wait (bounded) for the next data frame from src, keeping credits and requests going. */
int fm_wait_frame(unsigned src, struct fm_frame *f)
{
    int64_t deadline = 0;
    for (unsigned i = 0;; i++) {
        int r = fm_next_frame((int)src, f);
        if (r) {
            return r;
        }
        if ((r = fm_idle()) < 0 || (r = fm_split_progress()) < 0) {
            return r;
        }
        if (fm_waited_too_long(&deadline, i)) {
            return fm_err(FM_ETIMEDOUT);
        }
    }
}

int fm_take_credits(unsigned dest, unsigned wanted, unsigned *granted)
{
    struct fm_peer *p = peer(dest);
    if (!p->credits) {
        int64_t deadline = 0;
        fm.stats.credit_waits++;
        for (unsigned i = 0; !p->credits; i++) {
            int r = fm_poll_waiting();
            if (r < 0 || (r = fm_idle()) < 0) {
                return r;
            }
            if (fm_waited_too_long(&deadline, i)) {
                return fm_err(FM_ETIMEDOUT);
            }
        }
    }
    *granted = wanted < p->credits ? wanted : p->credits;
    p->credits -= *granted;
    return 0;
}

/* Before the first send to dest: hello until it answers (its channel is then on). */
int fm_connect(unsigned dest)
{
    struct fm_peer *p = peer(dest);
    int64_t deadline = fm_now_ns() + fm.timeout_ns, last = 0, every = HELLO_FIRST_NS;
    int err = FM_ETIMEDOUT;
    while (!p->ready) {
        int64_t now = fm_now_ns();
        if (now > deadline) {
            return fm_err(err);
        }
        if (!last || now - last >= every) {
            if (last) {
                every = every * 2 < HELLO_MAX_NS ? every * 2 : HELLO_MAX_NS;
            }
            last = now;
            int r = send_control(dest, FM_CTRL_HELLO, 0, &fm.session, sizeof(fm.session));
            if (r == FM_EUNREACH) {
                err = r;        /* not up yet, perhaps: try again */
            } else if (r < 0) {
                return r;
            }
        }
        int r = fm_poll_waiting();
        if (r < 0 || (r = fm_idle()) < 0) {
            return r;
        }
    }
    return 0;
}

/*
 * What a send does while it waits (for credits, a hello): outside handlers, run the
 * handlers of the messages that have come, as FM's sends do ("FM_extract may be
 * called during a message send"), so that two nodes sending to each other give each
 * other credits back; in a handler, or inside FM_extract, copy what comes aside.
 */
int fm_poll_waiting(void)
{
    if (fm.in_handler || fm.extracting) {
        struct fm_frame f;
        int r = fm_next_frame(FM_WANT_NONE, &f);
        return r < 0 ? r : 0;
    }
    int r = fm_extract_messages(~0u);
    return r < 0 ? r : 0;
}
