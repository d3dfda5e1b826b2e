/*
 * sx_test: in-guest tests of the SX driver and libsx. Prints "PASS <name>" or
 * "FAIL <name>: reason" per case and exits 1 if any failed.
 *   sx_test --role sender --peer N     error paths, then an exchange with N
 *   sx_test --role receiver --peer N   the other side of the exchange
 *   sx_test --role lonely --peer N     N powers off at boot: sends must fail, not hang
 *   sx_test --role faults --peer N     bad user memory for every ioctl, a full receive
 *   sx_test --role faults-peer --peer N   ring: nothing lost, nothing sent twice
 *   sx_test --role unbind --peer N     the board is unbound and rebound with files open
 *   sx_test --role unbind-peer --peer N   what N receives meanwhile
 * Every wait is bounded: a case that does not finish in time fails, naming what it
 * waited for.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <setjmp.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sx/sx.h"
#include "retrolink/uapi/sx.h"

#define K 20                       /* messages in the ordering/confirmation exchange */
#define TAG_TIMES 99
#define WAIT_S 20                  /* the bound on any one wait, guest seconds */
#define TAG_GHOST 666              /* a message that must never arrive */
#define SX_RX_RING 16              /* the board's receive slots (docs/boards/sx.md) */

static sx_t *sx;
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

/* sx_recv, waiting at most WAIT_S for a message (then ETIMEDOUT). */
static ssize_t recv_bounded(sx_t *s, void *buf, size_t len, int *src, uint32_t *tag)
{
    struct pollfd p = { .fd = sx_fd(s), .events = POLLIN };
    int r = poll(&p, 1, WAIT_S * 1000);
    if (r <= 0) {
        errno = r == 0 ? ETIMEDOUT : errno;
        return -1;
    }
    return sx_recv_nb(s, buf, len, src, tag);
}

