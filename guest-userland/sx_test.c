/*
 * sx_test: in-guest tests of the SX driver and libsx. Prints "PASS <name>" or
 * "FAIL <name>: reason" per case and exits 1 if any failed.
 *   sx_test --role sender --peer N     error paths, then an exchange with N
 *   sx_test --role receiver --peer N   the other side of the exchange
 *   sx_test --role lonely --peer N     N powers off at boot: sends must fail, not hang
 */
#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libsx/sx.h"
#include "../guest-kernel-modules/sx/sx_uapi.h"

#define K 20                       /* messages in the ordering/confirmation exchange */
#define TAG_TIMES 99

static sx_t *sx;
static int failures;

static void result(const char *name, int ok, const char *fmt, ...)
{
    if (ok) {
        printf("PASS %s\n", name);
        return;
    }
    failures++;
    printf("FAIL %s: ", name);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void on_alarm(int sig) { (void)sig; }

static int wait_readable(int ms)
{
    struct pollfd p = { .fd = sx_fd(sx), .events = POLLIN };
    return poll(&p, 1, ms);
}

static void error_paths(int peer)
{
    static char big[SX_MAX_MESSAGE + 1];
    int e;

    errno = 0;
    e = sx_send(sx, peer, big, sizeof(big), 0) < 0 ? errno : 0;
    result("too_long_library", e == EMSGSIZE, "errno %d", e);

    struct sx_send_req req = { .dst = peer, .len = SX_MAX_MESSAGE + 1, .buf = (uintptr_t)big };
    e = ioctl(sx_fd(sx), SX_IOC_SEND, &req) < 0 ? errno : 0;
    result("too_long_driver", e == EMSGSIZE, "errno %d", e);

    e = sx_send(sx, sx_num_nodes(sx) + 3, big, 8, 0) < 0 ? errno : 0;
    result("unknown_node", e == EINVAL, "errno %d", e);
    e = sx_send(sx, sx_node_id(sx), big, 8, 0) < 0 ? errno : 0;
    result("send_to_self", e == EINVAL, "errno %d", e);
    e = sx_send(sx, peer, (void *)16, 64, 0) < 0 ? errno : 0;
    result("bad_pointer", e == EFAULT, "errno %d", e);
    e = ioctl(sx_fd(sx), _IOWR('x', 77, int), 0) < 0 ? errno : 0;
    result("unknown_ioctl", e == ENOTTY, "errno %d", e);

    e = sx_recv_nb(sx, big, sizeof(big), NULL, NULL) < 0 ? errno : 0;
    result("recv_nonblocking_empty", e == EAGAIN, "errno %d", e);

    struct sigaction sa = { .sa_handler = on_alarm };     /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    e = sx_recv(sx, big, sizeof(big), NULL, NULL) < 0 ? errno : 0;
    alarm(0);
    result("recv_interrupted", e == EINTR, "errno %d", e);

    struct pollfd p = { .fd = sx_fd(sx), .events = POLLIN | POLLOUT };
    poll(&p, 1, 0);
    result("poll_idle", (p.revents & POLLOUT) && !(p.revents & POLLIN), "revents 0x%x",
           p.revents);

    size_t size = 0;
    const volatile unsigned char *w = sx_map_window(sx, &size);
    result("mmap_window_read_only", w && size == 0x20000, "map %p size %zu", (void *)w, size);
    void *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, sx_fd(sx), 0);
    result("mmap_writable_refused", rw == MAP_FAILED && errno == EPERM, "errno %d", errno);
    void *past = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sx_fd(sx), 0x20000);
    result("mmap_past_window_refused", past == MAP_FAILED && errno == EINVAL, "errno %d",
           errno);
}

