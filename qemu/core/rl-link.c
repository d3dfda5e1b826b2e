/*
 * retrolink link port: see rl-link.h and docs/fabric.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/cutils.h"
#include "qemu/timer.h"
#include "qemu/processor.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "hw/core/cpu.h"
#include "system/cpus.h"
#include "system/cpu-timers.h"
#include "system/runstate.h"
#include "system/system.h"
#include "system/qtest.h"
#include <sys/socket.h>
#include <sys/un.h>
#include <poll.h>
#include <sched.h>

#include "hw/retrolink/core/rl-clock-hold.h"
#include "hw/retrolink/core/rl-link.h"
#include "hw/retrolink/core/rl-lockstep.h"
#include "hw/retrolink/trace.h"

#define RL_WELCOME_TIMEOUT_MS   120000  /* every node must connect within this */
#define RL_POLL_MS              100     /* how often a blocked sync checks for shutdown */
/* rl_port_wait: host time without a grant moving before the access fails */
#define RL_WAIT_STUCK_S         30
#define RL_WAIT_STUCK_NS        (RL_WAIT_STUCK_S * 1000000000ll)
#define RL_MSG_MAX              (sizeof(struct rl_frame) + RL_MAX_PAYLOAD)
/*
 * A node at its grant looks for a grant of its own in the lock-step file
 * (docs/fabric.md, "Grants without a round trip"): first spinning, for as long
 * as a peer on another core takes to finish a window of a few microseconds (only
 * while every QEMU can have a core of its own), then yielding its core between
 * looks (a peer it waits for may be waiting for this core), and at last it asks
 * the fabric on the socket and sleeps, so that nothing spins without bound.
 */
#define RL_SPIN_NS              20000
/* a window shorter than this is not split by a half-way publication */
#define RL_PROGRESS_MIN_NS      1000
#define RL_YIELD_NS             500000
/*
 * In the vCPU loop, how long a sync point waits for a grant that lets the next TB
 * run whole before it takes a shorter one (and QEMU makes a TB of exactly the
 * instructions left, translated afresh: some 20 us). A peer publishes every half
 * window, a few microseconds of host time at microsecond lookahead.
 */
#define RL_FIT_NS               10000
/*
 * Spinning, a look at the file every this many pause instructions: 0.06-0.1 us
 * (a pause is 15-25 ns on the machines the project is measured on). What counts is
 * how soon a waiting node sees its peer's publication: measured 2026-11-27 (commit
 * 98e08d1), alternating runs of bench fabric at 2 us gave a ratio of 0.51 (mean of
 * 96 rounds) with 1 or 4 pauses a look against 0.48 (105 rounds) with 32, 0.8 us a
 * look there; and a spinner looking every pause did not slow a busy program on the
 * other core (docs/experiments/2026-11-27-lockstep-look-interval.md).
 */
#define RL_SPIN_PAUSES          4

typedef struct RlLink RlLink;

/* Where a node is in the boot barrier (docs/snapshots.md) */
typedef enum RlBarrier {
    RL_BS_NONE,        /* not arrived (or started from a snapshot: passed) */
    RL_BS_ARRIVED,     /* the guest arrived: hold at the next sync point, now */
    RL_BS_RUNNING,     /* every node arrived: run to barrier_t */
    RL_BS_STOPPED,     /* stopped at barrier_t for a snapshot: resume at a sync */
    RL_BS_PASSED,
} RlBarrier;

struct RlPort {
    RlLink *link;
    uint32_t net;
    uint32_t protocol;
    const RlPortOps *ops;
    void *opaque;
    uint64_t last_ready;     /* a port's frames enter the wire interface in order */
    uint64_t seq;
};

/* The node's one connection: every port of this QEMU shares it. */
struct RlLink {
    int fd;
    char *socket_path;
    uint32_t node;
    uint32_t nodes;          /* from WELCOME; 0 before */
    uint32_t notice_nets;    /* from WELCOME: networks that send notices (a bit each) */
    char name[RL_NAME_LEN];
    RlPort *ports[RL_MAX_NETWORKS];
    uint32_t nports;
    QEMUTimer *sync_timer;
    QEMUTimer *progress_timer;   /* half-way to the grant: publish, do not wait */
    bool progress_told;      /* the fabric has had a PROGRESS since our last publication */
    uint64_t grant;          /* may run up to here */
    uint64_t promised;       /* last promise sent: no frame may be ready before it */
    uint64_t reached;        /* an access's wait ran the node's events to here, its vCPU
                                standing still before it (rl_port_wait) */
    uint64_t violations;     /* frames ready before our promise (moved to it) */
    uint64_t late_delivers;  /* frames delivered after their arrival time */
    uint64_t granularity;    /* ns per guest instruction: timers fire up to this-1 late */
    uint64_t reaction;       /* as said in HELLO: the least over the ports */
    uint64_t armed_at;       /* virtual time when the sync timer was last armed */
    bool up;
    bool started;            /* WELCOME came */
    Notifier machine_done;
    Notifier exit_notifier;
    Notifier shutdown_notifier;
    bool stopping;           /* the main loop took a shutdown request */
    uint8_t *buf;
    RlLockstep *ls;          /* the lock-step file; NULL: grants come on the socket */
    bool live;               /* peers follow our live clock (docs/fabric.md, "Live time") */
    uint64_t pending;        /* the pending floor last published there */
    uint64_t frames_sent;    /* FRAMEs written: the fabric must have them all */
    uint64_t msgs_in;        /* messages read: we must have all the fabric sent */
    RlBarrier barrier;
    uint64_t barrier_t;      /* the barrier's time, from BARRIER_AT */
    bool barrier_save;       /* stop there for a snapshot */
    void (*barrier_released)(void *opaque, uint64_t t);
    void *barrier_opaque;
    VMChangeStateEntry *vm_state;
    RlClockHold hold;        /* the clock while the node stops for a snapshot */
};

static RlLink *rl_node_link;     /* this QEMU's connection (one node per process) */