static void error_paths(int peer)
{
    static char big[SX_MAX_MSG + 1];
    int e;

    errno = 0;
    e = sx_send(sx, peer, big, sizeof(big), 0) < 0 ? errno : 0;
    cli_result("too_long_library", e == EMSGSIZE, "errno %d", e);

    struct sx_send_req req = { .dst = peer, .len = SX_MAX_MSG + 1, .buf = (uintptr_t)big };
    e = ioctl(sx_fd(sx), SX_IOC_SEND, &req) < 0 ? errno : 0;
    cli_result("too_long_driver", e == EMSGSIZE, "errno %d", e);

    e = sx_send(sx, sx_num_nodes(sx) + 3, big, 8, 0) < 0 ? errno : 0;
    cli_result("unknown_node", e == EINVAL, "errno %d", e);
    e = sx_send(sx, sx_node_id(sx), big, 8, 0) < 0 ? errno : 0;
    cli_result("send_to_self", e == EINVAL, "errno %d", e);
    e = sx_send(sx, peer, (void *)16, 64, 0) < 0 ? errno : 0;
    cli_result("bad_pointer", e == EFAULT, "errno %d", e);
    e = ioctl(sx_fd(sx), _IOWR('x', 77, int), 0) < 0 ? errno : 0;
    cli_result("unknown_ioctl", e == ENOTTY, "errno %d", e);

    e = sx_recv_nb(sx, big, sizeof(big), NULL, NULL) < 0 ? errno : 0;
    cli_result("recv_nonblocking_empty", e == EAGAIN, "errno %d", e);

    struct sigaction sa = { .sa_handler = on_alarm };     /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    alarm(1);
    e = sx_recv(sx, big, sizeof(big), NULL, NULL) < 0 ? errno : 0;
    alarm(0);
    cli_result("recv_interrupted", e == EINTR, "errno %d", e);

    struct pollfd p = { .fd = sx_fd(sx), .events = POLLIN | POLLOUT };
    poll(&p, 1, 0);
    cli_result("poll_idle", (p.revents & POLLOUT) && !(p.revents & POLLIN), "revents 0x%x",
               p.revents);

    size_t size = 0;
    const volatile unsigned char *w = sx_map_window(sx, &size);
    cli_result("mmap_window_read_only", w && size == 0x20000, "map %p size %zu", (void *)w, size);
    void *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, sx_fd(sx), 0);
    cli_result("mmap_writable_refused", rw == MAP_FAILED && errno == EPERM, "errno %d", errno);
    void *past = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sx_fd(sx), 0x20000);
    cli_result("mmap_past_window_refused", past == MAP_FAILED && errno == EINVAL, "errno %d",
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
        if (CLI_BOUNDED(WAIT_S, sx_send(sx, peer, msg, 64 + i, i)) < 0) {
            cli_result("exchange_send", 0, "message %d: %s (sent at %lld, failed at %lld ns)", i,
                       strerror(errno), (long long)t0, (long long)now_ns());
            return;
        }
        returned[i] = now_ns();
    }
    /* asynchronous sends: 8 in flight, then tested and waited */
    sx_handle_t h[8];
    int ok = 1;
    for (int i = 0; i < 8; i++) {
        ok &= CLI_BOUNDED(WAIT_S, sx_send_async(sx, peer, msg, 128, 100 + i, &h[i])) == 0;
    }
    /* all slots are taken by unreaped sends: a non-blocking test must not wait */
    int t = sx_test(sx, h[7]);
    cli_result("async_test_does_not_block", t == 0 || t == 1, "sx_test gave %d (%s)", t,
               strerror(errno));
    for (int i = 0; i < 8; i++) {
        ok &= CLI_BOUNDED(WAIT_S, sx_wait(sx, h[i])) == 0;
    }
    cli_result("async_sends", ok, "a send or wait failed: %s", strerror(errno));
    int e = sx_wait(sx, h[0]) < 0 ? errno : 0;
    cli_result("wait_reaped_handle", e == ENOENT, "errno %d", e);

    /* the receiver sends back when it had each message */
    int src;
    uint32_t tag;
    ok = wait_readable(60000) == 1;
    ssize_t n = ok ? sx_recv(sx, their, sizeof(their), &src, &tag) : -1;
    cli_result("poll_readable", ok, "no message within 60 s");
    cli_result("times_received", n == sizeof(their) && src == peer && tag == TAG_TIMES,
               "len %zd src %d tag %u", n, src, tag);
    int late = -1;
    for (int i = 0; i < K && n == sizeof(their); i++) {
        if (returned[i] < their[i]) {
            late = i;
        }
    }
    cli_result("send_returns_after_delivery", n == sizeof(their) && late < 0,
               "message %d: send returned before the receiver had it", late);
}

static void receiver(int peer)
{
    unsigned char msg[SX_MAX_MSG];
    int64_t got[K];
    int bad = -1, stamped = 1;

    for (int i = 0; i < K; i++) {
        int src;
        uint32_t tag;
        int r = wait_readable(60000);
        if (r != 1) {
            cli_result("exchange_receive", 0, "message %d did not come (poll %d, %s, at %lld ns)",
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
    cli_result("receive_timestamps", stamped, "a receive time is missing or in the future");
    cli_result("in_order_and_intact", bad < 0, "message %d out of order or corrupted", bad);
    int ok = 1;
    for (int i = 0; i < 8; i++) {
        uint32_t tag;
        ok &= recv_bounded(sx, msg, sizeof(msg), NULL, &tag) == 128 && tag == 100u + i;
    }
    cli_result("async_messages_received", ok, "wrong async message");
    cli_result("send_times_back",
               CLI_BOUNDED(WAIT_S, sx_send(sx, peer, got, sizeof(got), TAG_TIMES)) == 0, "%s",
               strerror(errno));
}

static void lonely(int peer)
{
    char msg[64] = "anyone?";
    int64_t deadline = now_ns() + 30000000000LL;
    while (sx_peer_up(sx, peer) == 1 && now_ns() < deadline) {
        usleep(10000);
    }
    cli_result("peer_reported_down", sx_peer_up(sx, peer) == 0, "node %d still up", peer);
    int e = CLI_BOUNDED(WAIT_S, sx_send(sx, peer, msg, sizeof(msg), 0)) < 0 ? errno : 0;
    cli_result("send_to_down_peer_fails", e == EHOSTUNREACH, "errno %d", e);
}

/* ---- faults: bad user memory, a full receive ring ------------------------ */

/* Tags of the phases of faults/faults-peer: first + i, then end. */
#define A_FIRST 100        /* asynchronous sends after unwritable tickets (9 of them) */
#define A_COUNT 9
#define A_END 199
#define B_FIRST 200        /* received after receives into bad buffers */
#define B_COUNT 5
#define B_END 299
#define C_FIRST 300        /* streamed into a receiver that does not read */
#define C_COUNT 40
#define C_END 399
#define FILL_PAUSE_MS 50   /* how long the full ring is left unread (the board's
                              confirm-timeout-us is 100 ms: a longer pause fails sends) */

static long sysfs_counter(const char *name)
{
    char path[96];
    long v = -1;
    snprintf(path, sizeof(path), "/sys/class/misc/sx0/%s", name);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%ld", &v) != 1) {
            v = -1;
        }
        fclose(f);
    }
    return v;
}

