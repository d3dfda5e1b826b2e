/*
 * PUMA-II board: its controller. It takes the host's page requests from the command
 * FIFO and answers them in the response FIFO, and keeps the boards' memories
 * consistent with IVY's write-invalidate protocol under a fixed distributed manager
 * (retrolink/proto/puma2.h; docs/boards/puma2.md, "Consistency"), copying pages
 * board to board over the ring with no host software on either side.
 *
 * Every command and every message costs the controller 'request-ns' (one job at a
 * time: RlServer), a page moved between board memory and the ring's buffers costs the
 * copy engine 4 KiB at 'copy-rate'. A message to this board itself (the manager or
 * owner of a page is often the requester) is handled in the same job, with no frame.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"

#include "puma2.h"
#include "hw/retrolink/trace.h"

static void dsm_handle(Puma2State *s, uint32_t src, const Puma2Wire *h, const uint8_t *data);

static inline uint32_t bit(uint32_t n)
{
    return 1u << n;
}

static uint32_t manager_of(Puma2State *s, uint32_t page)
{
    return page % s->rl->nodes;
}

static uint64_t copy_ns(Puma2State *s)
{
    return rl_bytes_ns(PUMA2_PAGE, s->copy_rate);
}

/* Every page starts at its manager, owned and writable there, zero. */
void puma2_dsm_init(Puma2State *s)
{
    memset(s->pages, 0, sizeof(Puma2Page) * s->npages);
    for (uint32_t p = 0; p < s->npages; p++) {
        Puma2Page *pg = &s->pages[p];
        pg->owner = manager_of(s, p);
        pg->mgr_last = pg->owner;
        if (pg->owner == s->rl->node) {
            pg->is_owner = 1;
            pg->access = PUMA2_ACC_WRITE;
        }
    }
    memset(s->mem_ptr, 0, (size_t)s->npages * PUMA2_PAGE);
}

/* ---- time waiting on the ring (PUMA2_REG_NET_NS) ---------------------------------- */

static uint64_t net_span(Puma2State *s)
{
    uint64_t span = puma2_now() - s->net_since;
    uint64_t bus = s->bus_ns - s->bus_at_net_since;

    return span - MIN(span, bus);
}

uint64_t puma2_net_ns(Puma2State *s)
{
    return s->net_ns + (s->remote_waits ? net_span(s) : 0);
}

static void net_wait_begin(Puma2State *s)
{
    if (s->remote_waits++ == 0) {
        s->net_since = puma2_now();
        s->bus_at_net_since = s->bus_ns;
    }
}

static void net_wait_end(Puma2State *s)
{
    if (s->remote_waits && --s->remote_waits == 0) {
        s->net_ns += net_span(s);
    }
}

/* ---- the response FIFO ------------------------------------------------------------ */

static bool resp_room(Puma2State *s)
{
    return s->resp.count + s->resp_reserved < PUMA2_RESP_DEPTH;
}

/* Answer a command taken (its reserved entry). */
static void respond(Puma2State *s, uint32_t page, uint32_t kind, uint32_t status)
{
    if (s->resp_reserved) {
        s->resp_reserved--;
    }
    rl_fifo_push(&s->resp, PUMA2_RESP(page, kind, status));
    trace_retrolink_puma2_resp(s->rl->node, page, kind, status, puma2_now());
    rl_board_raise(s->rl, PUMA2_IRQ_RESP);
}

/* RECALLs waiting for room in the response FIFO, in page order. */
static void recalls_flush(Puma2State *s)
{
    for (uint32_t p = 0; s->recalls_wanted && p < s->npages && resp_room(s); p++) {
        if (s->pages[p].recall == PUMA2_RECALL_WANTED) {
            s->pages[p].recall = PUMA2_RECALL_SENT;
            s->recalls_wanted--;
            s->resp_reserved++;
            respond(s, p, PUMA2_KIND_RECALL, PUMA2_ST_OK);
        }
    }
}

static void recall(Puma2State *s, uint32_t page)
{
    if (s->pages[page].recall == PUMA2_RECALL_NONE) {
        s->pages[page].recall = PUMA2_RECALL_WANTED;
        s->recalls_wanted++;
        recalls_flush(s);
    }
}

/* ---- messages --------------------------------------------------------------------- */

