/*
 * sx_bench: the SURE-SX message benchmarks, run in the guest (bench/sx.toml says
 * which). Prints one machine-readable line per measurement:
 *     RESULT <name> key=value ...
 * timed with CLOCK_MONOTONIC, which under retrolink is the model's virtual time.
 * MB = 10^6 bytes, us = microseconds. Failures print "ERROR ..." and exit 1.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libsx/sx.h"

#define TAG_DATA 1
#define TAG_STOP 2
#define RECV_TIMEOUT_MS 60000     /* virtual time: a peer that is gone ends the run */
#define MAX_LIST 32

static sx_t *sx;
static unsigned char buf[SX_MAX_MESSAGE];

static void fail(const char *what)
{
    printf("ERROR %s: %s\n", what, strerror(errno));
    exit(1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static ssize_t recv_timed(int *src, uint32_t *tag)
{
    struct pollfd p = { .fd = sx_fd(sx), .events = POLLIN };
    int r = poll(&p, 1, RECV_TIMEOUT_MS);
    if (r == 0) {
        errno = ETIMEDOUT;
        return -1;
    }
    if (r < 0) {
        return -1;
    }
    return sx_recv(sx, buf, sizeof(buf), src, tag);
}

static int parse_list(const char *s, long *out)
{
    int n = 0;
    char *end;
    while (*s && n < MAX_LIST) {
        out[n++] = strtol(s, &end, 10);
        if (end == s) {
            break;
        }
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

static const char *arg(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 2; i + 1 < argc; i++) {
        if (!strcmp(argv[i], name)) {
            return argv[i + 1];
        }
    }
    if (!dflt) {
        fprintf(stderr, "sx_bench %s: missing %s (see sx_bench --help)\n", argv[1], name);
        exit(2);
    }
    return dflt;
}

static void pingpong(int peer, long *sizes, int nsizes, long iters, long warmup)
{
    for (int k = 0; k < nsizes; k++) {
        double t0 = 0;
        for (long i = -warmup; i < iters; i++) {
            if (i == 0) {
                t0 = now_us();
            }
            if (sx_send(sx, peer, buf, sizes[k], TAG_DATA) < 0) {
                fail("pingpong send");
            }
            if (recv_timed(NULL, NULL) < 0) {
                fail("pingpong receive");
            }
        }
        printf("RESULT latency_us size=%ld value=%.3f\n", sizes[k],
               (now_us() - t0) / iters / 2);
    }
    if (sx_send(sx, peer, buf, 0, TAG_STOP) < 0) {
        fail("pingpong stop");
    }
}

static void echo(void)
{
    for (;;) {
        int src;
        uint32_t tag;
        ssize_t n = recv_timed(&src, &tag);
        if (n < 0) {
            fail("echo receive");
        }
        if (tag == TAG_STOP) {
            return;
        }
        if (sx_send(sx, src, buf, n, tag) < 0) {
            fail("echo send");
        }
    }
}

static double first_done_us;

static void completed(sx_handle_t h, long done)
{
    if (sx_wait(sx, h) < 0) {
        fail("stream completion");
    }
    if (done == 0) {
        first_done_us = now_us();
    }
}

/*
 * count messages of size bytes to dsts round robin, up to window in flight.
 * Returns the us from the first completion to the last: count - 1 messages in
 * steady state (the time to fill the pipeline is the latency, measured apart).
 */
static double stream(long *dsts, int ndsts, long size, long count, long window)
{
    sx_handle_t ring[64];
    long head = 0, inflight = 0;
    if (window < 1 || window > 64) {
        window = 8;
    }
    for (long i = 0; i < count; i++) {
        if (inflight == window) {
            completed(ring[head % window], head);
            head++;
            inflight--;
        }
        if (sx_send_async(sx, dsts[i % ndsts], buf, size, TAG_DATA,
                          &ring[(head + inflight) % window]) < 0) {
            fail("stream send");
        }
        inflight++;
    }
    while (inflight--) {
        completed(ring[head % window], head);
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
static double sink(long count)
{
    double first = 0;
    for (long i = 0; i < count; i++) {
        if (recv_timed(NULL, NULL) < 0) {
            fail("sink receive");
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
         "  echo                                  the other side of pingpong\n"
         "  stream --dst N --size S --count K [--window W]   send_throughput_MBps (confirmations)\n"
         "  sink --count K [--size S]             receive K messages: throughput_MBps, first\n"
         "                                        to last arrival (steady state)\n"
         "  fanout --dsts N1,N2 --size S --count K   K per destination: send_msgs_per_s\n"
         "  fanin --count K                       receive K from anyone: recv_msgs_per_s");
}

int main(int argc, char **argv)
{
    long list[MAX_LIST];

    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    if (!(sx = sx_open(NULL))) {
        fail("open /dev/sx0");
    }
    memset(buf, 0x5a, sizeof(buf));
    const char *mode = argv[1];
    if (!strcmp(mode, "pingpong")) {
        int n = parse_list(arg(argc, argv, "--sizes", NULL), list);
        pingpong(atoi(arg(argc, argv, "--peer", NULL)), list, n,
                 atol(arg(argc, argv, "--iters", "20")), atol(arg(argc, argv, "--warmup", "3")));
    } else if (!strcmp(mode, "echo")) {
        echo();
    } else if (!strcmp(mode, "stream")) {
        long dst = atol(arg(argc, argv, "--dst", NULL));
        long size = atol(arg(argc, argv, "--size", NULL));
        long count = atol(arg(argc, argv, "--count", NULL));
        if (count < 2) {
            errno = EINVAL;
            fail("stream needs --count of at least 2");
        }
        double us = stream(&dst, 1, size, count, atol(arg(argc, argv, "--window", "8")));
        printf("RESULT send_throughput_MBps size=%ld value=%.3f\n", size,
               (count - 1) * size / us);
    } else if (!strcmp(mode, "sink")) {
        long count = atol(arg(argc, argv, "--count", NULL));
        long size = atol(arg(argc, argv, "--size", "0"));
        double us = sink(count);
        if (size > 0 && count > 1) {
            printf("RESULT throughput_MBps size=%ld value=%.3f\n", size, (count - 1) * size / us);
        }
    } else if (!strcmp(mode, "fanout")) {
        int n = parse_list(arg(argc, argv, "--dsts", NULL), list);
        long size = atol(arg(argc, argv, "--size", NULL));
        long count = atol(arg(argc, argv, "--count", NULL)) * n;
        if (count < 2) {
            errno = EINVAL;
            fail("fanout needs --count of at least 1 per destination and 2 in all");
        }
        double us = stream(list, n, size, count, atol(arg(argc, argv, "--window", "8")));
        printf("RESULT send_msgs_per_s size=%ld value=%.1f\n", size, (count - 1) / (us / 1e6));
    } else if (!strcmp(mode, "fanin")) {
        long count = atol(arg(argc, argv, "--count", NULL));
        double us = sink(count);
        if (count > 1) {
            printf("RESULT recv_msgs_per_s value=%.1f\n", (count - 1) / (us / 1e6));
        }
    } else {
        usage();
        return 2;
    }
    sx_close(sx);
    return 0;
}