/* A page holding a copy of obj, made read-only: the kernel can read it, not write it. */
static void *read_only_copy(const void *obj, size_t size)
{
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
    memcpy(p, obj, size);
    mprotect(p, 4096, PROT_READ);
    return p;
}

static void fill(unsigned char *msg, size_t len, uint32_t tag)
{
    memset(msg, tag & 0xff, len);
}

static int send_tagged(sx_t *s, int peer, uint32_t tag, size_t len)
{
    unsigned char msg[256];
    fill(msg, len, tag);
    return CLI_BOUNDED(WAIT_S, sx_send(s, peer, msg, len, tag));
}

/*
 * SEND_ASYNC whose ticket cannot be written back must fail before anything is
 * sent, and leave no slot busy; WAIT whose status cannot be written back must
 * keep the ticket, so the caller can ask again.
 */
static void unwritable_tickets(int peer)
{
    unsigned char msg[128];
    sx_t *s = sx_open(NULL);
    int slots = sx_tx_slots(s), bad = -1, e = 0;
    long sent0 = sysfs_counter("board_tx_msgs");

    fill(msg, sizeof(msg), TAG_GHOST);
    struct sx_send_req req = { .dst = peer, .len = sizeof(msg), .tag = TAG_GHOST,
                               .buf = (uintptr_t)msg };
    void *ro = read_only_copy(&req, sizeof(req));
    for (int i = 0; i <= slots && bad < 0; i++) {       /* one more than there are slots */
        long r = CLI_BOUNDED(5, ioctl(sx_fd(s), SX_IOC_SEND_ASYNC, ro));
        if (r == 0 || errno != EFAULT) {
            bad = i, e = r == 0 ? 0 : errno;
        }
    }
    cli_result("async_unwritable_ticket_fails", bad < 0, "call %d of %d: %s", bad + 1, slots + 1,
               bad >= 0 && e == 0 ? "succeeded" : strerror(e));
    struct pollfd p = { .fd = sx_fd(s), .events = POLLOUT };
    poll(&p, 1, 0);
    cli_result("async_unwritable_ticket_leaves_no_slot_busy", p.revents & POLLOUT,
               "no free send slot after %d failed sends", slots + 1);

    /* every slot, then one WAIT into read-only memory, then the real WAITs */
    sx_handle_t h[64];
    int ok = slots <= 64, i;
    for (i = 0; i < slots && ok; i++) {
        fill(msg, sizeof(msg), A_FIRST + i);
        ok = CLI_BOUNDED(5, sx_send_async(s, peer, msg, sizeof(msg), A_FIRST + i, &h[i])) == 0;
    }
    cli_result("async_after_unwritable_tickets", ok, "send %d of %d: %s", i, slots,
               strerror(errno));
    if (!ok) {
        sx_close(s);
        return;
    }
    struct sx_wait_req wreq = { .ticket = h[0] };
    void *wro = read_only_copy(&wreq, sizeof(wreq));
    e = CLI_BOUNDED(WAIT_S, ioctl(sx_fd(s), SX_IOC_WAIT, wro)) < 0 ? errno : 0;
    cli_result("wait_unwritable_status_fails", e == EFAULT, "errno %d (%s)", e, strerror(e));
    e = CLI_BOUNDED(WAIT_S, sx_wait(s, h[0])) < 0 ? errno : 0;
    cli_result("wait_unwritable_status_keeps_the_ticket", e == 0, "then sx_wait: %s", strerror(e));
    for (i = 1; i < slots && ok; i++) {
        ok = CLI_BOUNDED(WAIT_S, sx_wait(s, h[i])) == 0;
    }
    for (i = slots; i < A_COUNT && ok; i++) {
        ok = send_tagged(s, peer, A_FIRST + i, sizeof(msg)) == 0;
    }
    cli_result("async_sends_confirmed", ok, "message %d: %s", A_FIRST + i - 1, strerror(errno));
    long sent = sysfs_counter("board_tx_msgs") - sent0;
    cli_result("async_unwritable_ticket_sent_nothing", sent == A_COUNT,
               "the board sent %ld messages, the program %d", sent, A_COUNT);
    sx_close(s);
    munmap(ro, 4096);
    munmap(wro, 4096);
}