static void send_msg(Puma2State *s, uint32_t dst, uint8_t type, uint8_t op, uint32_t page,
                     uint32_t from, uint32_t copyset)
{
    Puma2Wire h = { .type = type, .op = op, .page = page, .from = from, .copyset = copyset };

    if (dst == s->rl->node || !s->rl->port) {
        dsm_handle(s, s->rl->node, &h, NULL);
        return;
    }
    trace_retrolink_puma2_msg_out(s->rl->node, dst, type, op, page, puma2_now());
    s->msgs_out++;
    rl_port_send(s->rl->port, puma2_now(), dst, 0, &h, sizeof(h));
}

/*
 * A PAGE to the requester: with the bytes, the copy engine first moves the page into
 * the ring's transmit buffer (PUMA2_EV_SEND), which reads board memory then.
 */
static void send_page(Puma2State *s, uint32_t dst, uint8_t op, uint32_t page,
                      uint32_t copyset, bool data)
{
    if (!data) {
        send_msg(s, dst, PUMA2_MSG_PAGE, op, page, dst, copyset);
        return;
    }
    Puma2Msg *m = g_malloc0(sizeof(Puma2Msg) + PUMA2_PAGE);
    m->peer = dst;
    m->hdr = (Puma2Wire) { .type = PUMA2_MSG_PAGE, .op = op, .flags = PUMA2_MSG_F_DATA,
                           .page = page, .from = dst, .copyset = copyset };
    uint64_t t = rl_server_run(&s->copier, puma2_now(), copy_ns(s));
    rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, PUMA2_EV_SEND, 0, 0, m);
}

void puma2_send_event(Puma2State *s, Puma2Msg *m)
{
    memcpy(m->data, s->mem_ptr + (uint64_t)m->hdr.page * PUMA2_PAGE, PUMA2_PAGE);
    trace_retrolink_puma2_msg_out(s->rl->node, m->peer, m->hdr.type, m->hdr.op, m->hdr.page,
                                  puma2_now());
    s->msgs_out++;
    s->pages_out++;
    rl_port_send(s->rl->port, puma2_now(), m->peer, 0, &m->hdr,
                 sizeof(m->hdr) + PUMA2_PAGE);
    g_free(m);
}

/* ---- the host's side of a page ------------------------------------------------------ */

/* The page now has the access the host's pending command asked for. */
static void host_grant(Puma2State *s, uint32_t page)
{
    Puma2Page *pg = &s->pages[page];
    uint8_t pending = pg->pending;

    pg->pending = 0;
    if (pending & PUMA2_PENDING_NET) {
        net_wait_end(s);
    }
    if (pending & PUMA2_PENDING_ORPHAN) {
        return;                 /* the host that asked was reset: nothing is held */
    }
    pg->hold = MAX(pg->hold, PUMA2_PENDING_OP(pending));
    respond(s, page, PUMA2_KIND_DONE, PUMA2_ST_OK);
}

/* ---- the protocol: manager, owner, requester, copy holder ------------------------------ */

static void mgr_start(Puma2State *s, uint32_t page, uint8_t op, uint32_t from)
{
    Puma2Page *pg = &s->pages[page];

    pg->mgr_busy = 1;
    pg->mgr_last = from;
    send_msg(s, pg->owner, PUMA2_MSG_FWD, op, page, from, 0);
}

static void mgr_request(Puma2State *s, uint32_t page, uint8_t op, uint32_t from)
{
    Puma2Page *pg = &s->pages[page];

    if (pg->mgr_busy) {
        if (op == PUMA2_OP_READ) {
            pg->wait_read |= bit(from);
        } else {
            pg->wait_write |= bit(from);
        }
        return;
    }
    mgr_start(s, page, op, from);
}

/* The transaction is over: the next waiting request, round robin from the last. */
static void mgr_confirm(Puma2State *s, uint32_t page, uint8_t op, uint32_t from)
{
    Puma2Page *pg = &s->pages[page];

    if (op == PUMA2_OP_WRITE) {
        pg->owner = from;
    }
    pg->mgr_busy = 0;
    for (uint32_t i = 1; i <= s->rl->nodes; i++) {
        uint32_t n = (pg->mgr_last + i) % s->rl->nodes;
        if ((pg->wait_read | pg->wait_write) & bit(n)) {
            uint8_t next = pg->wait_write & bit(n) ? PUMA2_OP_WRITE : PUMA2_OP_READ;
            pg->wait_read &= ~bit(n);
            pg->wait_write &= ~bit(n);
            mgr_start(s, page, next, n);
            return;
        }
    }
}