static void sender(int peer)
{
    unsigned char msg[256];
    int64_t returned[K], their[K];

    error_paths(peer);
    /* ordering and delivery confirmation: blocking sends of distinct messages */
    for (int i = 0; i < K; i++) {
        memset(msg, i, sizeof(msg));
        int64_t t0 = now_ns();
        if (sx_send(sx, peer, msg, 64 + i, i) < 0) {
            result("exchange_send", 0, "message %d: %s (sent at %lld, failed at %lld ns)", i,
                   strerror(errno), (long long)t0, (long long)now_ns());
            return;
        }
        returned[i] = now_ns();
    }
    /* asynchronous sends: 8 in flight, then tested and waited */
    sx_handle_t h[8];
    int ok = 1;
    for (int i = 0; i < 8; i++) {
        ok &= sx_send_async(sx, peer, msg, 128, 100 + i, &h[i]) == 0;
    }
    /* all slots are taken by unreaped sends: a non-blocking test must not wait */
    int t = sx_test(sx, h[7]);
    result("async_test_does_not_block", t == 0 || t == 1, "sx_test gave %d (%s)", t,
           strerror(errno));
    for (int i = 0; i < 8; i++) {
        ok &= sx_wait(sx, h[i]) == 0;
    }
    result("async_sends", ok, "a send or wait failed: %s", strerror(errno));
    int e = sx_wait(sx, h[0]) < 0 ? errno : 0;
    result("wait_reaped_handle", e == ENOENT, "errno %d", e);

    /* the receiver sends back when it had each message */
    int src;
    uint32_t tag;
    ok = wait_readable(60000) == 1;
    ssize_t n = ok ? sx_recv(sx, their, sizeof(their), &src, &tag) : -1;
    result("poll_readable", ok, "no message within 60 s");
    result("times_received", n == sizeof(their) && src == peer && tag == TAG_TIMES,
           "len %zd src %d tag %u", n, src, tag);
    int late = -1;
    for (int i = 0; i < K && n == sizeof(their); i++) {
        if (returned[i] < their[i]) {
            late = i;
        }
    }
    result("send_returns_after_delivery", n == sizeof(their) && late < 0,
           "message %d: send returned before the receiver had it", late);
}

static void receiver(int peer)
{
    unsigned char msg[SX_MAX_MESSAGE];
    int64_t got[K];
    int bad = -1, stamped = 1;

    for (int i = 0; i < K; i++) {
        int src;
        uint32_t tag;
        int r = wait_readable(60000);
        if (r != 1) {
            result("exchange_receive", 0, "message %d did not come (poll %d, %s, at %lld ns)",
                   i, r, strerror(errno), (long long)now_ns());
            return;
        }
        ssize_t n = sx_recv(sx, msg, sizeof(msg), &src, &tag);
        got[i] = sx_last_rx_time_ns(sx);    /* when it reached this node, not the program */
        int same = n == 64 + i && src == peer && tag == (uint32_t)i;
        for (int b = 0; same && b < n; b++) {
            same = msg[b] == i;
        }
        if (!same && bad < 0) {
            bad = i;
        }
        stamped &= got[i] > 0 && got[i] <= now_ns();
    }
    result("receive_timestamps", stamped, "a receive time is missing or in the future");
    result("in_order_and_intact", bad < 0, "message %d out of order or corrupted", bad);
    int ok = 1;
    for (int i = 0; i < 8; i++) {
        uint32_t tag;
        ok &= sx_recv(sx, msg, sizeof(msg), NULL, &tag) == 128 && tag == 100u + i;
    }
    result("async_messages_received", ok, "wrong async message");
    result("send_times_back", sx_send(sx, peer, got, sizeof(got), TAG_TIMES) == 0, "%s",
           strerror(errno));
}

static void lonely(int peer)
{
    char msg[64] = "anyone?";
    int64_t deadline = now_ns() + 30000000000LL;
    while (sx_peer_up(sx, peer) == 1 && now_ns() < deadline) {
        usleep(10000);
    }
    result("peer_reported_down", sx_peer_up(sx, peer) == 0, "node %d still up", peer);
    int e = sx_send(sx, peer, msg, sizeof(msg), 0) < 0 ? errno : 0;
    result("send_to_down_peer_fails", e == EHOSTUNREACH, "errno %d", e);
}

int main(int argc, char **argv)
{
    const char *role = NULL;
    int peer = -1;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--role")) {
            role = argv[i + 1];
        } else if (!strcmp(argv[i], "--peer")) {
            peer = atoi(argv[i + 1]);
        }
    }
    if (!role || peer < 0) {
        puts("usage: sx_test --role sender|receiver|lonely --peer N");
        return 2;
    }
    if (!(sx = sx_open(NULL))) {
        printf("FAIL open: %s\n", strerror(errno));
        return 1;
    }
    if (!strcmp(role, "sender")) {
        sender(peer);
    } else if (!strcmp(role, "receiver")) {
        receiver(peer);
    } else {
        lonely(peer);
    }
    sx_close(sx);
    return failures ? 1 : 0;
}