/*
 * Stream C_COUNT messages into a receiver that leaves its ring full for a
 * while: a send with no free slot fails with EAGAIN at once (non-blocking
 * descriptor), the sender waits for confirmations (bounded), and every send is
 * confirmed in the end.
 */
struct stream {
    sx_t *s;
    sx_handle_t h[64];
    long head, inflight;
    int failed, e;
    int64_t longest;        /* ns, the longest wait for a confirmation */
};

static void reap_oldest(struct stream *st)
{
    int64_t t0 = now_ns();
    if (CLI_BOUNDED(WAIT_S, sx_wait(st->s, st->h[st->head++ % sx_tx_slots(st->s)])) < 0) {
        st->failed++, st->e = errno;
    }
    if (now_ns() - t0 > st->longest) {
        st->longest = now_ns() - t0;
    }
    st->inflight--;
}

static void fill_ring_sender(int peer)
{
    unsigned char msg[64];
    struct stream st = { .s = sx_open(NULL) };
    int slots = sx_tx_slots(st.s), eagain = 0, ghost = 0;
    sx_handle_t x;

    fcntl(sx_fd(st.s), F_SETFL, fcntl(sx_fd(st.s), F_GETFL) | O_NONBLOCK);
    for (long i = 0; i < C_COUNT; i++) {
        if (st.inflight == slots) {
            /* no free slot: the driver must say so at once, and send nothing */
            fill(msg, sizeof(msg), TAG_GHOST);
            if (sx_send_async(st.s, peer, msg, sizeof(msg), TAG_GHOST, &x) == 0) {
                ghost++;
            } else {
                eagain += errno == EAGAIN;
            }
            reap_oldest(&st);
        }
        fill(msg, sizeof(msg), C_FIRST + i);
        if (sx_send_async(st.s, peer, msg, sizeof(msg), C_FIRST + i,
                          &st.h[(st.head + st.inflight) % slots]) < 0) {
            st.failed++, st.e = errno;
        } else {
            st.inflight++;
        }
    }
    while (st.inflight) {
        reap_oldest(&st);
    }
    cli_result("fill_ring_sender_told_eagain", eagain > 0 && !ghost,
               "%d EAGAIN, %d sends went out with no free slot", eagain, ghost);
    cli_result("fill_ring_every_send_confirmed", !st.failed, "%d sends failed, the last: %s",
               st.failed, strerror(st.e));
    cli_result("fill_ring_sender_held_back", st.longest >= FILL_PAUSE_MS / 2 * 1000000LL,
               "the longest wait for a confirmation was %lld us: the full ring did not hold "
               "the sender back", (long long)st.longest / 1000);
    sx_close(st.s);
}