static void finish_write(Puma2State *s, uint32_t page)
{
    Puma2Page *pg = &s->pages[page];

    pg->access = PUMA2_ACC_WRITE;
    pg->is_owner = 1;
    pg->copyset = 0;
    /* held before the manager hears: its next request waits for the host's release */
    host_grant(s, page);
    send_msg(s, manager_of(s, page), PUMA2_MSG_CONFIRM, PUMA2_OP_WRITE, page,
             s->rl->node, 0);
}

/* This board owns the page now: invalidate every other copy, then it is writable. */
static void start_write(Puma2State *s, uint32_t page, uint32_t copyset)
{
    Puma2Page *pg = &s->pages[page];

    copyset &= ~bit(s->rl->node);
    pg->is_owner = 1;
    pg->copyset = 0;
    pg->access = PUMA2_ACC_READ;        /* valid bytes, not yet the only copy */
    pg->acks_wanted = ctpop32(copyset);
    if (!pg->acks_wanted) {
        finish_write(s, page);
        return;
    }
    for (uint32_t n = 0; n < s->rl->nodes; n++) {
        if (copyset & bit(n)) {
            send_msg(s, n, PUMA2_MSG_INV, 0, page, s->rl->node, 0);
        }
    }
}

/* The owner gives the page to `from`: a read copy, or itself for a write. */
static void owner_serve(Puma2State *s, uint32_t page, uint8_t op, uint32_t from)
{
    Puma2Page *pg = &s->pages[page];

    if (op == PUMA2_OP_READ) {
        pg->copyset |= bit(from);
        pg->access = PUMA2_ACC_READ;
        send_page(s, from, op, page, 0, true);
        return;
    }
    uint32_t copies = pg->copyset & ~bit(from);
    bool has_copy = pg->copyset & bit(from);
    pg->access = PUMA2_ACC_NONE;
    pg->is_owner = 0;
    pg->copyset = 0;
    send_page(s, from, op, page, copies, !has_copy);
}

static void defer(Puma2State *s, uint32_t page, uint8_t what, uint8_t op, uint32_t from)
{
    Puma2Page *pg = &s->pages[page];

    pg->deferred = what;
    pg->deferred_op = op;
    pg->deferred_from = from;
    trace_retrolink_puma2_recall(s->rl->node, page, from, puma2_now());
    recall(s, page);
}

static void owner_forward(Puma2State *s, uint32_t page, uint8_t op, uint32_t from)
{
    Puma2Page *pg = &s->pages[page];

    if (from == s->rl->node) {
        /* the owner itself wants to write its read copy: no bytes move */
        start_write(s, page, pg->copyset);
        return;
    }
    if (op == PUMA2_OP_READ ? pg->hold == PUMA2_OP_WRITE : pg->hold != 0) {
        defer(s, page, PUMA2_MSG_FWD, op, from);
        return;
    }
    owner_serve(s, page, op, from);
}

static void holder_invalidate(Puma2State *s, uint32_t page, uint32_t from)
{
    Puma2Page *pg = &s->pages[page];

    if (pg->hold) {
        defer(s, page, PUMA2_MSG_INV, 0, from);
        return;
    }
    if (pg->access != PUMA2_ACC_NONE) {
        pg->access = PUMA2_ACC_NONE;
        s->invalidated++;
    }
    send_msg(s, from, PUMA2_MSG_INV_ACK, 0, page, s->rl->node, 0);
}

static void requester_page(Puma2State *s, uint32_t page, uint8_t op, uint32_t copyset,
                           const uint8_t *data)
{
    Puma2Page *pg = &s->pages[page];

    if (data) {
        memcpy(s->mem_ptr + (uint64_t)page * PUMA2_PAGE, data, PUMA2_PAGE);
        s->pages_in++;
    }
    if (op == PUMA2_OP_READ) {
        pg->access = PUMA2_ACC_READ;
        host_grant(s, page);
        send_msg(s, manager_of(s, page), PUMA2_MSG_CONFIRM, PUMA2_OP_READ, page,
                 s->rl->node, 0);
        return;
    }
    start_write(s, page, copyset);
}

/*
 * Is this message one the protocol's state here expects? A peer (or the fabric) that
 * sends another is at fault: it is dropped with a warning, and nothing changes.
 */