static uint64_t rl_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void rl_link_lost(RlLink *l, const char *why)
{
    if (!l->up) {
        return;
    }
    error_report("retrolink node %u: fabric connection lost: %s; "
                 "all peers are now down", l->node, why);
    l->up = false;
    if (l->sync_timer) {
        timer_del(l->sync_timer);
    }
    if (l->progress_timer) {
        timer_del(l->progress_timer);
    }
    uint64_t now = rl_now();
    for (uint32_t i = 0; i < l->nports; i++) {
        for (uint32_t p = 0; p < l->nodes; p++) {
            if (p != l->node) {
                l->ports[i]->ops->link(l->ports[i]->opaque, now, p, false);
            }
        }
    }
}

static bool rl_write(RlLink *l, const void *msg, size_t len)
{
    ssize_t n;

    do {
        n = send(l->fd, msg, len, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)len) {
        rl_link_lost(l, n < 0 ? strerror(errno) : "short write");
        return false;
    }
    return true;
}

/* Receive one message into l->buf, waiting up to timeout_ms; 0 = timed out. */
static ssize_t rl_read(RlLink *l, int timeout_ms)
{
    struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
    int r = poll(&pfd, 1, timeout_ms);

    if (r == 0 || (r < 0 && errno == EINTR)) {
        return 0;
    }
    ssize_t n = recv(l->fd, l->buf, RL_MSG_MAX, MSG_TRUNC);
    if (n <= 0) {
        rl_link_lost(l, n == 0 ? "the fabric closed the connection" : strerror(errno));
        return -1;
    }
    const struct rl_msg_hdr *h = (const void *)l->buf;
    if ((size_t)n > RL_MSG_MAX || (size_t)n < sizeof(*h) || h->magic != RL_WIRE_MAGIC ||
        h->version != RL_WIRE_VERSION || h->length != n) {
        rl_link_lost(l, "malformed message from the fabric");
        return -1;
    }
    l->msgs_in++;
    return n;
}

/* The port on network net; NULL if it has gone (its frames are dropped). */
static RlPort *rl_port_of(RlLink *l, uint32_t net)
{
    for (uint32_t i = 0; i < l->nports; i++) {
        if (l->ports[i]->net == net) {
            return l->ports[i];
        }
    }
    return NULL;
}

/* Handle one message from the fabric; returns true when it was a GRANT. */
static bool rl_dispatch(RlLink *l, size_t n)
{
    const struct rl_msg_hdr *h = (const void *)l->buf;

    switch (h->type) {
    case RL_MSG_DELIVER: {
        const struct rl_frame *f = (const void *)l->buf;
        if (n < sizeof(*f) || f->len != n - sizeof(*f)) {
            rl_link_lost(l, "bad DELIVER length");
            return false;
        }
        /* from ourselves: a notice, on a network that sends them (wire.h) */
        bool notice = f->src == l->node && f->len == 0 && f->net < RL_MAX_NETWORKS &&
                      (l->notice_nets >> f->net & 1);
        if (f->src >= l->nodes || (f->src == l->node && !notice)) {
            /* a device would answer it: to a node that is not there, or to itself */
            rl_link_lost(l, "DELIVER from a node that is not a peer");
            return false;
        }
        uint64_t now = rl_now();
        if (h->time_ns < now) {
            /* a grant let us run past it: the lock-step broke its rule (or the guest
             * woke from outside the model); the device takes it now, late */
            l->late_delivers++;
            trace_retrolink_link_late_deliver(l->node, h->time_ns, now);
            if (l->late_delivers == 1) {
                error_report("retrolink node %u: a frame arriving at %" PRIu64 " came at %"
                             PRIu64 ", after it", l->node, h->time_ns, now);
            }
        }
        /* the fabric expects a reaction to it no earlier than this (docs/fabric.md) */
        l->promised = MIN(l->promised, h->time_ns + l->reaction);
        RlPort *p = rl_port_of(l, f->net);
        if (p && notice) {
            p->ops->notice(p->opaque, h->time_ns, f->seq);
        } else if (p) {
            p->ops->frame(p->opaque, h->time_ns, f->seq, f->src, f->flags,
                          l->buf + sizeof(*f), f->len);
        }
        return false;
    }
    case RL_MSG_LINK: {
        const struct rl_link_status *s = (const void *)l->buf;
        if (n != sizeof(*s) || s->peer >= l->nodes) {
            rl_link_lost(l, "bad LINK message");
            return false;
        }
        RlPort *p = rl_port_of(l, s->net);
        if (p) {
            /* a departure is host-timed (docs/fabric.md): never in our past */
            p->ops->link(p->opaque, MAX(h->time_ns, rl_now()), s->peer, s->up);
        }
        return false;
    }
    case RL_MSG_GRANT:
        if (n != sizeof(*h) || h->time_ns < l->grant) {
            rl_link_lost(l, "bad GRANT");
            return false;
        }
        l->grant = h->time_ns;
        return true;
    case RL_MSG_BARRIER_AT: {
        const struct rl_barrier *b = (const void *)l->buf;
        if (n != sizeof(*b) || l->barrier != RL_BS_ARRIVED || h->time_ns < rl_now()) {
            rl_link_lost(l, "bad BARRIER_AT");
            return false;
        }
        l->barrier_t = h->time_ns;
        l->barrier_save = b->flags & RL_BARRIER_SAVE;
        l->barrier = RL_BS_RUNNING;
        l->barrier_released(l->barrier_opaque, l->barrier_t);
        return false;
    }
    case RL_MSG_ERROR: {
        const struct rl_error *e = (const void *)l->buf;
        char text[RL_ERROR_TEXT_LEN + 1] = "";
        if (n >= sizeof(*e)) {
            memcpy(text, e->text, RL_ERROR_TEXT_LEN);
        }
        rl_link_lost(l, text[0] ? text : "the fabric reported an error");
        return false;
    }
    default:
        rl_link_lost(l, "unexpected message type from the fabric");
        return false;
    }
}