static void faults(int peer)
{
    unwritable_tickets(peer);
    send_tagged(sx, peer, A_END, 8);
    int ok = 1, i;
    for (i = 0; i < B_COUNT && ok; i++) {
        ok = send_tagged(sx, peer, B_FIRST + i, 100 + i) == 0;
    }
    cli_result("bad_buffer_phase_sends", ok, "message %d: %s", B_FIRST + i - 1, strerror(errno));
    send_tagged(sx, peer, B_END, 8);
    fill_ring_sender(peer);
    send_tagged(sx, peer, C_END, 8);
}

/* Messages read so far must be first .. first + n - 1 in order, intact, then end. */
static void expect_sequence(const char *name, uint32_t first, int n, uint32_t end)
{
    unsigned char msg[SX_MAX_MSG];
    char got[256] = "";
    int bad = 0;
    for (int i = 0;; i++) {
        uint32_t tag;
        int src;
        ssize_t len = recv_bounded(sx, msg, sizeof(msg), &src, &tag);
        if (len < 0) {
            cli_result(name, 0, "message %d (tag %u expected): %s; got tags%s", i,
                       i < n ? first + i : end, strerror(errno), got);
            return;
        }
        int intact = 1;
        for (ssize_t b = 0; b < len; b++) {
            intact &= msg[b] == (tag & 0xff);
        }
        if (strlen(got) < sizeof(got) - 16) {
            snprintf(got + strlen(got), sizeof(got) - strlen(got), " %u", tag);
        }
        bad |= !intact || tag != (i < n ? first + i : end);
        if (tag == end) {
            break;
        }
    }
    cli_result(name, !bad, "expected tags %u..%u then %u, got%s", first, first + n - 1, end, got);
}

/* Messages the driver holds for reading (read from the driver: a count of what
 * arrived since this program started would include what came before it looked). */
static long queued(void)
{
    return sysfs_counter("rx_queued");
}

static void bad_receive_buffers(void)
{
    struct {
        const char *name;
        void *buf;
        size_t len;
        int ro_req;
    } bad[] = {
        { "recv_null_buffer", NULL, 64, 0 },
        { "recv_kernel_buffer", (void *)0xffffffff81000000UL, 64, 0 },
        { "recv_read_only_buffer", NULL, 64, 0 },
        { "recv_buffer_runs_off_the_end", NULL, SX_MAX_MSG, 0 },
        { "recv_read_only_request", NULL, 64, 1 },
    };
    unsigned char *pages = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(pages, 4096, PROT_READ);
    munmap(pages + 2 * 4096, 4096);
    bad[2].buf = pages;
    bad[3].buf = pages + 2 * 4096 - 32;         /* 32 bytes, then nothing mapped */
    bad[4].buf = pages + 4096;

    int r = wait_readable(WAIT_S * 1000);
    cli_result("bad_buffer_phase_message", r == 1, "no message within %d s", WAIT_S);
    for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        struct sx_recv_req req = { .buf = (uintptr_t)bad[k].buf, .len = bad[k].len };
        void *arg = bad[k].ro_req ? read_only_copy(&req, sizeof(req)) : &req;
        int e = CLI_BOUNDED(5, ioctl(sx_fd(sx), SX_IOC_RECV, arg)) < 0 ? errno : 0;
        cli_result(bad[k].name, e == EFAULT, "errno %d (%s)", e, strerror(e));
    }
    struct pollfd p = { .fd = sx_fd(sx), .events = POLLIN };
    poll(&p, 1, 0);
    cli_result("recv_efault_keeps_the_message_queued", p.revents & POLLIN, "revents 0x%x",
               p.revents);
    expect_sequence("recv_efault_loses_nothing", B_FIRST, B_COUNT, B_END);
}