static const char *dsm_unexpected(Puma2State *s, uint32_t src, const Puma2Wire *h,
                                  bool data)
{
    Puma2Page *pg = &s->pages[h->page];

    switch (h->type) {
    case PUMA2_MSG_REQ:
        if (manager_of(s, h->page) != s->rl->node) {
            return "a request for a page this board does not manage";
        }
        if (h->from != src || ((pg->wait_read | pg->wait_write) & bit(src)) ||
            (pg->mgr_busy && pg->mgr_last == src)) {
            return "a second request from that board";
        }
        return NULL;
    case PUMA2_MSG_FWD:
        if (src != manager_of(s, h->page) || !pg->is_owner) {
            return "a forward for a page this board does not own";
        }
        if (h->from == s->rl->node && (h->op != PUMA2_OP_WRITE ||
                                       PUMA2_PENDING_OP(pg->pending) != PUMA2_OP_WRITE)) {
            return "a forward of this board's own request that it did not make";
        }
        return pg->deferred ? "a forward while another waits for the host" : NULL;
    case PUMA2_MSG_PAGE:
        if (PUMA2_PENDING_OP(pg->pending) != h->op || pg->acks_wanted || pg->is_owner) {
            return "a page this board did not ask for";
        }
        if (!data && (h->op == PUMA2_OP_READ || pg->access == PUMA2_ACC_NONE)) {
            return "a page without its bytes for a board with no copy";
        }
        return NULL;
    case PUMA2_MSG_INV:
        if (pg->is_owner || pg->deferred) {
            return "an invalidation of a page this board owns or is giving away";
        }
        return NULL;
    case PUMA2_MSG_INV_ACK:
        return pg->acks_wanted ? NULL : "an acknowledgement nobody waits for";
    case PUMA2_MSG_CONFIRM:
        if (manager_of(s, h->page) != s->rl->node || !pg->mgr_busy || pg->mgr_last != src) {
            return "a confirmation of no transaction";
        }
        return NULL;
    }
    return "an unknown message";
}

static void dsm_handle(Puma2State *s, uint32_t src, const Puma2Wire *h, const uint8_t *data)
{
    const char *why = dsm_unexpected(s, src, h, data != NULL);

    if (why) {
        warn_report("retrolink-puma2 node %u: dropped %s (type %u, page %u, from node %u)",
                    s->rl->node, why, h->type, h->page, src);
        return;
    }
    switch (h->type) {
    case PUMA2_MSG_REQ:
        mgr_request(s, h->page, h->op, h->from);
        break;
    case PUMA2_MSG_FWD:
        owner_forward(s, h->page, h->op, h->from);
        break;
    case PUMA2_MSG_PAGE:
        requester_page(s, h->page, h->op, h->copyset, data);
        break;
    case PUMA2_MSG_INV:
        holder_invalidate(s, h->page, h->from);
        break;
    case PUMA2_MSG_INV_ACK:
        if (--s->pages[h->page].acks_wanted == 0) {
            finish_write(s, h->page);
        }
        break;
    case PUMA2_MSG_CONFIRM:
        mgr_confirm(s, h->page, h->op, h->from);
        break;
    }
}

/* ---- frames from the ring ------------------------------------------------------------ */

/* Is this frame well formed (whatever the state)? */
bool puma2_msg_ok(Puma2State *s, const Puma2Msg *m, uint32_t len, const char **why)
{
    const Puma2Wire *h = &m->hdr;
    bool has_op = h->type != PUMA2_MSG_INV && h->type != PUMA2_MSG_INV_ACK;
    bool data = h->flags & PUMA2_MSG_F_DATA;

    if (h->type < PUMA2_MSG_REQ || h->type > PUMA2_MSG_CONFIRM) {
        *why = "unknown type";
    } else if (h->page >= s->npages) {
        *why = "page outside the shared space";
    } else if (h->from >= s->rl->nodes || (h->copyset >> 1 >> (s->rl->nodes - 1))) {
        *why = "board outside the ring";
    } else if (has_op && h->op != PUMA2_OP_READ && h->op != PUMA2_OP_WRITE) {
        *why = "bad op";
    } else if ((h->flags & ~PUMA2_MSG_F_DATA) || (data && h->type != PUMA2_MSG_PAGE)) {
        *why = "bad flags";
    } else if (len != sizeof(*h) + (data ? PUMA2_PAGE : 0)) {
        *why = "bad length";
    } else {
        return true;
    }
    return false;
}

/* A frame's last byte is here: the controller takes it when it is free. */
void puma2_msg_arrive(Puma2State *s, Puma2Msg *m)
{
    uint64_t t = rl_server_run(&s->controller, puma2_now(), s->request_ns);

    s->msgs_in++;
    rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, PUMA2_EV_MSG, 0, 0, m);
}