/* Stop the clock at the grant. */
static void rl_arm_sync(RlLink *l)
{
    /*
     * The timer fires at the first instruction boundary at or after the grant;
     * the fabric knows our granularity and leaves room for it.
     */
    if (l->grant >= INT64_MAX) {
        timer_del(l->sync_timer);   /* nobody can send to us any more: run free */
    } else {
        timer_mod_ns(l->sync_timer, l->grant);
    }
    l->armed_at = rl_now();
}

/*
 * Stop the clock at the grant, and publish half-way there, or later: not before
 * @not_before (the end of the TB the vCPU is about to run, in the vCPU loop).
 */
static void rl_arm_after(RlLink *l, uint64_t not_before)
{
    uint64_t now = rl_now();
    uint64_t at = MAX(now + (l->grant - now) / 2, not_before);

    rl_arm_sync(l);
    /*
     * Publish half-way too, without waiting: a peer granted up to our last
     * publication plus the lookahead can then run while we do, instead of the
     * two taking turns. It is an external timer, which the idle warp ignores:
     * an idle guest's clock still jumps straight to its next event.
     */
    if (l->progress_timer && l->grant < INT64_MAX && l->grant - now >= RL_PROGRESS_MIN_NS &&
        at < l->grant) {
        timer_mod_ns(l->progress_timer, at);
    } else if (l->progress_timer) {
        timer_del(l->progress_timer);
    }
}

static void rl_arm(RlLink *l)
{
    rl_arm_after(l, 0);
}

static void rl_bye(RlLink *l)
{
    struct rl_msg_hdr bye;

    /* before WELCOME (QEMU quits during setup) the fabric is owed no BYE: EOF says it */
    if (!l->up || !l->started) {
        return;
    }
    rl_msg_hdr_init(&bye, RL_MSG_BYE, sizeof(bye), l->node, rl_now());
    rl_write(l, &bye, sizeof(bye));
    l->up = false;
    if (l->sync_timer) {
        timer_del(l->sync_timer);
    }
}

/* The node's promise: the least over its ports (each asked, so each can plan). */
static uint64_t rl_promise(RlLink *l, uint64_t now, uint64_t guest)
{
    uint64_t promise = RL_TIME_NEVER;

    for (uint32_t i = 0; i < l->nports; i++) {
        promise = MIN(promise, l->ports[i]->ops->promise(l->ports[i]->opaque, now, guest));
    }
    return MAX(promise, now);
}

static bool rl_wait_for_grant(RlLink *l, uint64_t now);

/* A grant came (from the file or the socket): take it and publish it. */
static void rl_take_grant(RlLink *l, uint64_t grant)
{
    if (l->barrier == RL_BS_RUNNING) {
        grant = MIN(grant, l->barrier_t);   /* the fabric caps it too: never past it */
    }
    l->grant = MAX(l->grant, grant);
    trace_retrolink_link_grant(l->node, l->grant);
    if (l->ls) {
        rl_lockstep_set_grant(l->ls, l->grant);
    }
}

/* At a sync point: take the grant and run to it, publishing half-way. */
static void rl_granted(RlLink *l, uint64_t grant)
{
    rl_take_grant(l, grant);
    rl_arm(l);
}

/* Tell the fabric we moved: a peer waits on the socket */
static void rl_send_progress(RlLink *l, uint64_t now)
{
    struct rl_msg_hdr m;

    rl_msg_hdr_init(&m, RL_MSG_PROGRESS, sizeof(m), l->node, now);
    rl_write(l, &m, sizeof(m));
    l->progress_told = true;
}

/* Publish this sync point; if a peer sleeps on the socket, have the fabric look. */
static void rl_lockstep_sync_point(RlLink *l, uint64_t now, uint64_t promise)
{
    rl_lockstep_publish(l->ls, now, promise, l->frames_sent, l->grant);
    l->progress_told = false;
    if (rl_lockstep_peer_waits(l->ls)) {
        rl_send_progress(l, now);
    }
}

/*
 * Before we wait ourselves (right after publishing, at the same virtual time): a
 * peer asleep on the socket must hear of that publication, or we might wait for each
 * other until the fallback's timeout. A publication does not fence (a full fence
 * waited for the stores to reach the core that reads them: about 5% of a busy node's
 * time at 2 us of lookahead); this does, once per wait, and a node that runs on
 * publishes again soon.
 */
static void rl_lockstep_before_wait(RlLink *l)
{
    if (!l->progress_told && rl_lockstep_peer_waits_fenced(l->ls)) {
        rl_send_progress(l, rl_now());
    }
}

/* Where a sync point looks for a grant in the lock-step file */
typedef enum RlWait {
    RL_WAIT_IN_LOOP,   /* in the vCPU loop (the deadline hook): never read the socket */
    RL_WAIT_FULL,      /* at the sync timer: read the DELIVERs the reading counts on */
} RlWait;

/*
 * At a sync point, look for a grant of our own in the lock-step file, past @beyond,
 * and for up to RL_FIT_NS at least @fit: spin, then yield, as above. False: ask the
 * fabric (or, in the loop, leave it to the sync point proper).
 */
static bool rl_lockstep_wait(RlLink *l, uint64_t beyond, uint64_t fit, uint64_t *grant,
                             RlWait how)
{
    int64_t start = get_clock(), t = start;
    int64_t spin_until = rl_lockstep_crowded(l->ls) ? start : start + RL_SPIN_NS;
    bool fenced = false;

    for (unsigned i = 1; l->up; i++) {
        int r = rl_lockstep_grant(l->ls, l->msgs_in, l->granularity, grant);
        if (r == RL_LS_OFF) {
            return false;               /* the file failed its check: the socket only */
        }
        if (r == RL_LS_UNREAD) {
            if (how != RL_WAIT_FULL) {
                return false;
            }
            ssize_t n = rl_read(l, 0);      /* a DELIVER the reading counts on */
            if (n > 0) {
                rl_dispatch(l, n);
            }
            continue;
        }
        if (r == RL_LS_OK && *grant > beyond && (*grant >= fit || t >= start + RL_FIT_NS)) {
            return true;
        }
        if (!fenced) {
            rl_lockstep_before_wait(l);
            fenced = true;
        }
        if (i % 4 == 0 || t >= spin_until) {
            t = get_clock();    /* once yielding, every look is a system call anyway */
            if (t > start + RL_YIELD_NS || qemu_shutdown_requested_get()) {
                return false;
            }
        }
        if (t >= spin_until) {
            sched_yield();
        } else {
            for (int p = 0; p < RL_SPIN_PAUSES; p++) {
                cpu_relax();
            }
        }
    }
    return false;
}