static void faults_peer(void)
{
    expect_sequence("async_messages_once_each", A_FIRST, A_COUNT, A_END);
    bad_receive_buffers();

    /* fill the ring: do not read until the board has handed over all it can */
    int64_t deadline = now_ns() + WAIT_S * 1000000000LL;
    while (queued() < SX_RX_RING && now_ns() < deadline) {
        usleep(1000);
    }
    long full = queued();
    cli_result("fill_ring_fills", full == SX_RX_RING, "%ld messages queued, not %d", full,
               SX_RX_RING);
    usleep(FILL_PAUSE_MS * 1000);
    full = queued();
    cli_result("fill_ring_holds_no_more", full == SX_RX_RING, "%ld messages queued after %d ms",
               full, FILL_PAUSE_MS);
    expect_sequence("fill_ring_nothing_lost", C_FIRST, C_COUNT, C_END);
    int e = sx_recv_nb(sx, NULL, 0, NULL, NULL) < 0 ? errno : 0;
    cli_result("fill_ring_nothing_more", e == EAGAIN, "a message after the last: errno %d", e);
}

/* ---- unbind: the board goes away under open files, and comes back -------- */

#define U_FIRST 100        /* sent before the unbind, confirmed, never reaped */
#define U_AFTER 200        /* sent on the rebound board */
#define U_REPLY 201        /* the peer's answer to it */

static sigjmp_buf on_bus;

static void bus_error(int sig)
{
    (void)sig;
    siglongjmp(on_bus, 1);
}

/* Write a PCI address to /sys/bus/pci/drivers/sx/<what> (bind, unbind). */
static int sysfs_write(const char *what, const char *bdf)
{
    char path[64];
    snprintf(path, sizeof(path), "/sys/bus/pci/drivers/sx/%s", what);
    FILE *f = fopen(path, "w");
    if (!f) {
        return -1;
    }
    int ok = fputs(bdf, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Lines of the kernel log that say a board's state was freed. */
static int freed_lines(void)
{
    char line[256];
    int n = 0;
    FILE *f = popen("dmesg", "r");
    while (f && fgets(line, sizeof(line), f)) {
        n += strstr(line, "sx0: state freed") != NULL;
    }
    if (f) {
        pclose(f);
    }
    return n;
}

/* A child that blocks in one call on the shared descriptor; its result says how it ended. */
static pid_t blocked_child(int kind, int peer)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    unsigned char msg[64] = { 0 };
    int e;
    if (kind == 0) {
        e = CLI_BOUNDED(WAIT_S, sx_recv(sx, msg, sizeof(msg), NULL, NULL)) < 0 ? errno : 0;
        cli_result("unbind_wakes_a_blocked_recv", e == ENODEV, "errno %d (%s)", e, strerror(e));
    } else if (kind == 1) {                 /* every slot is taken: it waits for one */
        fill(msg, sizeof(msg), TAG_GHOST);
        e = CLI_BOUNDED(WAIT_S, sx_send(sx, peer, msg, sizeof(msg), TAG_GHOST)) < 0 ? errno : 0;
        cli_result("unbind_wakes_a_blocked_send", e == ENODEV, "errno %d (%s)", e, strerror(e));
    } else {
        struct pollfd p = { .fd = sx_fd(sx), .events = POLLIN };
        int r = poll(&p, 1, WAIT_S * 1000);
        cli_result("unbind_wakes_a_blocked_poll", r == 1 && (p.revents & (POLLERR | POLLHUP)),
                   "poll gave %d, revents 0x%x", r, p.revents);
    }
    exit(cli_failures() ? 1 : 0);
}

/* Every call on the descriptor of a removed board fails with ENODEV. */
static void calls_on_removed(const volatile unsigned char *window, sx_handle_t ticket, int peer)
{
    unsigned char msg[64] = { 0 };
    struct sx_info info;
    struct sx_send_req sreq = { .dst = peer, .len = 8, .buf = (uintptr_t)msg };
    struct sx_wait_req wreq = { .ticket = ticket };
    struct sx_recv_req rreq = { .buf = (uintptr_t)msg, .len = sizeof(msg),
                                .flags = SX_RECV_NONBLOCK };
    struct { const char *name; unsigned long cmd; void *arg; } calls[] = {
        { "info", SX_IOC_INFO, &info }, { "send", SX_IOC_SEND, &sreq },
        { "send_async", SX_IOC_SEND_ASYNC, &sreq }, { "wait", SX_IOC_WAIT, &wreq },
        { "recv", SX_IOC_RECV, &rreq },
    };
    char name[64];
    for (unsigned k = 0; k < sizeof(calls) / sizeof(calls[0]); k++) {
        int e = CLI_BOUNDED(5, ioctl(sx_fd(sx), calls[k].cmd, calls[k].arg)) < 0 ? errno : 0;
        snprintf(name, sizeof(name), "removed_%s_enodev", calls[k].name);
        cli_result(name, e == ENODEV, "errno %d (%s)", e, strerror(e));
    }
    struct pollfd p = { .fd = sx_fd(sx), .events = POLLIN | POLLOUT };
    int r = poll(&p, 1, 0);
    cli_result("removed_poll_hup", r == 1 && (p.revents & (POLLERR | POLLHUP)) &&
               !(p.revents & (POLLIN | POLLOUT)), "poll gave %d, revents 0x%x", r, p.revents);
    void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sx_fd(sx), 0);
    cli_result("removed_mmap_enodev", m == MAP_FAILED && errno == ENODEV, "mmap gave %p, errno %d",
               m, errno);
    ssize_t n = read(sx_fd(sx), msg, sizeof(msg));
    cli_result("removed_read_fails", n < 0, "read gave %zd", n);

    /* the window mapped before the removal is gone too: a read is SIGBUS, not stale data */
    struct sigaction sa = { .sa_handler = bus_error }, old;
    sigaction(SIGBUS, &sa, &old);
    volatile int bus = 0;
    if (sigsetjmp(on_bus, 1) == 0) {
        (void)window[0];
    } else {
        bus = 1;
    }
    sigaction(SIGBUS, &old, NULL);
    cli_result("removed_window_mapping_revoked", bus, "a read of the old mapping succeeded");
}