void puma2_copied_event(Puma2State *s, Puma2Msg *m)
{
    trace_retrolink_puma2_msg_in(s->rl->node, m->peer, m->hdr.type, m->hdr.op, m->hdr.page,
                                 puma2_now());
    dsm_handle(s, m->peer, &m->hdr,
               m->hdr.flags & PUMA2_MSG_F_DATA ? m->data : NULL);
    g_free(m);
}

/*
 * The controller is done with a message. A page's bytes then wait for the copy engine,
 * which takes them in the order the controller hands them over (a page it sends too),
 * from now: booked at the arrival, a page that came later would have gone first.
 */
void puma2_msg_event(Puma2State *s, Puma2Msg *m)
{
    if (m->hdr.flags & PUMA2_MSG_F_DATA) {
        uint64_t t = rl_server_run(&s->copier, puma2_now(), copy_ns(s));
        rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, PUMA2_EV_COPIED, 0, 0, m);
        return;
    }
    puma2_copied_event(s, m);
}

/* ---- host commands ---------------------------------------------------------------------- */

/*
 * Decode the next command if the controller may: it has one and room for its answer,
 * from `after` on. The command is there once its CMD store's bus transfer has ended.
 */
static void cmd_pump(Puma2State *s, uint64_t after)
{
    if (s->cmd_scheduled || !s->cmd.count || !resp_room(s)) {
        return;
    }
    s->resp_reserved++;
    s->cmd_scheduled = true;
    uint64_t ready = MAX(after, s->cmd_end[s->cmd.head % PUMA2_CMD_DEPTH]);
    uint64_t t = rl_server_run(&s->controller, ready, s->request_ns);
    rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, PUMA2_EV_CMD, 0, 0, NULL);
}

/* A command was pushed; its store's bus transfer ends at `end`. */
void puma2_cmd_written(Puma2State *s, uint64_t end)
{
    s->cmd_end[(s->cmd.head + s->cmd.count - 1) % PUMA2_CMD_DEPTH] = end;
    cmd_pump(s, end);
}

/* A response was popped by a read whose bus transfer ends at `end`: room from then. */
void puma2_resp_popped(Puma2State *s, uint64_t end)
{
    recalls_flush(s);
    cmd_pump(s, end);
}

static void host_release(Puma2State *s, uint32_t page)
{
    Puma2Page *pg = &s->pages[page];
    uint8_t what = pg->deferred;

    pg->hold = 0;
    if (pg->recall == PUMA2_RECALL_WANTED) {
        s->recalls_wanted--;
    }
    pg->recall = PUMA2_RECALL_NONE;
    pg->deferred = 0;
    if (what == PUMA2_MSG_FWD) {
        owner_serve(s, page, pg->deferred_op, pg->deferred_from);
    } else if (what == PUMA2_MSG_INV) {
        holder_invalidate(s, page, pg->deferred_from);
    }
}

static void cmd_run(Puma2State *s, uint32_t v)
{
    uint32_t page = v >> PUMA2_CMD_PAGE_SHIFT, op = v & PUMA2_CMD_OP_MASK;
    Puma2Page *pg = &s->pages[MIN(page, s->npages - 1)];

    trace_retrolink_puma2_cmd(s->rl->node, page, op, puma2_now());
    if (page >= s->npages) {
        respond(s, page, PUMA2_KIND_DONE, PUMA2_ST_RANGE);
    } else if (op != PUMA2_OP_READ && op != PUMA2_OP_WRITE && op != PUMA2_OP_RELEASE) {
        respond(s, page, PUMA2_KIND_DONE, PUMA2_ST_OP);
    } else if (op == PUMA2_OP_RELEASE) {
        if (!pg->hold) {
            respond(s, page, PUMA2_KIND_REFUSED, PUMA2_ST_NOT_HELD);
            return;
        }
        s->resp_reserved--;
        host_release(s, page);
    } else if (pg->pending) {
        respond(s, page, PUMA2_KIND_DONE, PUMA2_ST_BUSY);
    } else if (pg->hold == PUMA2_OP_WRITE || pg->hold == op) {
        respond(s, page, PUMA2_KIND_DONE, PUMA2_ST_HELD);
    } else if (pg->access >= op) {
        pg->hold = op;
        respond(s, page, PUMA2_KIND_DONE, PUMA2_ST_OK);
    } else {
        pg->pending = op;
        send_msg(s, manager_of(s, page), PUMA2_MSG_REQ, op, page, s->rl->node, 0);
        if (pg->pending) {
            pg->pending |= PUMA2_PENDING_NET;
            net_wait_begin(s);
        }
    }
}