/*
 * The promise now: the guest may next act now if it runs, at its next timer if it
 * is halted (*guest). Our own half-way timer is no guest event: it goes first.
 */
static uint64_t rl_node_promise(RlLink *l, uint64_t now, uint64_t *guest)
{
    *guest = now;
    if (first_cpu && cpu_thread_is_idle(first_cpu)) {
        /*
         * Only here: while the guest runs the half-way timer is never pending at a
         * sync point (it lies before the grant, and rl_progress_cb deletes it), and a
         * timer_del at every sync point would cost a mutex for nothing
         */
        if (l->progress_timer) {
            timer_del(l->progress_timer);
        }
        int64_t d = qemu_clock_deadline_ns_all(QEMU_CLOCK_VIRTUAL, QEMU_TIMER_ATTR_ALL);
        *guest = d < 0 ? RL_TIME_NEVER : now + d;
    }
    return rl_promise(l, now, *guest);
}

/*
 * Half-way to the grant: publish where we are, take a longer grant if the
 * reading gives one, never wait (the sync timer at the grant does).
 */
static void rl_progress_cb(void *opaque)
{
    RlLink *l = opaque;
    uint64_t now = rl_now(), guest, grant;

    if (!l->up || now >= l->grant || qemu_shutdown_requested_get() || l->stopping ||
        (l->reached && now <= l->reached)) {
        return;     /* (the last: a wait published further, the vCPU held past it) */
    }
    if (timer_pending(l->progress_timer)) {
        timer_del(l->progress_timer);       /* called from the deadline hook */
    }
    uint64_t promise = rl_node_promise(l, now, &guest);
    l->promised = promise;
    rl_lockstep_sync_point(l, now, promise);
    /* one half-way publication per window: each costs the vCPU an exit */
    if (rl_lockstep_grant(l->ls, l->msgs_in, l->granularity, &grant) == RL_LS_OK &&
        grant > l->grant) {
        rl_take_grant(l, grant);
        rl_arm_sync(l);
    }
}

/* Whether timer @t (ours) would end the vCPU's budget inside the TB it is about to run */
static bool rl_cuts_tb(QEMUTimer *t, uint64_t budget_end, uint64_t tb_end)
{
    return t && timer_pending(t) && (timer_expire_time_ns(t) <= budget_end ||
                                     timer_expire_time_ns(t) < tb_end);
}

/*
 * A sync point inside cpu_exec (QEMU patch 0007): the vCPU's budget ends within
 * horizon_ns, inside the next TB (tb_ns long), at our grant or just short of it
 * (publish, and look for a longer grant as rl_lockstep_wait does, for up to RL_FIT_NS
 * one past the TB's end, so that the TB runs whole) or half-way to it (publish).
 * True if a timer moved:
 * the vCPU then runs on to the new nearest deadline without an exit. Whatever
 * this does not settle (a barrier, a DELIVER to read, no grant yet) the sync
 * point proper does, from its expired timer. Publishing early is always allowed: a node may
 * say where it is at any time up to its grant.
 */
static bool rl_deadline_hook(void *opaque, int64_t horizon_ns, int64_t tb_ns)
{
    RlLink *l = opaque;
    uint64_t now, budget_end, tb_end, guest, grant;
    bool moved = false;

    BQL_LOCK_GUARD();   /* the ports' promise callbacks read device state */
    if (!l->up || l->stopping || qemu_shutdown_requested_get() ||
        (l->barrier != RL_BS_NONE && l->barrier != RL_BS_PASSED)) {
        return false;
    }
    now = rl_now();
    budget_end = now + horizon_ns;
    tb_end = now + tb_ns;
    bool sync_cuts = rl_cuts_tb(l->sync_timer, budget_end, tb_end);
    if (!sync_cuts && rl_cuts_tb(l->progress_timer, budget_end, tb_end)) {
        rl_progress_cb(l);
        moved = true;
        /* it may have taken a longer grant, and that may still end inside the TB */
        sync_cuts = rl_cuts_tb(l->sync_timer, budget_end, tb_end);
    }
    if (sync_cuts) {
        l->promised = rl_node_promise(l, now, &guest);
        if (now >= l->grant) {
            /* the budget ran out where the sync timer would have fired */
            trace_retrolink_link_sync(l->node, now, guest, l->promised);
        } else {
            trace_retrolink_link_sync_early(l->node, now, l->grant, l->promised);
        }
        rl_lockstep_sync_point(l, now, l->promised);
        /* a grant past the TB's end lets it run whole: worth a few microseconds */
        if (rl_lockstep_wait(l, MAX(now, l->grant), tb_end, &grant, RL_WAIT_IN_LOOP)) {
            rl_take_grant(l, grant);
            rl_arm_after(l, tb_end);
            rl_lockstep_count_exec_grant(l->ls);
            moved = true;
        }
    }
    return moved;
}

static bool rl_barrier_send(RlLink *l, uint64_t now, uint32_t flags)
{
    struct rl_barrier b = { .flags = flags };

    rl_msg_hdr_init(&b.h, RL_MSG_BARRIER, sizeof(b), l->node, now);
    return rl_write(l, &b, sizeof(b));
}

/*
 * The guest arrived at the boot barrier: say so, promising nothing (a held node
 * sends nothing), and wait, holding the clock, for BARRIER_AT: every node arrived,
 * run to the barrier's time. False if the link was lost or QEMU is quitting.
 */