static void unbind_rebind(int peer)
{
    char link[256], bdf[256];
    ssize_t n = readlink("/sys/class/misc/sx0/device", link, sizeof(link) - 1);
    if (n <= 0) {
        cli_result("find_the_board", 0, "readlink /sys/class/misc/sx0/device: %s", strerror(errno));
        return;
    }
    link[n] = 0;
    snprintf(bdf, sizeof(bdf), "%.200s", strrchr(link, '/') ? strrchr(link, '/') + 1 : link);
    const volatile unsigned char *window = sx_map_window(sx, NULL);
    /* the driver says when it frees a removed board's state (pr_debug) */
    FILE *dyn = fopen("/sys/kernel/debug/dynamic_debug/control", "w");
    if (dyn) {
        fputs("module sx +p\n", dyn);
        fclose(dyn);
    }

    /* every slot holds a confirmed send nobody has reaped: a blocking send must wait */
    int slots = sx_tx_slots(sx), ok = 1, i;
    sx_handle_t h[64];
    unsigned char msg[64];
    for (i = 0; i < slots && ok; i++) {
        fill(msg, sizeof(msg), U_FIRST + i);
        ok = CLI_BOUNDED(5, sx_send_async(sx, peer, msg, sizeof(msg), U_FIRST + i, &h[i])) == 0;
    }
    cli_result("unbind_setup_sends", ok && window, "send %d: %s", i, strerror(errno));
    if (window) {
        (void)window[0];            /* mapped now: the removal must take it away */
    }
    usleep(100000);                 /* they are delivered and confirmed */
    pid_t kids[3];
    for (int k = 0; k < 3; k++) {
        kids[k] = blocked_child(k, peer);
    }
    usleep(200000);                 /* the children are blocked in the driver */

    cli_result("unbind_with_files_open", sysfs_write("unbind", bdf) == 0, "unbind %s: %s", bdf,
               strerror(errno));
    int64_t deadline = now_ns() + WAIT_S * 1000000000LL;
    for (int k = 0; k < 3; k++) {
        int st = 0;
        while (waitpid(kids[k], &st, WNOHANG) == 0 && now_ns() < deadline) {
            usleep(10000);
        }
        if (now_ns() >= deadline) {
            kill(kids[k], SIGKILL);
            waitpid(kids[k], &st, 0);
        }
        cli_result("blocked_call_returned", WIFEXITED(st) && WEXITSTATUS(st) == 0,
                   "child %d: %s (status 0x%x)", k, now_ns() >= deadline ? "still blocked" :
                   "failed", st);
    }
    calls_on_removed(window, h[0], peer);
    cli_result("removed_device_node_gone", access("/dev/sx0", F_OK) < 0 && errno == ENOENT,
               "/dev/sx0 still there");

    cli_result("rebind_with_the_old_file_open", sysfs_write("bind", bdf) == 0, "bind %s: %s", bdf,
               strerror(errno));
    sx_t *again = sx_open(NULL);
    cli_result("rebound_board_opens", again != NULL, "%s", strerror(errno));
    struct sx_info info;
    int e = ioctl(sx_fd(sx), SX_IOC_INFO, &info) < 0 ? errno : 0;
    cli_result("old_file_still_removed_after_rebind", e == ENODEV, "errno %d", e);
    if (again) {
        uint32_t tag = 0;
        int ok = send_tagged(again, peer, U_AFTER, 64) == 0;
        cli_result("rebound_board_sends", ok, "%s", strerror(errno));
        ssize_t n = recv_bounded(again, msg, sizeof(msg), NULL, &tag);
        cli_result("rebound_board_receives", n >= 0 && tag == U_REPLY, "got %zd bytes, tag %u: %s",
                   n, tag, strerror(errno));
    }
    int before = freed_lines();
    sx_close(sx);
    sx = NULL;
    int after = freed_lines();
    cli_result("removed_state_freed_on_last_close", before == 0 && after == 1,
               "'sx0: state freed' lines: %d before the close, %d after", before, after);
    if (again) {
        sx_close(again);
    }
}

