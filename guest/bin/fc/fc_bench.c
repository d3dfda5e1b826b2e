/*
 * fc_bench: the PUMA-III protocol benchmarks, run in the guest on every node (the
 * same command line everywhere). Node 0 and node 1 play ping-pong, other nodes have
 * nothing to do. For each protocol and transfer size node 0 prints
 *     RESULT pingpong protocol=P size=S reps=R latency_us=L MBps=B
 * where L is half the mean round trip (one-way latency) and B = S / L (MB = 10^6
 * bytes), timed with CLOCK_MONOTONIC, which under retrolink is the model's time.
 * Protocols: raw (DMA from mapped buffers, fcraw.h), fm_zc_dma (FM, zero-copy DMA
 * sends), fm_pio (FM, PIO sends: the Myrinet FM baseline), fm_split (FM's split
 * send request / completion API).
 *
 * --mode stream: node 0 streams messages to node 1, which counts the bytes and
 * answers once at the end; node 0 prints
 *     RESULT stream protocol=P size=S messages=N time_us=T MBps=B
 * with B = N * S / T. Before each send the sender prepares (fills) the buffer, the
 * work a producer does: with fm_zc_dma it fills, sends and waits; with fm_split it
 * requests the send of one buffer, fills the other while the adapter's DMA reads
 * the first, then completes the request. Failures print "ERROR ..." and exit 1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "fc/fcraw.h"
#include "fc/fm.h"

#define MAX_SIZE (1 << 20)
#define MAX_SIZES 32
#define H_DATA 1
#define H_STREAM 2              /* stream data: counted and checked, not answered */
#define H_ACK 3                 /* the stream receiver's answer: bytes and messages */
#define RAW_TAG 0x52415700u     /* "RAW" + the repetition's low byte */
#define RAW_SYNC 0x53594e43u    /* "SYNC": both ends have the channel open */

enum { P_RAW, P_ZC, P_PIO, P_SPLIT, NPROTO };
static const char *const proto_name[NPROTO] = { "raw", "fm_zc_dma", "fm_pio", "fm_split" };

static long sizes[MAX_SIZES];
static int nsizes, quick, node, peer, stream;
static long reps_bytes, timeout_s;

static noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static noreturn void die(const char *fmt, ...)
{
    va_list ap;
    printf("ERROR ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Repetitions for a size: about reps_bytes moved per point, 2 .. 200 round trips
 * (a stream: 8 .. 200 messages, so that the first, which nothing overlaps, weighs
 * little). */
static long reps_for(long size)
{
    long r = reps_bytes / size;
    long lo = stream ? 8 : 2, hi = quick ? 20 : 200;
    return r < lo ? lo : r > hi ? hi : r;
}

static void report(int p, long size, long reps, double us)
{
    double one_way = us / reps / 2;
    char lat[CLI_FIXED3_LEN], rate[CLI_FIXED3_LEN];
    printf("RESULT pingpong protocol=%s size=%ld reps=%ld latency_us=%s MBps=%s\n",
           proto_name[p], size, reps, cli_fixed3(one_way, lat),
           cli_fixed3(size / one_way, rate));
    fflush(stdout);
}

/* ---- raw ------------------------------------------------------------------ */

static fcraw_t *raw;

/* Take one whole send of size bytes from the peer out of the ring, into buf. */
static void raw_receive(unsigned char *buf, long size, long rep)
{
    long got = 0;
    double deadline = now_us() + timeout_s * 1e6;
    unsigned idle = 0;
    while (got < size) {
        struct fcraw_frame f;
        int r = fcraw_poll(raw, &f);
        if (r < 0) {
            die("raw: reading the ring: %s", strerror(errno));
        }
        if (r == 0) {
            if (!(++idle & 1023) && now_us() > deadline) {
                die("raw: no message of %ld bytes from node %d within %ld s (repetition "
                    "%ld; %ld bytes came; %ld frames dropped here)", size, peer, timeout_s,
                    rep, got, fcraw_rx_drops(raw));
            }
            continue;
        }
        if (f.tag == RAW_SYNC) {        /* a repeated start frame: not data */
            if (fcraw_consume(raw) < 0) {
                die("raw: consume: %s", strerror(errno));
            }
            continue;
        }
        if ((int)f.src != peer || f.msg_len != (uint32_t)size ||
            f.offset + f.len > (uint32_t)size || f.offset != (uint32_t)got) {
            die("raw: unexpected frame (from %u, %u bytes at %u of %u; expected %ld bytes "
                "at %ld from node %d)", f.src, f.len, f.offset, f.msg_len, size, got, peer);
        }
        memcpy(buf + f.offset, f.data, f.len);
        got += f.len;
        if (fcraw_consume(raw) < 0) {
            die("raw: consume: %s", strerror(errno));
        }
    }
}

static void raw_send(const unsigned char *buf, long size, long rep)
{
    if (fcraw_send_dma(raw, buf, size, peer, RAW_TAG | (rep & 0xff)) < 0) {
        die("raw: DMA send of %ld bytes to node %d: %s (adapter status %d)", size, peer,
            strerror(errno), fcraw_tx_status(raw));
    }
}

/*
 * Frames to a channel its process has not opened yet are lost, and the raw protocol
 * has no handshake of its own: node 0 sends a start frame every millisecond until
 * node 1 answers one (later copies are skipped by raw_receive).
 */
static void raw_start(void)
{
    double deadline = now_us() + timeout_s * 1e6, last = 0;
    for (;;) {
        struct fcraw_frame f;
        int r = fcraw_poll(raw, &f);
        if (r < 0) {
            die("raw: reading the ring: %s", strerror(errno));
        }
        if (r == 1) {
            int sync = f.tag == RAW_SYNC && (int)f.src == peer;
            fcraw_consume(raw);
            if (sync) {
                if (node == 1 && fcraw_send_pio(raw, NULL, 0, peer, RAW_SYNC) < 0) {
                    die("raw: answering node 0's start: %s", strerror(errno));
                }
                return;
            }
            continue;
        }
        double t = now_us();
        if (t > deadline) {
            die("raw: node %d did not start within %ld s", peer, timeout_s);
        }
        if (node == 0 && t - last >= 1000) {
            last = t;
            fcraw_send_pio(raw, NULL, 0, peer, RAW_SYNC);   /* may fail: not up yet */
        }
    }
}

static void bench_raw(void)
{
    if (!(raw = fcraw_open(NULL))) {
        die("raw: open /dev/fc0: %s", strerror(errno));
    }
    fcraw_set_timeout(raw, timeout_s * 1000000000LL);
    unsigned char *sbuf = fcraw_alloc(raw, MAX_SIZE);
    unsigned char *rbuf = malloc(MAX_SIZE);
    if (!sbuf || !rbuf) {
        die("raw: %ld bytes of DMA memory: %s", (long)MAX_SIZE, strerror(errno));
    }
    memset(sbuf, 0x5a, MAX_SIZE);
    raw_start();
    for (int k = 0; k < nsizes; k++) {
        long size = sizes[k], reps = reps_for(size);
        double t0 = 0;
        for (long i = -1; i < reps; i++) {      /* one round trip to warm up */
            if (i == 0) {
                t0 = now_us();
            }
            if (node == 0) {
                raw_send(sbuf, size, i);
                raw_receive(rbuf, size, i);
            } else {
                raw_receive(rbuf, size, i);
                raw_send(sbuf, size, i);
            }
        }
        if (node == 0) {
            report(P_RAW, size, reps, now_us() - t0);
        }
    }
    fcraw_close(raw);       /* waits for the last frames to leave */
    free(rbuf);
}

/* ---- Fast Messages -------------------------------------------------------- */

static unsigned char *fm_rbuf[2], *fm_sbuf_dma, *sbuf_plain;
static unsigned char *volatile rx_into;
static volatile long rx_len;
static volatile int rx_done;

static int on_data(FM_stream *s, unsigned sender)
{
    (void)sender;
    int n = FM_receive(rx_into, s, MAX_SIZE);
    rx_len = n;
    rx_done = 1;
    return FM_CONTINUE;
}

static void fm_die(const char *what, int err)
{
    struct FM_stats st = { 0 };
    FM_get_stats(&st);
    die("%s: %s (FM error %d; credit waits %llu, frames dropped %llu)", what,
        FM_strerror(err), err, (unsigned long long)st.credit_waits,
        (unsigned long long)st.rx_drops);
}

/* Extract until a message came; returns its length. */
static long fm_wait_message(long size, long rep)
{
    double deadline = now_us() + timeout_s * 1e6;
    unsigned idle = 0;
    while (!rx_done) {
        int r = FM_extract(~0u);
        if (r < 0) {
            fm_die("FM_extract", r);
        }
        if (r == 0 && !(++idle & 1023) && now_us() > deadline) {
            die("FM: no message of %ld bytes from node %d within %ld s (repetition %ld)",
                size, peer, timeout_s, rep);
        }
    }
    rx_done = 0;
    if (rx_len != size) {
        die("FM: a message of %ld bytes came, %ld expected (repetition %ld)", rx_len, size,
            rep);
    }
    return rx_len;
}

/* Send size bytes from buf the protocol's way; a split request is returned, not
 * waited for. */
static FM_request fm_send_as(int p, unsigned handler, const unsigned char *buf, long size)
{
    FM_request req = 0;
    int r = p == P_SPLIT ? FM_send_request(peer, handler, buf, size, &req)
                         : FM_send(peer, handler, buf, size);
    if (r < 0) {
        char what[96];
        snprintf(what, sizeof(what), "%s: send of %ld bytes to node %d", proto_name[p], size,
                 peer);
        fm_die(what, r);
    }
    return req;
}

static void fm_complete(FM_request req)
{
    int r = req ? FM_send_wait(req) : 0;
    if (r < 0) {
        fm_die("fm_split: completion", r);
    }
}

/*
 * Node 0 sends and waits for the echo; with the split API it checks the request's
 * completion only after the echo came (the buffer was not needed before). Node 1
 * echoes from the buffer it received into; it does not wait for split requests:
 * messages alternate between two buffers, and a request is complete once a later
 * one has started, before its buffer is received into again.
 */
static void bench_fm(int p)
{
    int r = FM_set_send_mode(p == P_PIO ? FM_SEND_PIO : FM_SEND_DMA);
    if (r < 0) {
        fm_die("FM_set_send_mode", r);
    }
    const unsigned char *sbuf = p == P_PIO ? sbuf_plain : fm_sbuf_dma;
    FM_request req = 0;
    int which = 0;
    for (int k = 0; k < nsizes; k++) {
        long size = sizes[k], reps = reps_for(size);
        double t0 = 0;
        for (long i = -1; i < reps; i++) {
            if (i == 0) {
                t0 = now_us();
            }
            rx_into = fm_rbuf[which];
            if (node == 0) {
                req = fm_send_as(p, H_DATA, sbuf, size);
                fm_wait_message(size, i);
                fm_complete(req);
            } else {
                fm_wait_message(size, i);
                req = fm_send_as(p, H_DATA, fm_rbuf[which], size);
                which ^= 1;
            }
        }
        if (node == 0) {
            report(p, size, reps, now_us() - t0);
        }
    }
    fm_complete(req);
}

/* ---- FM streaming --------------------------------------------------------- */

/*
 * The producer: 32-bit words of a linear congruential generator seeded with the
 * message's number (Numerical Recipes' constants), about one instruction a byte.
 * Each word depends on the last, so the compiler cannot turn the loop into wide
 * stores: the preparation costs the instructions a producer computing its data does.
 */
#define LCG_A 1664525u
#define LCG_C 1013904223u

static void produce(unsigned char *buf, long size, uint32_t seed)
{
    uint32_t x = seed, *w = (uint32_t *)buf;
    long words = size / 4;
    for (long j = 0; j < words; j++) {
        x = x * LCG_A + LCG_C;
        w[j] = x;
    }
    for (long j = words * 4; j < size; j++) {
        buf[j] = (unsigned char)(seed + j);
    }
}

/* The producer's word n (0-based) for seed: the generator jumped n + 1 steps. */
static uint32_t lcg_word(uint32_t seed, long n)
{
    uint32_t a = LCG_A, c = LCG_C, ra = 1, rc = 0;
    for (unsigned long k = n + 1; k; k >>= 1) {
        if (k & 1) {
            ra *= a;
            rc = rc * a + c;
        }
        c *= a + 1;
        a *= a;
    }
    return ra * seed + rc;
}

static unsigned char *st_sink, *fm_sbuf_dma2;
static volatile long st_bytes, st_msgs, st_bad = -1;  /* this point's, at node 1 */
static volatile int ack_done;
static volatile uint32_t ack_bytes, ack_msgs, ack_bad;

/* Receiver: take the message, check its first and last words against the producer. */
static int on_stream(FM_stream *s, unsigned sender)
{
    (void)sender;
    long n = FM_receive(st_sink, s, MAX_SIZE), words = n / 4;
    const uint32_t *w = (const uint32_t *)st_sink;
    if (st_bad < 0 && words &&
        (w[0] != lcg_word(st_msgs, 0) || w[words - 1] != lcg_word(st_msgs, words - 1))) {
        st_bad = st_msgs;
    }
    st_bytes += n;
    st_msgs++;
    return FM_CONTINUE;
}

static int on_ack(FM_stream *s, unsigned sender)
{
    uint32_t v[4];
    (void)sender;
    if (FM_receive(v, s, sizeof(v)) == sizeof(v)) {
        ack_bytes = v[0];
        ack_msgs = v[1];
        ack_bad = v[2];
    }
    ack_done = 1;
    return FM_CONTINUE;
}

/* Extract until *flag is set (a stream's bytes, the answer). */
static void fm_extract_until(volatile int *flag, const volatile long *count, long want,
                             const char *what)
{
    double deadline = now_us() + timeout_s * 1e6;
    unsigned idle = 0;
    while (flag ? !*flag : *count < want) {
        int r = FM_extract(~0u);
        if (r < 0) {
            fm_die("FM_extract", r);
        }
        if (r == 0 && !(++idle & 1023) && now_us() > deadline) {
            die("FM stream: no %s from node %d within %ld s", what, peer, timeout_s);
        }
    }
}

/* zero-copy: prepare, send, wait; split: the next buffer is prepared while the
 * adapter's DMA reads the one just requested. */
static void stream_send(int p, long size, long msgs)
{
    unsigned char *buf[2] = { fm_sbuf_dma, fm_sbuf_dma2 };
    if (p == P_ZC) {
        for (long k = 0; k < msgs; k++) {
            produce(buf[0], size, k);
            fm_send_as(p, H_STREAM, buf[0], size);
        }
        return;
    }
    produce(buf[0], size, 0);
    for (long k = 0; k < msgs; k++) {
        FM_request req = fm_send_as(p, H_STREAM, buf[k & 1], size);
        if (k + 1 < msgs) {
            produce(buf[(k + 1) & 1], size, k + 1);
        }
        fm_complete(req);
    }
}

/*
 * One point: node 0 streams msgs messages of size bytes, node 1 takes them and
 * answers with what it counted; node 0's clock runs from its first preparation to
 * the answer.
 */
static void bench_stream(int p, long size)
{
    long msgs = reps_for(size);
    if (node == 0) {
        ack_done = 0;
        double t0 = now_us();
        stream_send(p, size, msgs);
        fm_extract_until(&ack_done, NULL, 0, "answer");
        double us = now_us() - t0;
        if (ack_bytes != (uint32_t)(size * msgs) || ack_msgs != (uint32_t)msgs) {
            die("FM stream: node %d counted %u bytes in %u messages, %ld in %ld sent", peer,
                ack_bytes, ack_msgs, size * msgs, msgs);
        }
        if (ack_bad != ~0u) {
            die("FM stream: message %u of %ld bytes did not arrive as it was made "
                "(protocol %s)", ack_bad, size, proto_name[p]);
        }
        char time_us[CLI_FIXED3_LEN], rate[CLI_FIXED3_LEN];
        printf("RESULT stream protocol=%s size=%ld messages=%ld time_us=%s MBps=%s\n",
               proto_name[p], size, msgs, cli_fixed3(us, time_us),
               cli_fixed3(size * msgs / us, rate));
        fflush(stdout);
    } else {
        fm_extract_until(NULL, &st_bytes, size * msgs, "stream");
        /* counted from 0 again before answering: a send may run handlers */
        uint32_t bytes = st_bytes, got = st_msgs, bad = st_bad;
        st_bytes = st_msgs = 0;
        st_bad = -1;
        int r = FM_send_4(peer, H_ACK, bytes, got, bad, 0);
        if (r < 0) {
            fm_die("FM stream: the answer", r);
        }
    }
}

/* One 16-byte round trip before the first point: FM greets the peer on its first
 * send, which is then not in a point's time. */
static void stream_start(void)
{
    rx_into = fm_rbuf[0];
    if (node == 1) {
        fm_wait_message(16, -1);
    }
    int r = FM_send_4(peer, H_DATA, 0, 0, 0, 0);
    if (r < 0) {
        fm_die("FM stream: the start", r);
    }
    if (node == 0) {
        fm_wait_message(16, -1);
    }
}

static void bench_stream_all(const int *want)
{
    int r;
    fm_sbuf_dma2 = FM_alloc_buffer(MAX_SIZE);
    st_sink = malloc(MAX_SIZE);
    if (!fm_sbuf_dma2 || !st_sink) {
        fm_die("FM stream: a second buffer of 1 MiB", FM_errno);
    }
    if ((r = FM_register_handler(H_STREAM, on_stream)) < 0 ||
        (r = FM_register_handler(H_ACK, on_ack)) < 0 ||
        (r = FM_set_send_mode(FM_SEND_DMA)) < 0) {
        fm_die("FM stream: set-up", r);
    }
    stream_start();
    for (int p = P_ZC; p < NPROTO; p++) {
        for (int k = 0; want[p] && k < nsizes; k++) {
            bench_stream(p, sizes[k]);
        }
    }
}

static void bench_fm_all(const int *want)
{
    int r = FM_initialize();
    if (r < 0) {
        die("FM_initialize: %s: %s", FM_strerror(r), strerror(errno));
    }
    FM_set_timeout(timeout_s * 1000);
    if ((r = FM_register_handler(H_DATA, on_data)) < 0) {
        fm_die("FM_register_handler", r);
    }
    fm_rbuf[0] = FM_alloc_buffer(MAX_SIZE);
    fm_rbuf[1] = FM_alloc_buffer(MAX_SIZE);
    fm_sbuf_dma = FM_alloc_buffer(MAX_SIZE);
    sbuf_plain = malloc(MAX_SIZE);
    if (!fm_rbuf[0] || !fm_rbuf[1] || !fm_sbuf_dma || !sbuf_plain) {
        fm_die("FM_alloc_buffer of 1 MiB", FM_errno);
    }
    memset(fm_sbuf_dma, 0xa5, MAX_SIZE);
    memset(sbuf_plain, 0x3c, MAX_SIZE);
    struct FM_stats st;
    FM_get_stats(&st);
    if (node == 0) {
        printf("info fm credits_per_peer=%u\n", st.credits_per_peer);
    }
    if (stream) {
        bench_stream_all(want);
    }
    for (int p = P_ZC; !stream && p < NPROTO; p++) {
        if (want[p]) {
            bench_fm(p);
        }
    }
    FM_get_stats(&st);
    printf("info fm node=%d messages_sent=%llu messages_received=%llu credit_waits=%llu "
           "control_sent=%llu backlog_frames=%llu rx_drops=%llu\n", node,
           (unsigned long long)st.messages_sent, (unsigned long long)st.messages_received,
           (unsigned long long)st.credit_waits, (unsigned long long)st.control_sent,
           (unsigned long long)st.backlog_frames, (unsigned long long)st.rx_drops);
    FM_finalize();
}

/* ---- arguments ------------------------------------------------------------ */

static void usage(void)
{
    puts("usage: fc_bench [--quick] [--mode pingpong|stream] [--protocols P1,P2,..]\n"
         "                [--sizes S1,S2,..] [--reps-bytes B] [--timeout T]\n"
         "Run the same command on every node: node 0 and node 1 play ping-pong, the\n"
         "others do nothing. Node 0 prints per protocol and size:\n"
         "  RESULT pingpong protocol=P size=S reps=R latency_us=L MBps=B\n"
         "(L: one-way latency, half the mean round trip; B = S / L, MB = 10^6 bytes).\n"
         "  --mode       pingpong (default) or stream: node 0 streams N messages to\n"
         "               node 1, preparing each buffer before it goes, and prints\n"
         "  RESULT stream protocol=P size=S messages=N time_us=T MBps=B (B = N * S / T)\n"
         "  --protocols  raw,fm_zc_dma,fm_pio,fm_split (default: all; stream:\n"
         "               fm_zc_dma,fm_split, the default)\n"
         "  --sizes      bytes, 16 .. 1048576 (default 16, 32, .. 1048576;\n"
         "               --quick: 16, 256, 4096, 65536, 1048576)\n"
         "  --reps-bytes bytes moved per point, setting its round trips (2 .. 200;\n"
         "               --quick: 2 .. 20) or messages (stream: 8 .. 200, --quick\n"
         "               8 .. 20); default 2097152, --quick 1048576\n"
         "  --timeout    seconds to wait for any message (default 60)\n"
         "Bad arguments: a message, exit 2. Failures: ERROR ..., exit 1.");
}

static void parse_protocols(const char *list, int *want)
{
    const char *s = list;
    while (*s) {
        size_t n = strcspn(s, ",");
        int p = 0;
        while (p < NPROTO && (strlen(proto_name[p]) != n || strncmp(proto_name[p], s, n))) {
            p++;
        }
        if (p == NPROTO) {
            cli_usage_error("--protocols: '%.*s' is not one of raw, fm_zc_dma, fm_pio, "
                            "fm_split", (int)n, s);
        }
        want[p] = 1;
        s += n + (s[n] == ',');
    }
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--mode", "--protocols", "--sizes", "--reps-bytes",
                                         "--timeout", NULL };
    char *args[64];
    int nargs = 1;
    int want[NPROTO] = { 0 };

    args[0] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage();
            return 0;
        }
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
        } else if (nargs < 64) {
            args[nargs++] = argv[i];
        }
    }
    cli_parse("fc_bench", nargs, args, 1, known);
    const char *mode = cli_str("--mode", "pingpong");
    if (strcmp(mode, "pingpong") && !(stream = !strcmp(mode, "stream"))) {
        cli_usage_error("--mode: '%s' is not pingpong or stream", mode);
    }
    if (cli_given("--protocols")) {
        parse_protocols(cli_str("--protocols", NULL), want);
    } else {
        for (int p = 0; p < NPROTO; p++) {
            want[p] = !stream || p == P_ZC || p == P_SPLIT;
        }
    }
    if (stream && (want[P_RAW] || want[P_PIO])) {
        cli_usage_error("--mode stream: the protocols are fm_zc_dma and fm_split (the "
                        "split API against the zero-copy DMA send), not %s",
                        want[P_RAW] ? "raw" : "fm_pio");
    }
    if (cli_given("--sizes")) {
        nsizes = cli_nums("--sizes", 16, MAX_SIZE, sizes, MAX_SIZES);
    } else if (quick) {
        static const long q[] = { 16, 256, 4096, 65536, 1048576 };
        for (nsizes = 0; nsizes < 5; nsizes++) {
            sizes[nsizes] = q[nsizes];
        }
    } else {
        for (long s = 16; s <= MAX_SIZE; s *= 2) {
            sizes[nsizes++] = s;
        }
    }
    /* default: about 3.7 s of modelled time in all, 2-3 minutes of wall time here */
    reps_bytes = cli_num("--reps-bytes", quick ? "1048576" : "2097152", 16, 1L << 30,
                         "bytes per point");
    timeout_s = cli_num("--timeout", "60", 1, 3600, "seconds");

    /* which node this is: the adapter says */
    fcraw_t *probe = fcraw_open(NULL);
    if (!probe) {
        die("open /dev/fc0: %s", strerror(errno));
    }
    node = fcraw_node_id(probe);
    int nodes = fcraw_num_nodes(probe);
    if (node == 0) {
        printf("info node=0 nodes=%d rx_slots=%d max_payload=%d pio_max=%d quick=%d\n", nodes,
               fcraw_rx_slots(probe), fcraw_max_payload(probe), fcraw_pio_max(probe), quick);
    }
    fcraw_close(probe);
    if (nodes < 2) {
        die("the network has %d node(s): ping-pong needs nodes 0 and 1", nodes);
    }
    if (node > 1) {
        return 0;
    }
    peer = !node;
    if (want[P_RAW]) {
        bench_raw();
    }
    if (want[P_ZC] || want[P_PIO] || want[P_SPLIT]) {
        bench_fm_all(want);
    }
    if (node == 0) {
        printf("done\n");
    }
    return 0;
}