static bool rl_barrier_hold(RlLink *l, uint64_t now)
{
    if (l->progress_timer) {
        timer_del(l->progress_timer);
    }
    if (l->ls) {
        rl_lockstep_publish(l->ls, now, RL_TIME_NEVER, l->frames_sent, l->grant);
    }
    trace_retrolink_link_barrier(l->node, "held", now);
    if (!rl_barrier_send(l, now, RL_BARRIER_HELD)) {
        return false;
    }
    while (l->barrier == RL_BS_ARRIVED) {
        ssize_t n = rl_read(l, RL_POLL_MS);
        if (n < 0) {
            return false;
        }
        if (n == 0) {
            if (qemu_shutdown_requested_get() || l->stopping) {
                rl_bye(l);
                return false;
            }
            continue;
        }
        rl_dispatch(l, n);
        if (!l->up) {
            return false;
        }
    }
    /* never past the barrier's time, whatever grant the node held when it arrived */
    l->grant = l->barrier_t;
    trace_retrolink_link_grant(l->node, l->grant);
    if (l->ls) {
        rl_lockstep_set_grant(l->ls, l->grant);
    }
    trace_retrolink_link_barrier(l->node, "runs to", l->barrier_t);
    return true;
}

/*
 * At the barrier's time, asked for a snapshot: publish, tell the fabric, and stop
 * the VM (the runner saves it, then resumes it). The clock has no timer left: the
 * resume arms a sync point at once (rl_vm_state_change).
 */
static void rl_barrier_stop(RlLink *l, uint64_t now)
{
    uint64_t guest;

    l->promised = rl_node_promise(l, now, &guest);
    if (l->ls) {
        rl_lockstep_publish(l->ls, now, l->promised, l->frames_sent, l->grant);
    }
    trace_retrolink_link_barrier(l->node, "stopped", now);
    if (rl_barrier_send(l, now, RL_BARRIER_STOPPED)) {
        l->barrier = RL_BS_STOPPED;
        rl_clock_hold_start(&l->hold);
        vm_stop(RUN_STATE_PAUSED);
    }
}

static void rl_vm_state_change(void *opaque, bool running, RunState state)
{
    RlLink *l = opaque;

    if (running && l->barrier == RL_BS_STOPPED && l->up) {
        trace_retrolink_link_barrier(l->node, "resumed", rl_now());
        l->barrier = RL_BS_PASSED;
        rl_clock_hold_end(&l->hold);
        timer_mod_ns(l->sync_timer, rl_now());
    }
}

bool rl_link_barrier_arrive(void (*released)(void *opaque, uint64_t t), void *opaque)
{
    RlLink *l = rl_node_link;

    if (!l || !l->up || !l->started) {
        return false;
    }
    if (l->barrier == RL_BS_NONE) {
        l->barrier = RL_BS_ARRIVED;
        l->barrier_released = released;
        l->barrier_opaque = opaque;
        /* a sync point at this very instruction boundary: the node holds there */
        timer_mod_ns(l->sync_timer, rl_now());
    }
    return true;
}

/*
 * The sync point: publish, and take a grant from the lock-step file if the rule
 * gives one soon; else report on the socket and wait for the fabric's GRANT.
 */
static void rl_sync_cb(void *opaque)
{
    RlLink *l = opaque;
    uint64_t now = rl_now();

    if (!l->up) {
        return;
    }
    if (qemu_shutdown_requested_get() || l->stopping) {
        rl_bye(l);      /* the guest powered off: leave now, not at exit */
        return;
    }
    if (now > l->grant + l->granularity - 1) {
        /* the fabric will refuse this SYNC: say what we know of how it happened */
        error_report("retrolink node %u: sync point at %" PRIu64 " is past the grant %"
                     PRIu64 " (timer armed at %" PRIu64 ", cpu idle now: %d)", l->node,
                     now, l->grant, l->armed_at, first_cpu && cpu_thread_is_idle(first_cpu));
    }
    if (l->barrier == RL_BS_ARRIVED) {
        if (!rl_barrier_hold(l, now)) {
            return;
        }
        if (now < l->barrier_t) {
            /* not a sync point at a grant: publish the promise, run to the barrier */
            uint64_t guest;
            l->promised = rl_node_promise(l, now, &guest);
            if (l->ls) {
                rl_lockstep_sync_point(l, now, l->promised);
            }
            rl_arm(l);
            return;
        }
    }
    if (l->barrier == RL_BS_RUNNING && now >= l->barrier_t) {
        if (l->barrier_save) {
            rl_barrier_stop(l, now);
            return;
        }
        l->barrier = RL_BS_PASSED;
    }
    uint64_t guest;
    struct rl_sync s = { .promise_ns = rl_node_promise(l, now, &guest) };
    rl_msg_hdr_init(&s.h, RL_MSG_SYNC, sizeof(s), l->node, now);
    l->promised = s.promise_ns;
    trace_retrolink_link_sync(l->node, now, guest, s.promise_ns);
    if (l->ls) {
        uint64_t grant;
        rl_lockstep_sync_point(l, now, s.promise_ns);
        if (rl_lockstep_wait(l, now, 0, &grant, RL_WAIT_FULL)) {
            rl_granted(l, grant);
            return;
        }
        if (!l->up) {
            return;
        }
        rl_lockstep_set_waiting(l->ls, true);
    }
    bool granted = rl_write(l, &s, sizeof(s)) && rl_wait_for_grant(l, now);
    if (l->ls) {
        rl_lockstep_set_waiting(l->ls, false);
    }
    if (granted) {
        rl_granted(l, l->grant);
    }
}

/* After a SYNC: read until a GRANT past now comes. False if the link is lost or we left. */
static bool rl_wait_for_grant(RlLink *l, uint64_t now)
{
    for (;;) {
        ssize_t n = rl_read(l, RL_POLL_MS);
        if (n < 0) {
            return false;
        }
        if (n == 0) {
            if (qemu_shutdown_requested_get()) {
                rl_bye(l);
                return false;
            }
            continue;
        }
        if (rl_dispatch(l, n) && l->grant > now) {
            return true;
        }
        if (!l->up) {
            return false;
        }
    }
}