static void unbind_peer(int peer)
{
    expect_sequence("unbind_peer_gets_each_message_once", U_FIRST, sx_tx_slots(sx), U_AFTER);
    cli_result("unbind_peer_replies", send_tagged(sx, peer, U_REPLY, 8) == 0, "%s",
               strerror(errno));
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--role", "--peer", NULL };
    static const char *const roles[] = { "sender", "receiver", "lonely", "faults",
                                         "faults-peer", "unbind", "unbind-peer", NULL };
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: sx_test --role sender|receiver|lonely|faults|faults-peer|unbind|"
             "unbind-peer --peer N\n  N: another node of the ring (see the top of sx_test.c)");
        return 0;
    }
    cli_parse("sx_test", argc, argv, 1, known);
    const char *role = cli_str("--role", NULL);
    int r = 0;
    while (roles[r] && strcmp(roles[r], role)) {
        r++;
    }
    if (!roles[r]) {
        cli_usage_error("unknown --role '%s'", role);
    }
    cli_num("--peer", NULL, 0, 1023, "a node id");
    if (!(sx = sx_open(NULL))) {
        printf("FAIL open: %s\n", strerror(errno));
        return 1;
    }
    int peer = cli_num("--peer", NULL, 0, sx_num_nodes(sx) - 1, "the ring's node ids");
    if (peer == sx_node_id(sx)) {
        cli_usage_error("--peer %d is this node: it must be another node of the ring", peer);
    }
    if (!strcmp(role, "sender")) {
        sender(peer);
    } else if (!strcmp(role, "receiver")) {
        receiver(peer);
    } else if (!strcmp(role, "lonely")) {
        lonely(peer);
    } else if (!strcmp(role, "faults")) {
        faults(peer);
    } else if (!strcmp(role, "faults-peer")) {
        faults_peer();
    } else if (!strcmp(role, "unbind")) {
        unbind_rebind(peer);
    } else {
        unbind_peer(peer);
    }
    if (sx) {
        sx_close(sx);
    }
    return cli_failures() ? 1 : 0;
}
