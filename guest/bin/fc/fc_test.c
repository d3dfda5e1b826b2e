/*
 * fc_test: in-guest tests of the raw protocol (fcraw) and Fast Messages over the
 * PUMA-III adapter. Run the same command on every node: node 0 sends, node 1
 * checks and answers, other nodes have nothing to do. Prints "PASS <name>" or
 * "FAIL <name>: reason" per case and exits 1 if any failed.
 *   --part raw   argument errors, the DMA window's protection, delivery and order,
 *                a full ring dropping (and counting) frames
 *   --part fm    argument errors, delivery and order in every send mode, handlers
 *                (partial reads, FM_QUIT, unknown ids), flow control when the receiver
 *                does not extract, both nodes sending three times their credits to
 *                each other at once
 *   --part all   both (default)
 * Every wait is bounded (--timeout, guest seconds): a case that does not finish in
 * time fails, naming what it waited for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fc/fcraw.h"
#include "fc/fm.h"
#include "retrolink/regs/fc-regs.h"

static int node, peer;
static long timeout_s;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned char pattern(unsigned msg, unsigned j)
{
    return (unsigned char)(msg * 7 + j * 13);
}

/* ======================= the raw protocol ================================== */

#define RAW_SYNC    0x53594e43u     /* both ends have the channel open */
#define RAW_MSG     0x7e570000u     /* + the message's index */
#define RAW_DONE    0x444f4e45u     /* node 1 has checked a phase */
#define RAW_FLOOD   0x464c4f4fu
#define FLOOD_FRAMES 600

static fcraw_t *raw;

static int errno_of(int r)
{
    return r < 0 ? errno : 0;
}

static void raw_argument_errors(void)
{
    static unsigned char plain[4096];
    int nodes = fcraw_num_nodes(raw), e;
    uint32_t done0 = 0, done1 = 0, dvma;

    fcraw_t *again = fcraw_open(NULL);
    cli_result("raw_second_open_busy", !again && errno == EBUSY, "open gave %p, errno %d",
           (void *)again, errno);
    e = errno_of(fcraw_send_pio(raw, plain, 8, node, 0));
    cli_result("raw_send_to_self", e == EINVAL, "errno %d", e);
    e = errno_of(fcraw_send_pio(raw, plain, 8, nodes, 0));
    cli_result("raw_send_to_unknown_node", e == EINVAL, "errno %d", e);
    e = errno_of(fcraw_send_pio(raw, plain, 8, -1, 0));
    cli_result("raw_send_to_negative_node", e == EINVAL, "errno %d", e);
    e = errno_of(fcraw_send_pio(raw, plain, fcraw_pio_max(raw) + 1, peer, 0));
    cli_result("raw_pio_too_long", e == EMSGSIZE, "errno %d", e);
    e = errno_of(fcraw_send_pio(raw, NULL, 8, peer, 0));
    cli_result("raw_pio_null_buffer", e == EINVAL, "errno %d", e);

    fcraw_reg_read(raw, FC_U_TX_DONE, &done0);
    e = errno_of(fcraw_send_dma(raw, plain, sizeof(plain), peer, 0));
    fcraw_reg_read(raw, FC_U_TX_DONE, &done1);
    cli_result("raw_dma_from_plain_memory_refused", e == EFAULT && done0 == done1,
           "errno %d, sends done %u -> %u", e, done0, done1);

    unsigned char *buf = fcraw_alloc(raw, 8192);
    e = errno_of(fcraw_send_dma(raw, buf, 0, peer, 0));
    cli_result("raw_dma_length_zero", e == EMSGSIZE, "errno %d", e);
    e = errno_of(fcraw_dvma(raw, buf + 8192 - 8, 16, &dvma));
    cli_result("raw_dvma_past_buffer_end", e == EFAULT, "errno %d", e);
    e = errno_of(fcraw_dvma(raw, buf + 100, 16, &dvma));
    cli_result("raw_dvma_inside_buffer", e == 0 && dvma % FC_DVMA_PAGE == 100, "errno %d dvma %u",
           e, dvma);
    void *p = fcraw_alloc(raw, 0);
    cli_result("raw_alloc_zero", !p && errno == EINVAL, "gave %p errno %d", p, errno);
    p = fcraw_alloc(raw, FC_MAX_SEND + 1);
    cli_result("raw_alloc_too_big", !p && errno == EINVAL, "gave %p errno %d", p, errno);
    e = errno_of(fcraw_free(raw, plain));
    cli_result("raw_free_not_allocated", e == EINVAL, "errno %d", e);
    e = errno_of(fcraw_free(raw, buf));
    cli_result("raw_free", e == 0, "errno %d", e);
    e = errno_of(fcraw_send_dma(raw, buf, 64, peer, 0));
    cli_result("raw_dma_from_freed_buffer_refused", e == EFAULT, "errno %d", e);

    struct fcraw_frame f;
    e = errno_of(fcraw_poll(raw, NULL));
    cli_result("raw_poll_null", e == EINVAL, "errno %d", e);
    uint32_t v;
    e = errno_of(fcraw_reg_read(raw, FC_U_TX_GO, &v));
    cli_result("raw_read_write_only_register", e == EINVAL, "errno %d", e);
    e = errno_of(fcraw_reg_read(raw, FC_U_PIO_BUF, &v));
    cli_result("raw_read_pio_buffer", e == EINVAL, "errno %d", e);
    (void)f;
}

