/*
 * sx_bench: the SURE-SX message benchmarks, run in the guest (bench/sx.toml says
 * which). Prints one machine-readable line per measurement:
 *     RESULT <name> key=value ...
 * timed with CLOCK_MONOTONIC, which under retrolink is the model's virtual time.
 * MB = 10^6 bytes, us = microseconds. Failures print "ERROR ..." and exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdnoreturn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "sx/sx.h"

#define TAG_DATA 1
#define TAG_STOP 2
#define MAX_LIST 32
#define MAX_COUNT 100000000L
#define MAX_WINDOW 64

static sx_t *sx;
static unsigned char buf[SX_MAX_MSG];
static int timeout_ms = 60000;    /* virtual time: a peer that is gone ends the run */

static noreturn void fail(const char *what)
{
    printf("ERROR %s: %s\n", what, strerror(errno));
    exit(1);
}

/* "what: nothing within N s" when a bounded wait ran out, else what errno says. */
static noreturn void fail_waiting(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static noreturn void fail_waiting(const char *fmt, ...)
{
    char what[160];
    int e = errno;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    errno = e;
    if (errno == ETIMEDOUT) {
        printf("ERROR %s: nothing within %d s\n", what, timeout_ms / 1000);
        exit(1);
    }
    fail(what);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Wait up to the timeout for the board to be ready for events (POLLIN or POLLOUT). */
static int wait_for(short events)
{
    struct pollfd p = { .fd = sx_fd(sx), .events = events };
    int r = poll(&p, 1, timeout_ms);
    if (r == 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    return r < 0 ? -1 : 0;
}

static ssize_t recv_timed(int *src, uint32_t *tag)
{
    if (wait_for(POLLIN) < 0) {
        return -1;
    }
    return sx_recv(sx, buf, sizeof(buf), src, tag);
}

/*
 * The descriptor is non-blocking, so a send with no free slot fails with EAGAIN
 * at once: wait (bounded) for one and try again. A send that has started is
 * bounded by the board, which completes it within its confirm-timeout-us.
 */
static int send_bounded(long dst, long size, uint32_t tag, sx_handle_t *async)
{
    for (;;) {
        int r = async ? sx_send_async(sx, dst, buf, size, tag, async)
                      : sx_send(sx, dst, buf, size, tag);
        if (r == 0 || errno != EAGAIN) {
            return r;
        }
        if (wait_for(POLLOUT) < 0) {
            return -1;
        }
    }
}

static void pingpong(long peer, long *sizes, int nsizes, long iters, long warmup)
{
    for (int k = 0; k < nsizes; k++) {
        double t0 = 0;
        for (long i = -warmup; i < iters; i++) {
            if (i == 0) {
                t0 = now_us();
            }
            if (send_bounded(peer, sizes[k], TAG_DATA, NULL) < 0) {
                fail_waiting("pingpong send of %ld bytes to node %ld", sizes[k], peer);
            }
            if (recv_timed(NULL, NULL) < 0) {
                fail_waiting("pingpong: waiting for the echo of %ld bytes from node %ld",
                             sizes[k], peer);
            }
        }
        printf("RESULT latency_us size=%ld value=%.3f\n", sizes[k],
               (now_us() - t0) / iters / 2);
    }
    if (send_bounded(peer, 0, TAG_STOP, NULL) < 0) {
        fail_waiting("pingpong stop to node %ld", peer);
    }
}

/* Send back what comes (from peer only, if it is >= 0) until a stop message. */
static void echo(long peer)
{
    for (long i = 1;; i++) {
        int src;
        uint32_t tag;
        ssize_t n = recv_timed(&src, &tag);
        if (n < 0) {
            fail_waiting("echo: waiting for message %ld", i);
        }
        if (peer >= 0 && src != peer) {
            printf("ERROR echo: message %ld came from node %d, not node %ld\n", i, src, peer);
            exit(1);
        }
        if (tag == TAG_STOP) {
            return;
        }
        if (send_bounded(src, n, tag, NULL) < 0) {
            fail_waiting("echo send of message %ld to node %d", i, src);
        }
    }
}

static double first_done_us;

static void completed(sx_handle_t h, long done, long dst)
{
    if (sx_wait(sx, h) < 0) {
        fail_waiting("stream: completion of message %ld to node %ld", done + 1, dst);
    }
    if (done == 0) {
        first_done_us = now_us();
    }
}

/*
 * count messages of size bytes to dsts round robin, up to window in flight
 * (1..the board's send slots: a send waits for a free slot, and only a
 * completed handle frees one). Returns the us from the first completion to the
 * last: count - 1 messages in steady state (the time to fill the pipeline is
 * the latency, measured apart).
 */
static double stream(long *dsts, int ndsts, long size, long count, long window)
{
    sx_handle_t ring[MAX_WINDOW];
    long head = 0, inflight = 0;
    for (long i = 0; i < count; i++) {
        if (inflight == window) {
            completed(ring[head % window], head, dsts[head % ndsts]);
            head++;
            inflight--;
        }
        if (send_bounded(dsts[i % ndsts], size, TAG_DATA,
                         &ring[(head + inflight) % window]) < 0) {
            fail_waiting("stream send of message %ld to node %ld", i + 1, dsts[i % ndsts]);
        }
        inflight++;
    }
    while (inflight--) {
        completed(ring[head % window], head, dsts[head % ndsts]);
        head++;
    }
    return now_us() - first_done_us;
}

/*
 * Receive count messages; returns the us from the first arrival to the last.
 * Arrivals are paced by the slowest stage of the path (ring, firmware, bus), so
 * this is the steady-state rate even when the sender's side is bursty (a station
 * sends several frames per token visit, and confirmations come back in bursts).
 */
static double sink(long count, const char *mode)
{
    double first = 0;
    for (long i = 0; i < count; i++) {
        if (recv_timed(NULL, NULL) < 0) {
            fail_waiting("%s: waiting for message %ld of %ld", mode, i + 1, count);
        }
        if (i == 0) {
            first = now_us();
        }
    }
    return now_us() - first;
}

static void usage(void)
{
    puts("usage: sx_bench MODE [options]   (numbers: RESULT lines; MB = 10^6 bytes)\n"
         "  pingpong --peer N --sizes S1,S2,.. [--iters K] [--warmup W]   latency_us per size\n"
         "  echo [--peer N]                       the other side of pingpong\n"
         "  stream --dst N --size S --count K [--window W]   send_throughput_MBps (confirmations)\n"
         "  sink --count K [--size S]             receive K messages: throughput_MBps, first\n"
         "                                        to last arrival (steady state)\n"
         "  fanout --dsts N1,N2 --size S --count K [--window W]   K per destination:\n"
         "                                        send_msgs_per_s\n"
         "  fanin --count K                       receive K from anyone: recv_msgs_per_s\n"
         "every mode: [--timeout T]  give up (ERROR, exit 1) after T s (default 60) waiting\n"
         "  for a message or a free send slot; a started send is bounded by the board\n"
         "nodes N are other nodes of the ring; sizes S are 0..4096 bytes; a window W is\n"
         "1..the board's send slots (8), default 8; counts K: stream >= 2, others >= 0\n"
         "(fanout >= 1); iters >= 1, warmup >= 0. Bad arguments: a message, exit 2.");
}

/* A node id given as option name: another node of the ring. */
static long check_node(const char *name, long n)
{
    if (n == sx_node_id(sx)) {
        cli_usage_error("%s %ld is this node: it must be another node of the ring", name, n);
    }
    return n;
}

static long node_opt(const char *name)
{
    return check_node(name, cli_num(name, NULL, 0, sx_num_nodes(sx) - 1, "the ring's node ids"));
}

int main(int argc, char **argv)
{
    static const char *const known[][8] = {
        { "pingpong", "--peer", "--sizes", "--iters", "--warmup", "--timeout" },
        { "echo", "--peer", "--timeout" },
        { "stream", "--dst", "--size", "--count", "--window", "--timeout" },
        { "sink", "--count", "--size", "--timeout" },
        { "fanout", "--dsts", "--size", "--count", "--window", "--timeout" },
        { "fanin", "--count", "--timeout" },
    };
    char prog[64], slots[48];
    long list[MAX_LIST], size = 0, count = 0, iters = 0, warmup = 0, window = 0, peer = -1;
    int n = 0, m = 0, nmodes = sizeof(known) / sizeof(known[0]);

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    const char *mode = argv[1];
    while (m < nmodes && strcmp(known[m][0], mode)) {
        m++;
    }
    if (m == nmodes) {
        fprintf(stderr, "sx_bench: unknown mode '%s' (see sx_bench --help)\n", mode);
        return 2;
    }
    snprintf(prog, sizeof(prog), "sx_bench %s", mode);
    /* what does not need the board is checked before it is opened */
    cli_parse(prog, argc, argv, 2, known[m] + 1);
    timeout_ms = cli_num("--timeout", "60", 1, 3600, "seconds") * 1000;
    int is_stream = !strcmp(mode, "stream"), is_fanout = !strcmp(mode, "fanout");
    if (!strcmp(mode, "pingpong")) {
        n = cli_nums("--sizes", 0, SX_MAX_MSG, list, MAX_LIST);
        iters = cli_num("--iters", "20", 1, MAX_COUNT, NULL);
        warmup = cli_num("--warmup", "3", 0, MAX_COUNT, NULL);
    } else if (strcmp(mode, "echo")) {
        size = cli_num("--size", is_stream || is_fanout ? NULL : "0", 0, SX_MAX_MSG, "bytes");
        count = cli_num("--count", NULL, is_stream ? 2 : is_fanout, MAX_COUNT,
                        is_stream ? "messages; a rate needs two" : NULL);
    }
    if (!(sx = sx_open(NULL))) {
        fail("open /dev/sx0");
    }
    /* sends never wait for a slot in the driver: send_bounded waits, with a bound */
    if (fcntl(sx_fd(sx), F_SETFL, fcntl(sx_fd(sx), F_GETFL) | O_NONBLOCK) < 0) {
        fail("open /dev/sx0 non-blocking");
    }
    snprintf(slots, sizeof(slots), "the board has %d send slots", sx_tx_slots(sx));
    if (is_stream || is_fanout) {
        window = cli_num("--window", "8", 1,
                         sx_tx_slots(sx) < MAX_WINDOW ? sx_tx_slots(sx) : MAX_WINDOW, slots);
    }
    if (!strcmp(mode, "pingpong") || (!strcmp(mode, "echo") && cli_given("--peer"))) {
        peer = node_opt("--peer");
    } else if (is_stream) {
        list[n++] = node_opt("--dst");
    } else if (is_fanout) {
        n = cli_nums("--dsts", 0, sx_num_nodes(sx) - 1, list, MAX_LIST);
        for (int i = 0; i < n; i++) {
            check_node("--dsts", list[i]);
        }
        if (count * n < 2) {
            cli_usage_error("--count %ld to %d destination(s): a rate needs two messages in all",
                            count, n);
        }
    }

    memset(buf, 0x5a, sizeof(buf));
    if (!strcmp(mode, "pingpong")) {
        pingpong(peer, list, n, iters, warmup);
    } else if (!strcmp(mode, "echo")) {
        echo(peer);
    } else if (is_stream || is_fanout) {
        double us = stream(list, n, size, count * n, window);
        if (is_stream) {
            printf("RESULT send_throughput_MBps size=%ld value=%.3f\n", size,
                   (count - 1) * size / us);
        } else {
            printf("RESULT send_msgs_per_s size=%ld value=%.1f\n", size,
                   (count * n - 1) / (us / 1e6));
        }
    } else {
        double us = sink(count, mode);
        if (!strcmp(mode, "sink") && size > 0 && count > 1) {
            printf("RESULT throughput_MBps size=%ld value=%.3f\n", size, (count - 1) * size / us);
        } else if (!strcmp(mode, "fanin") && count > 1) {
            printf("RESULT recv_msgs_per_s value=%.1f\n", (count - 1) / (us / 1e6));
        }
    }
    sx_close(sx);
    return 0;
}