void rl_port_send(RlPort *p, uint64_t ready_ns, uint32_t dst, uint32_t flags,
                  const void *data, uint32_t len)
{
    RlLink *l = p ? p->link : NULL;

    if (!l || !l->up || !l->started || len > RL_MAX_PAYLOAD) {
        return;
    }
    if (ready_ns < l->promised) {
        /* only possible when the guest was woken from outside the model */
        l->violations++;
        trace_retrolink_link_late_frame(l->node, ready_ns, l->promised);
        if (l->violations == 1) {
            error_report("retrolink node %u: frame ready at %" PRIu64 " before the promise "
                         "%" PRIu64 " (the guest woke from outside the model); delayed",
                         l->node, ready_ns, l->promised);
        }
        ready_ns = l->promised;
    }
    ready_ns = MAX(ready_ns, p->last_ready);
    p->last_ready = ready_ns;

    struct rl_frame *f = (void *)l->buf;
    memset(f, 0, sizeof(*f));
    rl_msg_hdr_init(&f->h, RL_MSG_FRAME, sizeof(*f) + len, l->node, ready_ns);
    f->src = l->node;
    f->dst = dst;
    f->len = len;
    f->flags = flags;
    f->seq = p->seq++;
    f->net = p->net;
    memcpy(l->buf + sizeof(*f), data, len);
    if (rl_write(l, l->buf, sizeof(*f) + len)) {
        l->frames_sent++;
        if (l->ls) {
            rl_lockstep_live_frames(l->ls, l->frames_sent);
        }
    }
}

/*
 * One round of rl_port_wait: publish a sync point at now and take a grant, from the
 * lock-step file if it gives one past the last, else from the fabric on the socket
 * (which answers a SYNC as soon as it can grant past now: possibly the grant we hold).
 */
static bool rl_wait_round(RlLink *l, uint64_t now)
{
    uint64_t guest, grant, before = l->grant;
    struct rl_sync s = { .promise_ns = rl_node_promise(l, now, &guest) };

    rl_msg_hdr_init(&s.h, RL_MSG_SYNC, sizeof(s), l->node, now);
    l->promised = s.promise_ns;
    trace_retrolink_link_sync(l->node, now, guest, s.promise_ns);
    if (l->ls) {
        rl_lockstep_sync_point(l, now, s.promise_ns);
        if (rl_lockstep_wait(l, before, 0, &grant, RL_WAIT_FULL)) {
            rl_take_grant(l, grant);
            return true;
        }
        if (!l->up) {
            return false;
        }
        rl_lockstep_set_waiting(l->ls, true);
    }
    bool granted = rl_write(l, &s, sizeof(s)) && rl_wait_for_grant(l, now);
    if (l->ls) {
        rl_lockstep_set_waiting(l->ls, false);
    }
    if (granted) {
        rl_take_grant(l, l->grant);
        if (l->grant == before) {
            g_usleep(20);       /* no peer moved yet: let them run before asking again */
        }
    }
    return granted;
}

bool rl_port_wait(RlPort *p, bool (*done)(void *opaque),
                  void (*progress)(void *opaque, uint64_t grant), void *opaque)
{
    RlLink *l = p ? p->link : NULL;
    uint64_t now = rl_now();
    bool ok = true;

    if (!l || !l->up || !l->started ||
        (l->barrier != RL_BS_NONE && l->barrier != RL_BS_PASSED)) {
        return false;
    }
    if (l->progress_timer) {
        timer_del(l->progress_timer);
    }
    trace_retrolink_link_wait(l->node, now, l->grant);
    uint64_t last_grant = l->grant;
    int64_t moved_at = get_clock();
    while (!done(opaque)) {
        if (l->grant >= INT64_MAX || qemu_shutdown_requested_get() || l->stopping ||
            !rl_wait_round(l, MAX(now, l->reached))) {
            ok = false;         /* nothing can come any more, or we leave */
            break;
        }
        progress(opaque, l->grant);
        if (!done(opaque) && l->grant > l->reached + 1) {
            /*
             * The device ran its events to the grant, and the vCPU will not go on before
             * the access ends, after them: the node has reached grant - 1, and says so
             * at its next round. Else the frames delivered to it before the grant, which
             * it has taken, would keep bounding its reaction (docs/fabric.md, "The
             * synchronisation rule": arrivals count until the node's time passes them),
             * and two nodes each waiting for the other's answer to its own load could
             * hold each other's grant just short of that answer for ever.
             */
            l->reached = l->grant - 1;
        }
        if (l->grant != last_grant) {
            last_grant = l->grant;
            moved_at = get_clock();
        } else if (get_clock() - moved_at > RL_WAIT_STUCK_NS) {
            /*
             * No grant for this long: the peer that would answer does not run (it is
             * held at its boot barrier, which this node has not reached). Better a
             * failed access, said loudly, than a cluster that never ends.
             */
            error_report("retrolink node %u: an access at %" PRIu64 " ns waited %d s of "
                         "host time for the fabric with no grant past %" PRIu64 " ns (a "
                         "peer held at its boot barrier?); it fails", l->node, now,
                         RL_WAIT_STUCK_S, l->grant);
            ok = false;
            break;
        }
    }
    if (l->up) {
        rl_arm(l);
    }
    return ok;
}

uint64_t rl_port_reached(RlPort *p)
{
    return p && p->link ? p->link->reached : 0;
}

bool rl_port_is_up(RlPort *p)
{
    return p && p->link && p->link->up;
}

bool rl_port_notices(RlPort *p)
{
    return p && p->link && (p->link->notice_nets >> p->net & 1);
}

uint64_t rl_port_causality_violations(RlPort *p)
{
    return p->link->violations + p->link->late_delivers;
}