/* Node 0 sends a start frame every millisecond until node 1 answers one. */
static int raw_start(void)
{
    int64_t deadline = now_ns() + timeout_s * 1000000000LL, last = 0;
    for (;;) {
        struct fcraw_frame f;
        if (fcraw_poll(raw, &f) == 1) {
            int sync = f.tag == RAW_SYNC && (int)f.src == peer;
            fcraw_consume(raw);
            if (sync) {
                return node == 1 ? fcraw_send_pio(raw, NULL, 0, peer, RAW_SYNC) : 0;
            }
            continue;
        }
        int64_t t = now_ns();
        if (t > deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (node == 0 && t - last >= 1000000) {
            last = t;
            fcraw_send_pio(raw, NULL, 0, peer, RAW_SYNC);
        }
    }
}

/* The next frame that is not a repeated start frame; 0 when none came in time. */
static int raw_next(struct fcraw_frame *f, long ms)
{
    int64_t deadline = now_ns() + ms * 1000000LL;
    for (;;) {
        int r = fcraw_poll(raw, f);
        if (r == 1 && f->tag == RAW_SYNC) {
            fcraw_consume(raw);
            continue;
        }
        if (r || now_ns() > deadline) {
            return r;
        }
    }
}

/* Sends the adapter must refuse before touching memory: outside the window. */
static void raw_window(void)
{
    unsigned char *buf = fcraw_alloc(raw, 8192);
    uint32_t dvma = 0, done0, done1, busy;
    fcraw_dvma(raw, buf, 1, &dvma);
    struct { const char *name; uint32_t addr, len; } bad[] = {
        { "raw_window_unallocated_page", 4000u * FC_DVMA_PAGE, 64 },
        { "raw_window_past_buffer_end", dvma + 8192 - 16, 4096 },
        { "raw_window_whole_space", 0, FC_MAX_SEND },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        fcraw_reg_read(raw, FC_U_TX_DONE, &done0);
        int r = fcraw_dma_start_dvma(raw, bad[i].addr, bad[i].len, peer, RAW_MSG + 999);
        int e = errno, st = fcraw_tx_status(raw);
        fcraw_reg_read(raw, FC_U_TX_BUSY, &busy);
        fcraw_reg_read(raw, FC_U_TX_DONE, &done1);
        cli_result(bad[i].name, r < 0 && e == EFAULT && st == FC_ERR_WINDOW && !busy &&
               done0 == done1, "returned %d errno %d status %d busy %u sends done %u -> %u",
               r, e, st, busy, done0, done1);
    }
    fcraw_free(raw, buf);
}

static const struct { unsigned len; int dma; } raw_msgs[] = {
    { 1, 0 }, { 8, 1 }, { 100, 0 }, { 2048, 0 }, { 2112, 1 }, { 2113, 1 }, { 0, 0 },
    { 5000, 1 }, { 65536, 1 }, { 300000, 1 }, { 7, 1 },
};
#define N_RAW_MSGS (int)(sizeof(raw_msgs) / sizeof(raw_msgs[0]))

static void raw_sender(void)
{
    unsigned char *buf = fcraw_alloc(raw, 300000), *plain = malloc(FC_PIO_MAX);
    int ok = buf && plain;
    if (!ok) {
        cli_result("raw_sends", 0, "buffers of 300000 and %d bytes: %s", FC_PIO_MAX,
                   strerror(errno));
    }
    for (int i = 0; ok && i < N_RAW_MSGS; i++) {
        unsigned len = raw_msgs[i].len;
        unsigned char *b = raw_msgs[i].dma ? buf : plain;
        for (unsigned j = 0; j < len; j++) {
            b[j] = pattern(i, j);
        }
        int r = raw_msgs[i].dma ? fcraw_send_dma(raw, b, len, peer, RAW_MSG + i)
                                : fcraw_send_pio(raw, b, len, peer, RAW_MSG + i);
        ok = r == 0;
        if (!ok) {
            cli_result("raw_sends", 0, "message %d (%u bytes, %s): %s (status %d)", i, len,
                   raw_msgs[i].dma ? "DMA" : "PIO", strerror(errno), fcraw_tx_status(raw));
        }
    }
    if (ok) {
        cli_result("raw_sends", 1, " ");
    }
    /* node 1 says when it has checked them; then it stops reading: a flood overflows */
    struct fcraw_frame f;
    int r = raw_next(&f, timeout_s * 1000);
    cli_result("raw_receiver_checked", r == 1 && f.tag == RAW_DONE, "%s",
           r == 1 ? "an unexpected frame came" : "node 1 did not answer");
    if (r == 1) {
        fcraw_consume(raw);
    }
    int sent = 0;
    for (int i = 0; i < FLOOD_FRAMES; i++) {
        sent += fcraw_send_pio(raw, plain, 64, peer, RAW_FLOOD) == 0;
    }
    cli_result("raw_flood_sent", sent == FLOOD_FRAMES, "%d of %d PIO sends accepted", sent,
           FLOOD_FRAMES);
    r = raw_next(&f, timeout_s * 1000);
    cli_result("raw_flood_counted", r == 1 && f.tag == RAW_DONE, "%s",
           r == 1 ? "an unexpected frame came" : "node 1 did not answer");
    if (r == 1) {
        fcraw_consume(raw);
    }
    fcraw_free(raw, buf);
    free(plain);
}

static void raw_receiver(void)
{
    struct fcraw_frame f;
    int bad = -1;
    const char *why = "";
    unsigned frames_bad = 0;
    for (int i = 0; i < N_RAW_MSGS && bad < 0; i++) {
        unsigned len = raw_msgs[i].len, got = 0, frames = 0;
        do {
            if (raw_next(&f, timeout_s * 1000) != 1) {
                bad = i, why = "did not come";
                break;
            }
            if ((int)f.src != peer || f.tag != RAW_MSG + (unsigned)i || f.msg_len != len ||
                f.offset != got) {
                bad = i, why = "out of order, or a frame of a refused send came";
                printf("  frame from %u tag %#x offset %u of %u\n", f.src, f.tag, f.offset,
                       f.msg_len);
                break;
            }
            const unsigned char *d = f.data;
            for (unsigned j = 0; j < f.len && bad < 0; j++) {
                if (d[j] != pattern(i, f.offset + j)) {
                    bad = i, why = "corrupted";
                }
            }
            got += f.len;
            frames++;
            fcraw_consume(raw);
        } while (got < len && bad < 0);
        unsigned want = raw_msgs[i].dma ? (len + FC_MAX_PAYLOAD - 1) / FC_MAX_PAYLOAD : 1;
        frames_bad += bad < 0 && frames != want;
    }
    cli_result("raw_in_order_and_intact", bad < 0, "message %d (%u bytes) %s", bad,
           bad >= 0 ? raw_msgs[bad].len : 0, why);
    cli_result("raw_frames_per_send", frames_bad == 0, "%u sends cut into the wrong number of "
           "frames", frames_bad);
    cli_result("raw_no_drops", fcraw_rx_drops(raw) == 0, "%ld dropped", fcraw_rx_drops(raw));

    /* a full ring: the adapter drops and counts what does not fit */
    fcraw_release(raw);
    long drops0 = fcraw_rx_drops(raw);
    fcraw_send_pio(raw, NULL, 0, peer, RAW_DONE);
    usleep(300000);         /* the flood comes meanwhile; nothing reads the ring */
    int got = 0;
    while (raw_next(&f, 20) == 1) {
        got += f.tag == RAW_FLOOD;
        fcraw_consume(raw);
        fcraw_release(raw);
    }
    long dropped = fcraw_rx_drops(raw) - drops0;
    cli_result("raw_full_ring_drops_and_counts", got == fcraw_rx_slots(raw) &&
           got + dropped == FLOOD_FRAMES, "%d frames in a ring of %d, %ld counted dropped, "
           "%d sent", got, fcraw_rx_slots(raw), dropped, FLOOD_FRAMES);
    fcraw_send_pio(raw, NULL, 0, peer, RAW_DONE);
}

static void raw_part(void)
{
    if (!(raw = fcraw_open(NULL))) {
        cli_result("raw_open", 0, "%s", strerror(errno));
        return;
    }
    fcraw_set_timeout(raw, timeout_s * 1000000000LL);
    raw_argument_errors();
    int r = raw_start();
    cli_result("raw_peer_started", r == 0, "node %d: %s", peer, strerror(errno));
    if (r == 0) {
        if (node == 0) {
            raw_window();
            raw_sender();
        } else {
            raw_receiver();
        }
    }
    fcraw_close(raw);
    raw = NULL;
}

/* ======================= Fast Messages ===================================== */

enum { H_SEQ = 1, H_FOUR, H_PARTIAL, H_QUIT, H_CTRL, H_FLOOD, H_UNKNOWN = 200 };
enum { HOW_PIO, HOW_DMA, HOW_SPLIT, HOW_MIXED, HOW_SMALL, HOW_SHORT };
static const char *const how_name[] = { "PIO", "DMA", "split", "stream PIO+DMA",
                                        "stream of 7-byte pieces", "stream shorter than "
                                        "declared" };
static const struct { unsigned len; int how; } fm_msgs[] = {
    { 8, HOW_PIO }, { 9, HOW_DMA }, { 100, HOW_SPLIT }, { 2047, HOW_PIO }, { 2048, HOW_PIO },
    { 2049, HOW_PIO }, { 2112, HOW_DMA }, { 2113, HOW_DMA }, { 4101, HOW_MIXED },
    { 5000, HOW_SMALL }, { 20000, HOW_SPLIT }, { 100000, HOW_PIO }, { 300000, HOW_DMA },
    { 1048576, HOW_SPLIT }, { 6000, HOW_SHORT }, { 64, HOW_MIXED },
};
#define N_FM_MSGS (int)(sizeof(fm_msgs) / sizeof(fm_msgs[0]))
#define SHORT_BY 1000       /* HOW_SHORT: declared this much longer than sent */

/* what handlers saw (node 1) */
static int seq_next, seq_bad = -1, four_ok, four_count, four_at_quit = -1, partial_count,
           partial_last_ok, quit_seen, saw_unknown, flood_next, flood_bad = -1;
static char seq_why[160];
static uint32_t ctrl_words[4];
static int ctrl_seen;
static unsigned char *rx_buf;

static int on_seq(FM_stream *s, unsigned sender)
{
    uint32_t hdr[2];
    int n = FM_receive(hdr, s, sizeof(hdr));
    int i = seq_next++;
    if (seq_bad >= 0) {
        return FM_CONTINUE;
    }
    unsigned len = i < N_FM_MSGS ? fm_msgs[i].len : 0;
    if (fm_msgs[i < N_FM_MSGS ? i : 0].how == HOW_SHORT) {
        len -= SHORT_BY;
    }
    if (n != 8 || sender != (unsigned)peer || hdr[0] != (uint32_t)i || hdr[1] != len) {
        seq_bad = i;
        snprintf(seq_why, sizeof(seq_why), "header: got %d bytes, message %u of %u bytes",
                 n, hdr[0], hdr[1]);
        return FM_CONTINUE;
    }
    /* the body in uneven pieces, as a handler that scatters it would take it */
    unsigned got = 8, piece = 1;
    while (got < len) {
        unsigned want = len - got < piece ? len - got : piece;
        n = FM_receive(rx_buf + got, s, want);
        if (n != (int)want) {
            seq_bad = i;
            snprintf(seq_why, sizeof(seq_why), "FM_receive of %u at %u gave %d (%s)", want,
                     got, n, n < 0 ? FM_strerror(n) : "short");
            return FM_CONTINUE;
        }
        got += n;
        piece = piece * 3 + 1000;
    }
    n = FM_receive(rx_buf, s, 16);      /* past the end: nothing more */
    for (unsigned j = 8; j < len && seq_bad < 0; j++) {
        if (rx_buf[j] != pattern(i, j)) {
            seq_bad = i;
            snprintf(seq_why, sizeof(seq_why), "byte %u corrupted", j);
        }
    }
    if (n != 0 && seq_bad < 0) {
        seq_bad = i;
        snprintf(seq_why, sizeof(seq_why), "FM_receive past the end gave %d", n);
    }
    return FM_CONTINUE;
}

static int on_four(FM_stream *s, unsigned sender)
{
    uint32_t w[4];
    four_ok = FM_receive(w, s, sizeof(w)) == 16 && sender == (unsigned)peer &&
              w[0] == 1 && w[1] == 2 && w[2] == 0xdeadbeef && w[3] == ~0u;
    four_count++;
    return FM_CONTINUE;
}

static int on_partial(FM_stream *s, unsigned sender)
{
    unsigned char b[10];
    (void)sender;
    /* the last of the three is the PIO one, with a known pattern */
    partial_last_ok = FM_receive(b, s, sizeof(b)) == 10 && b[9] == pattern(99, 9);
    partial_count++;
    return FM_CONTINUE;     /* the rest of the message is skipped */
}

static int on_quit(FM_stream *s, unsigned sender)
{
    (void)s, (void)sender;
    quit_seen++;
    four_at_quit = four_count;
    return FM_QUIT;
}

static int on_ctrl(FM_stream *s, unsigned sender)
{
    (void)sender;
    ctrl_seen = FM_receive(ctrl_words, s, sizeof(ctrl_words)) == 16;
    return FM_CONTINUE;
}

static int on_flood(FM_stream *s, unsigned sender)
{
    uint32_t i = ~0u;
    FM_receive(&i, s, sizeof(i));
    if (sender != (unsigned)peer || i != (uint32_t)flood_next) {
        flood_bad = flood_bad < 0 ? flood_next : flood_bad;
    }
    flood_next++;
    return FM_CONTINUE;
}

/* Extract until cond() or the timeout; returns cond(). */
static int extract_until(int (*cond)(void), long ms)
{
    int64_t deadline = now_ns() + ms * 1000000LL;
    while (!cond() && now_ns() < deadline) {
        int r = FM_extract(~0u);
        saw_unknown |= r == FM_EHANDLER;
        if (r < 0 && r != FM_EHANDLER) {
            printf("  FM_extract: %s\n", FM_strerror(r));
            return 0;
        }
    }
    return cond();
}

static int ctrl_came(void) { return ctrl_seen; }

/* A short control message between the two nodes: phase and a result. */
static int tell(uint32_t phase, uint32_t value)
{
    return FM_send_4(peer, H_CTRL, phase, value, 0, 0);
}

static int hear(uint32_t phase, uint32_t *value)
{
    int ok = extract_until(ctrl_came, timeout_s * 1000) && ctrl_words[0] == phase;
    ctrl_seen = 0;
    if (value) {
        *value = ctrl_words[1];
    }
    return ok;
}

static void fm_argument_errors(unsigned char *dma)
{
    static unsigned char plain[64];
    int r;
    r = FM_initialize();
    cli_result("fm_initialize_twice", r == FM_EINIT, "%d", r);
    cli_result("fm_node_ids", FM_nodeid == (unsigned)node && FM_numnodes >= 2, "nodeid %u of %u",
           FM_nodeid, FM_numnodes);
    r = FM_register_handler(FM_MAX_HANDLERS, on_seq);
    cli_result("fm_register_id_too_big", r == FM_EHANDLER, "%d", r);
    r = FM_register_handler(3, NULL);
    cli_result("fm_register_null", r == FM_EINVAL, "%d", r);
    r = FM_register_handler(FM_ANY_ID, on_seq);
    cli_result("fm_register_any_id", r == 0, "%d (id 0 is free)", r);
    r = FM_send(FM_nodeid, H_SEQ, plain, 8);
    cli_result("fm_send_to_self", r == FM_EDEST && FM_errno == FM_EDEST, "%d", r);
    r = FM_send(FM_numnodes, H_SEQ, plain, 8);
    cli_result("fm_send_to_unknown_node", r == FM_EDEST, "%d", r);
    r = FM_send(peer, 300, plain, 8);
    cli_result("fm_send_bad_handler", r == FM_EHANDLER, "%d", r);
    r = FM_send(peer, H_SEQ, NULL, 8);
    cli_result("fm_send_null_buffer", r == FM_EINVAL, "%d", r);
    r = FM_set_send_mode(7);
    cli_result("fm_bad_mode", r == FM_EINVAL, "%d", r);
    r = FM_extract(0);
    cli_result("fm_extract_zero", r == FM_EINVAL, "%d", r);
    r = FM_receive(plain, NULL, 4);
    cli_result("fm_receive_outside_handler", r == FM_EINVAL, "%d", r);
    r = FM_send_piece(NULL, plain, 4);
    cli_result("fm_send_piece_no_stream", r == FM_EINVAL, "%d", r);
    r = FM_end_message(NULL);
    cli_result("fm_end_message_no_stream", r == FM_EINVAL, "%d", r);
    void *p = FM_alloc_buffer(0);
    cli_result("fm_alloc_zero", !p && FM_errno == FM_EINVAL, "%p %d", p, FM_errno);
    r = FM_free_buffer(plain);
    cli_result("fm_free_not_allocated", r == FM_EINVAL, "%d", r);
    r = FM_send_complete(12345);
    cli_result("fm_complete_unknown_request", r == FM_ENOENT, "%d", r);
    FM_request req;
    r = FM_send_request(peer, H_SEQ, plain, 8, &req);
    cli_result("fm_split_from_plain_memory", r == FM_ENOTDMA, "%d", r);
    r = FM_send_request(peer, H_SEQ, dma, 8, NULL);
    cli_result("fm_split_null_request", r == FM_EINVAL, "%d", r);

    struct FM_stats a, b;
    FM_get_stats(&a);
    FM_set_send_mode(FM_SEND_DMA);
    r = FM_send(peer, H_SEQ, plain, sizeof(plain));
    FM_set_send_mode(FM_SEND_AUTO);
    FM_get_stats(&b);
    cli_result("fm_dma_from_plain_memory_refused", r == FM_ENOTDMA &&
           a.frames_sent == b.frames_sent && a.messages_sent == b.messages_sent,
           "%d, frames sent %llu -> %llu", r, (unsigned long long)a.frames_sent,
           (unsigned long long)b.frames_sent);
}

/* Node 0: message i of fm_msgs, the way its table entry says. */
static int fm_send_msg(int i, unsigned char *dma, unsigned char *plain)
{
    unsigned len = fm_msgs[i].len, how = fm_msgs[i].how;
    unsigned sent_len = how == HOW_SHORT ? len - SHORT_BY : len;
    uint32_t hdr[2] = { i, sent_len };
    unsigned char *b = how == HOW_PIO || how == HOW_SMALL || how == HOW_SHORT ? plain : dma;
    memcpy(b, hdr, 8);
    for (unsigned j = 8; j < len; j++) {
        b[j] = pattern(i, j);
    }
    FM_set_send_mode(how == HOW_PIO ? FM_SEND_PIO : how == HOW_DMA ? FM_SEND_DMA
                                                                   : FM_SEND_AUTO);
    if (how == HOW_PIO || how == HOW_DMA) {
        return FM_send(peer, H_SEQ, b, len);
    }
    if (how == HOW_SPLIT) {
        FM_request req;
        int r = FM_send_request(peer, H_SEQ, b, len, &req);
        return r < 0 ? r : FM_send_wait(req);
    }
    FM_stream *s = FM_begin_message(peer, len, H_SEQ);
    if (!s) {
        return FM_errno;
    }
    int r = 0;
    if (how == HOW_MIXED) {
        r = FM_send_piece(s, hdr, 8);                       /* PIO: not DMA memory */
        r = r ? r : FM_send_piece(s, b + 8, len - 8);        /* DMA, zero-copy */
    } else {
        for (unsigned off = 0; off < sent_len && !r; off += 7) {
            r = FM_send_piece(s, b + off, sent_len - off < 7 ? sent_len - off : 7);
        }
    }
    if (how == HOW_SHORT && !r) {
        FM_stream *again = FM_begin_message(peer, 8, H_SEQ);
        cli_result("fm_one_stream_at_a_time", !again && FM_errno == FM_EBUSY, "%p %d",
               (void *)again, FM_errno);
        int e = FM_send_piece(s, b, SHORT_BY + 1);
        cli_result("fm_piece_past_declared_length", e == FM_ELENGTH, "%d", e);
    }
    int e = FM_end_message(s);
    return r ? r : e;
}

static int seq_all(void) { return seq_next >= N_FM_MSGS; }
static int quit_came(void) { return quit_seen; }
static int second_four_came(void) { return four_count >= 2; }
static int flood_target;
static int flood_done(void) { return flood_next >= flood_target; }

static void fm_sender(unsigned char *dma, unsigned char *plain)
{
    int bad = -1, r = 0;
    for (int i = 0; i < N_FM_MSGS && bad < 0; i++) {
        if ((r = fm_send_msg(i, dma, plain)) < 0) {
            bad = i;
        }
    }
    cli_result("fm_sends_every_mode", bad < 0, "message %d (%u bytes, %s): %s", bad,
           bad >= 0 ? fm_msgs[bad].len : 0, bad >= 0 ? how_name[fm_msgs[bad].how] : "",
           FM_strerror(r));

    /* zero-copy DMA returns when the DMA is done; a split request before */
    FM_set_send_mode(FM_SEND_DMA);
    int64_t t0 = now_ns();
    r = FM_send(peer, H_PARTIAL, dma, 1 << 20);
    int64_t zc_ns = now_ns() - t0;
    cli_result("fm_zc_send_returns_after_dma", r == 0 && zc_ns > 15000000,
           "%s after %lld ns (1 MiB at 61 MB/s takes 17 ms)", FM_strerror(r),
           (long long)zc_ns);
    FM_request req = 0;
    t0 = now_ns();
    r = FM_send_request(peer, H_PARTIAL, dma, 1 << 20, &req);
    int64_t req_ns = now_ns() - t0;
    int c0 = FM_send_complete(req);
    int w = FM_send_wait(req);
    int c1 = FM_send_complete(req);
    cli_result("fm_split_request_returns_at_once", r == 0 && req_ns < 1000000 && c0 == 0,
           "%s after %lld ns, complete %d", FM_strerror(r), (long long)req_ns, c0);
    cli_result("fm_split_completion", w == 0 && c1 == 1, "wait %d complete %d", w, c1);

    for (unsigned j = 0; j < 5000; j++) {
        plain[j] = pattern(99, j);
    }
    FM_set_send_mode(FM_SEND_PIO);
    r = FM_send(peer, H_PARTIAL, plain, 5000);
    r = r ? r : FM_send_4(peer, H_FOUR, 1, 2, 0xdeadbeef, ~0u);
    r = r ? r : FM_send(peer, H_UNKNOWN, plain, 100);
    r = r ? r : FM_send(peer, H_QUIT, plain, 0);
    r = r ? r : FM_send_4(peer, H_FOUR, 1, 2, 0xdeadbeef, ~0u);
    cli_result("fm_handler_messages_sent", r == 0, "%s", FM_strerror(r));

    uint32_t v = 0;
    int ok = hear(1, &v);
    cli_result("fm_receiver_checked", ok, "no word from node 1");

    /* flow control: node 1 does not extract for a while; sends wait, nothing drops */
    ok = hear(2, NULL);
    struct FM_stats a, b;
    FM_get_stats(&a);
    unsigned count = 3 * a.credits_per_peer;
    FM_set_send_mode(FM_SEND_DMA);
    t0 = now_ns();
    int fail_at = -1;
    for (unsigned i = 0; ok && i < count && fail_at < 0; i++) {
        memcpy(dma, &i, sizeof(i));
        if ((r = FM_send(peer, H_FLOOD, dma, FC_MAX_PAYLOAD)) < 0) {
            fail_at = i;
        }
    }
    int64_t flood_ns = now_ns() - t0;
    FM_get_stats(&b);
    cli_result("fm_flow_control_sender_waits", ok && fail_at < 0 && b.credit_waits > a.credit_waits
           && flood_ns > 100000000, "%u one-frame messages: %s at %d; %llu credit waits; took "
           "%lld ns (the receiver paused 300 ms)", count, FM_strerror(r), fail_at,
           (unsigned long long)(b.credit_waits - a.credit_waits), (long long)flood_ns);
    ok = hear(3, &v);
    cli_result("fm_flow_control_receiver_got_all", ok && v == 1, "node 1 says %u", v);

    /* both ways at once: each sends three times its credits before extracting (a
       waiting send runs the handlers of what came: docs/boards/fm.md) */
    flood_next = 0, flood_bad = -1, flood_target = count;
    fail_at = -1;
    for (unsigned i = 0; i < count && fail_at < 0; i++) {
        memcpy(dma, &i, sizeof(i));
        if ((r = FM_send(peer, H_FLOOD, dma, FC_MAX_PAYLOAD)) < 0) {
            fail_at = i;
        }
    }
    ok = extract_until(flood_done, timeout_s * 1000);
    cli_result("fm_both_ways_no_deadlock", fail_at < 0 && ok && flood_bad < 0,
           "send %d: %s; received %d of %d (first wrong %d)", fail_at, FM_strerror(r),
           flood_next, flood_target, flood_bad);
    ok = hear(4, &v);
    cli_result("fm_both_ways_peer_done", ok && v == 1, "node 1 says %u", v);
    tell(5, 0);
}

static void fm_receiver(unsigned char *dma)
{
    (void)dma;
    int ok = extract_until(seq_all, timeout_s * 1000);
    cli_result("fm_in_order_and_intact", ok && seq_bad < 0, "%s; message %d (%s): %s",
           ok ? "all came" : "not all came", seq_bad,
           seq_bad >= 0 && seq_bad < N_FM_MSGS ? how_name[fm_msgs[seq_bad].how] : "-",
           seq_why);
    /* then the 1 MiB zero-copy and split messages and a PIO one, each read only in
       part, 4 words, a message for no handler, FM_QUIT, and another 4 words */
    ok = extract_until(quit_came, timeout_s * 1000);
    cli_result("fm_partial_read_rest_skipped", ok && partial_count == 3 && partial_last_ok,
           "%d of 3 partly read messages came; the last %s", partial_count,
           partial_last_ok ? "intact" : "wrong");
    cli_result("fm_send_4", four_count >= 1 && four_ok, "no, or a wrong, 4-word message");
    cli_result("fm_unknown_handler_reported", saw_unknown, "FM_extract never said FM_EHANDLER");
    cli_result("fm_quit_stops_extract", quit_seen == 1 && four_at_quit == 1,
           "quit %d; 4-word messages handled before it %d (1: the one after it waited)",
           quit_seen, four_at_quit);
    ok = extract_until(second_four_came, timeout_s * 1000);
    cli_result("fm_after_unknown_and_quit", ok && four_ok, "the message after them did not come");
    tell(1, 1);

    /* flow control: stop extracting while node 0 sends three times our credits */
    struct FM_stats a, b;
    FM_get_stats(&a);
    flood_target = 3 * a.credits_per_peer;
    tell(2, 0);
    usleep(300000);
    ok = extract_until(flood_done, timeout_s * 1000);
    FM_get_stats(&b);
    int good = ok && flood_bad < 0 && b.rx_drops == a.rx_drops;
    cli_result("fm_flow_control_nothing_dropped", good, "received %d of %d, first wrong %d, "
           "adapter drops %llu -> %llu", flood_next, flood_target, flood_bad,
           (unsigned long long)a.rx_drops, (unsigned long long)b.rx_drops);
    tell(3, good);

    /* both ways at once */
    flood_next = 0, flood_bad = -1, flood_target = 3 * a.credits_per_peer;
    int fail_at = -1, r = 0;
    FM_set_send_mode(FM_SEND_DMA);
    for (int i = 0; i < flood_target && fail_at < 0; i++) {
        memcpy(dma, &i, sizeof(i));
        if ((r = FM_send(peer, H_FLOOD, dma, FC_MAX_PAYLOAD)) < 0) {
            fail_at = i;
        }
    }
    ok = extract_until(flood_done, timeout_s * 1000);
    good = fail_at < 0 && ok && flood_bad < 0;
    cli_result("fm_both_ways_receiver", good, "send %d: %s; received %d of %d", fail_at,
           FM_strerror(r), flood_next, flood_target);
    tell(4, good);
    /* the end: node 0 says when it has all it wanted, so that nothing of a program it
       runs next finds this one's channel still open */
    cli_result("fm_end", hear(5, NULL), "node 0 did not say it was done");
}

static void fm_part(void)
{
    static unsigned char plain[64];
    int r = FM_send(peer, H_SEQ, plain, 8);
    cli_result("fm_send_before_initialize", r == FM_EINIT, "%d", r);
    r = FM_extract(~0u);
    cli_result("fm_extract_before_initialize", r == FM_EINIT, "%d", r);
    if ((r = FM_initialize()) < 0) {
        cli_result("fm_initialize", 0, "%s: %s", FM_strerror(r), strerror(errno));
        return;
    }
    FM_set_timeout(timeout_s * 1000);
    FM_register_handler(H_SEQ, on_seq);
    FM_register_handler(H_FOUR, on_four);
    FM_register_handler(H_PARTIAL, on_partial);
    FM_register_handler(H_QUIT, on_quit);
    FM_register_handler(H_CTRL, on_ctrl);
    FM_register_handler(H_FLOOD, on_flood);
    unsigned char *dma = FM_alloc_buffer(1 << 20), *big = malloc(1 << 20);
    rx_buf = malloc(1 << 20);
    if (!dma || !big || !rx_buf) {
        cli_result("fm_buffers", 0, "%s", FM_strerror(FM_errno));
        return;
    }
    fm_argument_errors(dma);
    if (node == 0) {
        fm_sender(dma, big);
    } else {
        fm_receiver(dma);
    }
    r = FM_free_buffer(dma);
    cli_result("fm_free_buffer", r == 0, "%s", FM_strerror(r));
    FM_finalize();
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--part", "--timeout", NULL };
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: fc_test [--part raw|fm|all] [--timeout SECONDS]\n"
             "  run on every node; node 0 and node 1 test each other (see fc_test.c)");
        return 0;
    }
    cli_parse("fc_test", argc, argv, 1, known);
    const char *part = cli_str("--part", "all");
    if (strcmp(part, "raw") && strcmp(part, "fm") && strcmp(part, "all")) {
        cli_usage_error("--part '%s': raw, fm or all", part);
    }
    timeout_s = cli_num("--timeout", "20", 1, 3600, "seconds");
    fcraw_t *probe = fcraw_open(NULL);
    if (!probe) {
        printf("FAIL open /dev/fc0: %s\n", strerror(errno));
        return 1;
    }
    node = fcraw_node_id(probe);
    int nodes = fcraw_num_nodes(probe);
    fcraw_close(probe);
    if (nodes < 2) {
        printf("FAIL the network has %d node(s): fc_test needs two\n", nodes);
        return 1;
    }
    if (node > 1) {
        return 0;
    }
    peer = !node;
    if (strcmp(part, "fm")) {
        raw_part();
    }
    if (strcmp(part, "raw")) {
        fm_part();
    }
    printf("%s %d failed\n", cli_failures() ? "FAILED" : "ALL PASSED", cli_failures());
    return cli_failures() ? 1 : 0;
}