void puma2_cmd_event(Puma2State *s)
{
    s->cmd_scheduled = false;
    if (s->cmd.count) {
        cmd_run(s, rl_fifo_pop(&s->cmd, 0));
    }
    cmd_pump(s, puma2_now());
}

static bool keep_non_cmd(void *opaque, RlEvent *ev)
{
    return ev->kind != PUMA2_EV_CMD;
}

/* A reset's release of a held page, decoded: what waited for the host goes on. */
void puma2_release_event(Puma2State *s, uint32_t page)
{
    if (page < s->npages) {
        host_release(s, page);
    }
}

/*
 * The host interface's reset (PUMA2_CTRL_RESET, a system reset, the driver going):
 * the FIFOs empty, every hold released, and commands still on the ring finish without
 * an answer or a hold. A message that waited for a hold goes on as after a RELEASE:
 * the controller's job, request-ns from `at` (the store's bus transfer ended), so no
 * frame leaves before the board's promise. The shared space and the protocol are the
 * board's, not the host's: they go on.
 */
void puma2_host_reset(Puma2State *s, uint64_t at)
{
    rl_fifo_reset(&s->cmd);
    rl_fifo_reset(&s->resp);
    rl_sched_filter(&s->rl->sched, keep_non_cmd, s);
    s->cmd_scheduled = false;
    s->resp_reserved = 0;
    s->recalls_wanted = 0;
    for (uint32_t p = 0; p < s->npages; p++) {
        Puma2Page *pg = &s->pages[p];
        if (pg->pending) {
            pg->pending |= PUMA2_PENDING_ORPHAN;
        }
        pg->recall = PUMA2_RECALL_NONE;
        if (pg->hold && pg->deferred) {
            uint64_t t = rl_server_run(&s->controller, at, s->request_ns);
            rl_sched_add(&s->rl->sched, t, RL_EV_CLASS_INTERNAL, 0, PUMA2_EV_RELEASE, p, 0,
                         NULL);
        }
        pg->hold = 0;
    }
}

/* ---- migration -------------------------------------------------------------------------- */

/*
 * A loaded page table (puma2.c saves it only when nothing is in flight: no pending
 * command, transaction, deferral or recall): each page's fields in range and
 * consistent with each other.
 */
int puma2_pages_check(Puma2State *s)
{
    uint32_t nodes_mask = s->rl->nodes >= 32 ? ~0u : bit(s->rl->nodes) - 1;

    for (uint32_t p = 0; p < s->npages; p++) {
        Puma2Page *pg = &s->pages[p];
        if (pg->pending || pg->deferred || pg->acks_wanted || pg->mgr_busy ||
            pg->recall || pg->wait_read || pg->wait_write) {
            return rl_board_refuse(s->rl, "page %u has work in flight", p);
        }
        if (pg->access > PUMA2_ACC_WRITE || pg->hold > PUMA2_OP_WRITE ||
            pg->hold > pg->access || pg->is_owner > 1 ||
            (pg->is_owner && pg->access == PUMA2_ACC_NONE) ||
            (pg->access == PUMA2_ACC_WRITE && !pg->is_owner)) {
            return rl_board_refuse(s->rl, "page %u has access %u, hold %u, owner %u", p,
                                   pg->access, pg->hold, pg->is_owner);
        }
        if ((pg->copyset & ~nodes_mask) || (pg->copyset && !pg->is_owner) ||
            (pg->copyset & bit(s->rl->node)) ||
            (pg->copyset && pg->access == PUMA2_ACC_WRITE)) {
            return rl_board_refuse(s->rl, "page %u has copy set 0x%x", p, pg->copyset);
        }
        if (pg->owner >= s->rl->nodes || pg->mgr_last >= s->rl->nodes) {
            return rl_board_refuse(s->rl, "page %u's manager names node %u or %u", p,
                                   pg->owner, pg->mgr_last);
        }
    }
    return 0;
}

/* The counts derived from the page table, after a load. */
void puma2_recount(Puma2State *s)
{
    s->resp_reserved = 0;
    s->recalls_wanted = 0;
    s->remote_waits = 0;
    s->cmd_scheduled = false;
}