static void rl_link_free(RlLink *l)
{
    rl_bye(l);
    qemu_remove_exit_notifier(&l->exit_notifier);
    notifier_remove(&l->shutdown_notifier);
    if (l->machine_done.notify) {
        qemu_remove_machine_init_done_notifier(&l->machine_done);
    }
    if (l->vm_state) {
        qemu_del_vm_change_state_handler(l->vm_state);
    }
    if (rl_node_link == l) {
        icount_set_deadline_hook(NULL, NULL);
        icount_set_budget_hook(NULL, NULL, NULL);
    }
    rl_clock_hold_destroy(&l->hold);
    if (l->sync_timer) {
        timer_free(l->sync_timer);
    }
    if (l->progress_timer) {
        timer_free(l->progress_timer);
    }
    close(l->fd);
    rl_lockstep_close(l->ls);
    g_free(l->socket_path);
    g_free(l->buf);
    g_free(l);
    if (rl_node_link == l) {
        rl_node_link = NULL;
    }
}

void rl_port_close(RlPort *p)
{
    if (!p) {
        return;
    }
    RlLink *l = p->link;
    for (uint32_t i = 0; i < l->nports; i++) {
        if (l->ports[i] == p) {
            l->ports[i] = l->ports[--l->nports];
            break;
        }
    }
    g_free(p);
    if (!l->nports) {
        rl_link_free(l);
    }
}

/*
 * The main loop may consume a shutdown request before our next sync point
 * sees it; this runs then (main thread, BQL held), so that sync point says BYE.
 */
static void rl_shutdown_notify(Notifier *n, void *data)
{
    RlLink *l = container_of(n, RlLink, shutdown_notifier);
    l->stopping = true;
}

static void rl_exit_notify(Notifier *n, void *data)
{
    RlLink *l = container_of(n, RlLink, exit_notifier);
    rl_bye(l);
}

/* HELLO, an ATTACH per port, then WELCOME: false with errp set if it did not come. */
static bool rl_link_start(RlLink *l, Error **errp)
{
    struct rl_hello hello = { .reaction_ns = l->reaction, .ports = l->nports,
                              .granularity_ns = l->granularity };
    rl_msg_hdr_init(&hello.h, RL_MSG_HELLO, sizeof(hello), l->node, rl_now());
    g_strlcpy(hello.name, l->name, sizeof(hello.name));
    if (!rl_write(l, &hello, sizeof(hello))) {
        error_setg(errp, "cannot say HELLO to the fabric at %s", l->socket_path);
        return false;
    }
    for (uint32_t i = 0; i < l->nports; i++) {
        struct rl_attach a = { .net = l->ports[i]->net, .protocol = l->ports[i]->protocol };
        rl_msg_hdr_init(&a.h, RL_MSG_ATTACH, sizeof(a), l->node, rl_now());
        if (!rl_write(l, &a, sizeof(a))) {
            error_setg(errp, "cannot attach network %u at the fabric", a.net);
            return false;
        }
    }
    ssize_t n = rl_read(l, RL_WELCOME_TIMEOUT_MS);
    const struct rl_welcome *w = (const void *)l->buf;
    if (n <= 0 || w->h.type != RL_MSG_WELCOME || n != sizeof(*w) ||
        w->nodes == 0 || w->nodes > RL_MAX_NODES || l->node >= w->nodes) {
        if (n > 0 && w->h.type == RL_MSG_ERROR) {
            const struct rl_error *e = (const void *)l->buf;
            error_setg(errp, "the fabric refused node %u: %.*s", l->node,
                       RL_ERROR_TEXT_LEN, e->text);
        } else {
            error_setg(errp, "no WELCOME from the fabric at %s within %d s "
                       "(did every node of the cluster start?)", l->socket_path,
                       RL_WELCOME_TIMEOUT_MS / 1000);
        }
        return false;
    }
    l->nodes = w->nodes;
    l->notice_nets = w->notice_nets;
    for (uint32_t i = 0; i < l->nports; i++) {
        RlPort *p = l->ports[i];
        if ((l->notice_nets >> p->net & 1) && !p->ops->notice) {
            error_setg(errp, "network %u sends notices of each frame sent (a hub), which "
                       "this port's device does not take", p->net);
            return false;
        }
    }
    l->grant = w->h.time_ns;
    l->started = true;
    return true;
}

/* The least lead over the ports (RlPortOps.lead): RL_TIME_NEVER if one has none */
static uint64_t rl_lead(RlLink *l)
{
    uint64_t lead = RL_TIME_NEVER;

    for (uint32_t i = 0; i < l->nports; i++) {
        const RlPortOps *ops = l->ports[i]->ops;
        if (!ops->lead) {
            return RL_TIME_NEVER;
        }
        lead = MIN(lead, ops->lead(l->ports[i]->opaque));
    }
    return lead;
}

/*
 * The lead published (rl_lead), or, for the tests that show a lead too long is caught
 * (a peer granted past a frame the node then sends counts a causality violation),
 * that lead plus RETROLINK_LIVE_LEAD_EXTRA_NS from the environment.
 */
static uint64_t rl_test_lead(RlLink *l)
{
    uint64_t lead = rl_lead(l);
    const char *extra = getenv("RETROLINK_LIVE_LEAD_EXTRA_NS");
    uint64_t ns;

    if (lead == RL_TIME_NEVER || !extra || qemu_strtou64(extra, NULL, 10, &ns) < 0 ||
        ns >= RL_TIME_NEVER - lead) {
        return lead;
    }
    warn_report("retrolink node %u: the live clock's lead is %" PRIu64 " ns too long "
                "(RETROLINK_LIVE_LEAD_EXTRA_NS): a test of the causality count", l->node, ns);
    return lead + ns;
}

/* The least pending floor over the ports (RlPortOps.pending): RL_TIME_NEVER if none */
static uint64_t rl_pending(RlLink *l)
{
    uint64_t floor = RL_TIME_NEVER;
    uint64_t now = rl_now();

    for (uint32_t i = 0; i < l->nports; i++) {
        const RlPortOps *ops = l->ports[i]->ops;
        if (ops->pending) {
            floor = MIN(floor, ops->pending(l->ports[i]->opaque, now));
        }
    }
    return floor;
}

void rl_port_pending_changed(RlPort *p)
{
    RlLink *l = p ? p->link : NULL;

    if (!l || !l->live) {
        return;
    }
    uint64_t floor = rl_pending(l);
    if (floor != l->pending) {
        l->pending = floor;
        rl_lockstep_live_pending(l->ls, floor);
    }
}

/* QEMU set the vCPU's budget (QEMU patch 0008): publish it for the live clock */
static void rl_budget_hook(void *opaque, int64_t now, int64_t insns, int64_t extra,
                           uint16_t decr)
{
    RlLink *l = opaque;

    rl_lockstep_live_budget(l->ls, now, insns, extra, decr);
}

/*
 * Every device has realized: wait for the cluster once, then start the clock. A
 * node the fabric will not take cannot run its model: QEMU ends, saying why.
 */
static void rl_machine_done(Notifier *n, void *data)
{
    RlLink *l = container_of(n, RlLink, machine_done);
    Error *err = NULL;

    if (l->started) {
        return;
    }
    if (!rl_link_start(l, &err)) {
        error_reportf_err(err, "retrolink node %u: ", l->node);
        exit(1);
    }
    l->sync_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rl_sync_cb, l);
    l->vm_state = qemu_add_vm_change_state_handler(rl_vm_state_change, l);
    rl_clock_hold_init(&l->hold);
    uint16_t *mirror = NULL;
    if (l->ls && rl_lockstep_start(l->ls, l->nodes)) {  /* final by WELCOME */
        icount_set_deadline_hook(rl_deadline_hook, l);
        /* "off": peers see only the sync points, to measure what the clock saves */
        const char *live = getenv("RETROLINK_LIVE_CLOCK");
        if (!live || strcmp(live, "off")) {
            mirror = rl_lockstep_live_start(l->ls, icount_ns_mult(), rl_test_lead(l));
        }
        if (mirror) {
            l->live = true;
            l->pending = rl_pending(l);
            rl_lockstep_live_pending(l->ls, l->pending);
            icount_set_budget_hook(rl_budget_hook, l, mirror);
        }
    }
    /* a node whose peers follow its live clock need not publish half-way */
    if (l->ls && !rl_lockstep_crowded(l->ls) && !mirror) {
        l->progress_timer = timer_new_full(NULL, QEMU_CLOCK_VIRTUAL, SCALE_NS,
                                           QEMU_TIMER_ATTR_EXTERNAL, rl_progress_cb, l);
    }
    rl_arm(l);
    for (uint32_t i = 0; i < l->nports; i++) {
        l->ports[i]->ops->welcome(l->ports[i]->opaque, l->nodes);
    }
}

static RlLink *rl_link_connect(const char *socket_path, uint32_t node, Error **errp)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };

    if (strlen(socket_path) >= sizeof(addr.sun_path)) {
        error_setg(errp, "fabric socket path too long: %s", socket_path);
        return NULL;
    }
    if (!icount_enabled() && !qtest_enabled()) {
        error_setg(errp, "retrolink devices need -icount shift=N,sleep=off or mips=X,sleep=off "
                   "(virtual time must be guest instructions)");
        return NULL;
    }
    strcpy(addr.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        error_setg_errno(errp, errno, "cannot connect to the fabric at %s", socket_path);
        if (fd >= 0) {
            close(fd);
        }
        return NULL;
    }

    RlLink *l = g_new0(RlLink, 1);
    l->fd = fd;
    l->socket_path = g_strdup(socket_path);
    l->node = node;
    l->up = true;
    l->buf = g_malloc(RL_MSG_MAX);
    l->granularity = MAX(icount_to_ns_max(1), 1);
    l->ls = rl_lockstep_open(socket_path, node);
    l->reaction = RL_TIME_NEVER;
    l->exit_notifier.notify = rl_exit_notify;
    qemu_add_exit_notifier(&l->exit_notifier);
    l->shutdown_notifier.notify = rl_shutdown_notify;
    qemu_register_shutdown_notifier(&l->shutdown_notifier);
    return l;
}

RlPort *rl_port_attach(const char *socket_path, uint32_t node, uint32_t net,
                       uint32_t protocol, const char *name, uint64_t reaction_ns,
                       const RlPortOps *ops, void *opaque, Error **errp)
{
    RlLink *l = rl_node_link;

    if (net >= RL_MAX_NETWORKS) {
        error_setg(errp, "network %u: ids are below %d", net, RL_MAX_NETWORKS);
        return NULL;
    }
    if (l && (strcmp(l->socket_path, socket_path) || l->node != node)) {
        error_setg(errp, "every retrolink board of a QEMU is one node on one fabric "
                   "(node %u at %s), not node %u at %s", l->node, l->socket_path, node,
                   socket_path);
        return NULL;
    }
    if (l && l->started) {
        error_setg(errp, "the cluster has started: a port cannot be added now");
        return NULL;
    }
    if (l && rl_port_of(l, net)) {
        error_setg(errp, "network %u has a port of this node already (one per network)",
                   net);
        return NULL;
    }
    bool first = !l;
    if (first) {
        l = rl_link_connect(socket_path, node, errp);
        if (!l) {
            return NULL;
        }
        g_strlcpy(l->name, name, sizeof(l->name));
        rl_node_link = l;
    }
    RlPort *p = g_new0(RlPort, 1);
    p->link = l;
    p->net = net;
    p->protocol = protocol;
    p->ops = ops;
    p->opaque = opaque;
    l->ports[l->nports++] = p;
    l->reaction = MIN(l->reaction, reaction_ns);
    if (first) {
        /* runs at once if the machine is ready already (a netdev added later) */
        l->machine_done.notify = rl_machine_done;
        qemu_add_machine_init_done_notifier(&l->machine_done);
    }
    return p;
}
