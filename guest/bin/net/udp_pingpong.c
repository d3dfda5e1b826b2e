/*
 * udp_pingpong: UDP round trips between two nodes over the stock Linux stack, timed
 * with clock_gettime (modeled time: the guest's clocks follow QEMU's virtual clock).
 *
 *   udp_pingpong echo  [--port P]
 *       echo every datagram back to its sender; a datagram of 0 bytes ends it
 *   udp_pingpong ping  --peer HOST [--port P] [--sizes 64,1024,1472] [--iters N]
 *                      [--warmup W]
 *       for each size (4 to 65507 bytes): W round trips untimed, then N timed; prints
 *       RESULT rtt_ns size=S min=.. median=.. max=..   and
 *       RESULT one_way_us size=S value=..  (half the median round trip)
 *       then ends the echo server
 *   udp_pingpong flood --peer HOST [--port P] [--size S] [--count N]
 *       send N datagrams as fast as the stack takes them, no replies
 *   udp_pingpong stream --peer HOST [--port P] [--size S] --rate KBPS --ms T
 *       send messages of S bytes at KBPS kB/s (10^3 bytes) for T ms, each at its time
 *       (message k at start + k * S / rate: a fixed offered load, whatever the link
 *       takes), then the end (UDP: a 0-byte datagram; TCP: close); prints
 *       RESULT stream_tx proto=.. size=S bytes=..
 *   udp_pingpong sink [--port P]
 *       take one stream's messages until its end; prints RESULT stream_rx proto=.. bytes=..
 * --tcp (echo, ping, stream, sink): the same over one TCP connection with TCP_NODELAY: for each size the
 * client announces size and count (8 bytes, untimed), then each round trip is a message
 * of that size written whole and read back whole by both sides (the server reads it all
 * before it answers); RESULT lines end in proto=tcp (else proto=udp).
 * --busy-poll US (echo, ping): a receive polls the NIC's ring for up to US microseconds
 * before it sleeps (SO_BUSY_POLL), so a reply is taken without waiting for the NIC's
 * interrupt, which QEMU's e1000 holds back by up to 128 us (docs/boards/ethernet.md).
 *
 * HOST is a name from /etc/hosts (the init script writes it; a static program cannot
 * use glibc's resolver) or a dotted address. Exit status 0 on success, 1 on an error,
 * including a reply that did not come within a second (a lost frame).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES   16
#define MAX_ITERS   10000
#define MAX_PAYLOAD 65507       /* UDP over IPv4 */
#define MIN_PAYLOAD 4           /* the sequence number (its complement follows from 8 bytes) */
#define HELLO_PAYLOAD 8
#define HELLO_SEQ   0xffffffffu

struct opts {
    const char *mode, *peer;
    int port, iters, warmup, size, count, nsizes, busy_poll, tcp, rate_kBps, ms;
    int sizes[MAX_SIZES];
};

static void die(const char *what)
{
    printf("ERROR %s: %s\n", what, strerror(errno));
    exit(1);
}

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* An address from /etc/hosts by name, or a dotted one. */
static int resolve(const char *host, struct in_addr *out)
{
    char line[512];
    FILE *f;

    if (inet_pton(AF_INET, host, out) == 1) {
        return 0;
    }
    f = fopen("/etc/hosts", "r");
    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *save, *addr = strtok_r(line, " \t\n", &save), *name;
        if (!addr || addr[0] == '#') {
            continue;
        }
        while ((name = strtok_r(NULL, " \t\n", &save))) {
            if (!strcmp(name, host) && inet_pton(AF_INET, addr, out) == 1) {
                fclose(f);
                return 0;
            }
        }
    }
    fclose(f);
    return -1;
}

static void set_timeout(int fd, int ms)
{
    struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
        die("setsockopt");
    }
}

static void set_busy_poll(int fd, int us)
{
    if (us && setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us))) {
        die("setsockopt SO_BUSY_POLL");
    }
}

static void stamp(uint8_t *buf, uint32_t seq)
{
    uint32_t inv = ~seq;

    memcpy(buf, &seq, 4);
    memcpy(buf + 4, &inv, 4);
}

static int echo_server(const struct opts *o)
{
    static uint8_t buf[MAX_PAYLOAD];
    struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(o->port),
                              .sin_addr.s_addr = htonl(INADDR_ANY) };
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    long echoed = 0;

    if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me))) {
        die("bind");
    }
    set_timeout(fd, 60000);     /* a client that never comes: do not hang the run */
    set_busy_poll(fd, o->busy_poll);
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof(from);
        ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            die("recvfrom");
        }
        if (n == 0) {
            break;
        }
        if (sendto(fd, buf, n, 0, (struct sockaddr *)&from, fl) != n) {
            die("sendto");
        }
        echoed++;
    }
    printf("echoed %ld datagrams\n", echoed);
    return 0;
}

static int peer_socket(const struct opts *o, struct sockaddr_in *to, int type)
{
    int fd = socket(AF_INET, type, 0);

    if (fd < 0) {
        die("socket");
    }
    memset(to, 0, sizeof(*to));
    to->sin_family = AF_INET;
    to->sin_port = htons(o->port);
    if (resolve(o->peer, &to->sin_addr)) {
        printf("ERROR cannot resolve %s\n", o->peer);
        exit(1);
    }
    return fd;
}

/* Wait for the reply carrying seq (older replies, e.g. to repeated hellos, are skipped). */
static int await(int fd, uint8_t *buf, uint32_t seq, int size)
{
    for (;;) {
        ssize_t n = recv(fd, buf, MAX_PAYLOAD, 0);
        uint32_t got, inv;
        if (n < 0) {
            return -1;
        }
        if (n < MIN_PAYLOAD) {
            continue;
        }
        memcpy(&got, buf, 4);
        memcpy(&inv, buf + 4, 4);
        if (got == seq && (n < 8 || inv == ~seq) && (size < 0 || n == size)) {
            return 0;
        }
    }
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* The round trips of one size, sorted in place, as RESULT lines. */
static void report(const struct opts *o, int size, int64_t *rtt)
{
    const char *proto = o->tcp ? "tcp" : "udp";

    qsort(rtt, o->iters, sizeof(rtt[0]), cmp64);
    int64_t med = rtt[o->iters / 2];
    printf("RESULT rtt_ns size=%d min=%lld median=%lld max=%lld proto=%s\n", size,
           (long long)rtt[0], (long long)med, (long long)rtt[o->iters - 1], proto);
    printf("RESULT one_way_us size=%d value=%.3f proto=%s\n", size, med / 2000.0, proto);
}

static int ping_client(const struct opts *o)
{
    static uint8_t buf[MAX_PAYLOAD], rbuf[MAX_PAYLOAD];
    static int64_t rtt[MAX_ITERS];
    struct sockaddr_in to;
    int fd = peer_socket(o, &to, SOCK_DGRAM);
    uint32_t seq = 0;
    int i;

    /* the echo server may not be up yet: hello until it answers (100 ms apart) */
    set_busy_poll(fd, o->busy_poll);
    set_timeout(fd, 100);
    stamp(buf, HELLO_SEQ);
    for (i = 0; i < 200; i++) {
        if (sendto(fd, buf, HELLO_PAYLOAD, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
            die("sendto");
        }
        if (await(fd, rbuf, HELLO_SEQ, -1) == 0) {
            break;
        }
    }
    if (i == 200) {
        printf("ERROR no echo server at %s:%d\n", o->peer, o->port);
        return 1;
    }
    set_timeout(fd, 1000);
    for (int s = 0; s < o->nsizes; s++) {
        int size = o->sizes[s];
        memset(buf, 0x5a, size);
        for (i = -o->warmup; i < o->iters; i++) {
            stamp(buf, ++seq);
            int64_t t0 = now_ns();
            if (sendto(fd, buf, size, 0, (struct sockaddr *)&to, sizeof(to)) != size) {
                die("sendto");
            }
            if (await(fd, rbuf, seq, size)) {
                printf("ERROR no reply to datagram %u of %d bytes within 1 s\n", seq, size);
                return 1;
            }
            int64_t t1 = now_ns();
            if (i >= 0) {
                rtt[i] = t1 - t0;
            }
        }
        report(o, size, rtt);
    }
    sendto(fd, buf, 0, 0, (struct sockaddr *)&to, sizeof(to));     /* ends the server */
    return 0;
}

/* ---- TCP (--tcp) ------------------------------------------------------------------- */

/* All n bytes, or -1 (an error, a timeout, or the peer closed). */
static int io_full(int fd, uint8_t *buf, size_t n, int writing)
{
    while (n) {
        ssize_t k = writing ? write(fd, buf, n) : read(fd, buf, n);
        if (k <= 0) {
            return -1;
        }
        buf += k;
        n -= k;
    }
    return 0;
}

static void set_nodelay(int fd)
{
    int one = 1;

    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
        die("setsockopt TCP_NODELAY");
    }
}

static int tcp_echo_server(const struct opts *o)
{
    static uint8_t buf[MAX_PAYLOAD];
    struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(o->port),
                              .sin_addr.s_addr = htonl(INADDR_ANY) };
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0), fd;
    long echoed = 0;
    uint32_t hdr[2];

    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(lfd, (struct sockaddr *)&me, sizeof(me)) || listen(lfd, 1)) {
        die("bind");
    }
    set_timeout(lfd, 60000);    /* a client that never comes: do not hang the run */
    if ((fd = accept(lfd, NULL, NULL)) < 0) {
        die("accept");
    }
    set_nodelay(fd);
    set_timeout(fd, 60000);
    set_busy_poll(fd, o->busy_poll);
    while (io_full(fd, (uint8_t *)hdr, sizeof(hdr), 0) == 0 && hdr[0] && hdr[0] <= MAX_PAYLOAD) {
        for (uint32_t i = 0; i < hdr[1]; i++) {
            if (io_full(fd, buf, hdr[0], 0) || io_full(fd, buf, hdr[0], 1)) {
                die("echo");
            }
            echoed++;
        }
    }
    printf("echoed %ld messages\n", echoed);
    return 0;
}

static int tcp_ping_client(const struct opts *o)
{
    static uint8_t buf[MAX_PAYLOAD];
    static int64_t rtt[MAX_ITERS];
    struct sockaddr_in to;
    int fd = -1, i;

    /* the echo server may not be up yet: try to connect until it answers (100 ms apart) */
    for (i = 0; i < 200; i++) {
        fd = peer_socket(o, &to, SOCK_STREAM);
        if (connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0) {
            break;
        }
        close(fd);
        usleep(100000);
    }
    if (i == 200) {
        printf("ERROR no echo server at %s:%d\n", o->peer, o->port);
        return 1;
    }
    set_nodelay(fd);
    set_timeout(fd, 1000);
    set_busy_poll(fd, o->busy_poll);
    for (int s = 0; s < o->nsizes; s++) {
        int size = o->sizes[s];
        uint32_t hdr[2] = { size, o->warmup + o->iters };
        memset(buf, 0x5a, size);
        if (io_full(fd, (uint8_t *)hdr, sizeof(hdr), 1)) {
            die("write");
        }
        for (i = -o->warmup; i < o->iters; i++) {
            int64_t t0 = now_ns();
            if (io_full(fd, buf, size, 1) || io_full(fd, buf, size, 0)) {
                printf("ERROR no reply to a message of %d bytes within 1 s\n", size);
                return 1;
            }
            int64_t t1 = now_ns();
            if (i >= 0) {
                rtt[i] = t1 - t0;
            }
        }
        report(o, size, rtt);
    }
    close(fd);                  /* ends the server */
    return 0;
}

static int flood(const struct opts *o)
{
    static uint8_t buf[MAX_PAYLOAD];
    struct sockaddr_in to;
    int fd = peer_socket(o, &to, SOCK_DGRAM);
    long sent = 0, refused = 0;

    memset(buf, 0xa5, o->size);
    for (int i = 0; i < o->count; i++) {
        stamp(buf, i);
        if (sendto(fd, buf, o->size, 0, (struct sockaddr *)&to, sizeof(to)) == o->size) {
            sent++;
        } else if (errno == ENOBUFS || errno == EAGAIN) {
            refused++;          /* the stack's queue is full: that is what a flood does */
        } else {
            die("sendto");
        }
    }
    printf("RESULT flood size=%d sent=%ld refused=%ld\n", o->size, sent, refused);
    return 0;
}

/* The stream's sender: message k leaves at start + k * size / rate, for o->ms. */
static int stream(const struct opts *o)
{
    static uint8_t buf[MAX_PAYLOAD];
    struct sockaddr_in to;
    int fd = peer_socket(o, &to, o->tcp ? SOCK_STREAM : SOCK_DGRAM);
    int64_t start, end, gap = (int64_t)o->size * 1000000 / o->rate_kBps;   /* ns */
    long long bytes = 0;

    if (connect(fd, (struct sockaddr *)&to, sizeof(to))) {
        die("connect");
    }
    memset(buf, 0xa5, o->size);
    start = now_ns();
    end = start + (int64_t)o->ms * 1000000;
    for (int64_t at = start; at < end; at += gap) {
        struct timespec ts = { .tv_sec = at / 1000000000, .tv_nsec = at % 1000000000 };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        if (o->tcp ? io_full(fd, buf, o->size, 1) : -(send(fd, buf, o->size, 0) != o->size)) {
            die("send");
        }
        bytes += o->size;
    }
    if (!o->tcp) {
        send(fd, buf, 0, 0);    /* the end; a lost one ends the sink by its timeout */
    }
    close(fd);
    printf("RESULT stream_tx proto=%s size=%d bytes=%lld\n", o->tcp ? "tcp" : "udp",
           o->size, bytes);
    return 0;
}

/* The stream's receiver: until the end (or 60 s without a message). */
static int sink(const struct opts *o)
{
    static uint8_t buf[MAX_PAYLOAD];
    struct sockaddr_in me = { .sin_family = AF_INET, .sin_port = htons(o->port),
                              .sin_addr.s_addr = htonl(INADDR_ANY) };
    int one = 1, fd = socket(AF_INET, o->tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    long long bytes = 0;
    ssize_t n;

    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
        bind(fd, (struct sockaddr *)&me, sizeof(me)) || (o->tcp && listen(fd, 1))) {
        die("bind");
    }
    set_timeout(fd, 60000);     /* a sender that never comes: do not hang the run */
    if (o->tcp) {
        int lfd = fd;
        if ((fd = accept(lfd, NULL, NULL)) < 0) {
            die("accept");
        }
        close(lfd);
        set_timeout(fd, 60000);
    }
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
        bytes += n;
    }
    if (n < 0) {
        die("recv");
    }
    close(fd);
    printf("RESULT stream_rx proto=%s bytes=%lld\n", o->tcp ? "tcp" : "udp", bytes);
    return 0;
}

static int parse_sizes(struct opts *o, char *list)
{
    char *save, *tok;

    o->nsizes = 0;
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v = atoi(tok);
        if (o->nsizes == MAX_SIZES || v < MIN_PAYLOAD || v > MAX_PAYLOAD) {
            return -1;
        }
        o->sizes[o->nsizes++] = v;
    }
    return o->nsizes ? 0 : -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: udp_pingpong echo [--port P]\n"
            "       udp_pingpong ping --peer HOST [--port P] [--sizes A,B,..] [--iters N] "
            "[--warmup W]\n"
            "       udp_pingpong flood --peer HOST [--port P] [--size S] [--count N]\n"
            "       udp_pingpong stream --peer HOST [--port P] [--size S] --rate KBPS --ms T\n"
            "       udp_pingpong sink [--port P]\n"
            "echo, ping, stream and sink take --tcp; echo and ping take --busy-poll US; sizes are %d to %d bytes; iters 1 to %d\n", MIN_PAYLOAD, MAX_PAYLOAD, MAX_ITERS);
    exit(2);
}

int main(int argc, char **argv)
{
    static char default_sizes[] = "64,1024,1472";
    struct opts o = { .port = 7777, .iters = 20, .warmup = 2, .size = 1024, .count = 1000 };
    char *sizes = default_sizes;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        usage();
    }
    o.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--tcp")) {
            o.tcp = 1;
            continue;
        }
        if (!v) {
            usage();
        }
        i++;
        if (!strcmp(a, "--peer")) {
            o.peer = v;
        } else if (!strcmp(a, "--port")) {
            o.port = atoi(v);
        } else if (!strcmp(a, "--sizes")) {
            sizes = (char *)v;
        } else if (!strcmp(a, "--iters")) {
            o.iters = atoi(v);
        } else if (!strcmp(a, "--warmup")) {
            o.warmup = atoi(v);
        } else if (!strcmp(a, "--size")) {
            o.size = atoi(v);
        } else if (!strcmp(a, "--count")) {
            o.count = atoi(v);
        } else if (!strcmp(a, "--rate")) {
            o.rate_kBps = atoi(v);
        } else if (!strcmp(a, "--ms")) {
            o.ms = atoi(v);
        } else if (!strcmp(a, "--busy-poll")) {
            o.busy_poll = atoi(v);
        } else {
            usage();
        }
    }
    if (parse_sizes(&o, sizes) || o.iters < 1 || o.iters > MAX_ITERS || o.warmup < 0 ||
        o.port < 1 || o.port > 65535 || o.size < MIN_PAYLOAD || o.size > MAX_PAYLOAD ||
        o.count < 0 || o.busy_poll < 0 || o.rate_kBps < 0 || o.ms < 0) {
        usage();
    }
    if (!strcmp(o.mode, "echo")) {
        return o.tcp ? tcp_echo_server(&o) : echo_server(&o);
    }
    if (!strcmp(o.mode, "sink")) {
        return sink(&o);
    }
    if (!o.peer) {
        usage();
    }
    if (!strcmp(o.mode, "ping")) {
        return o.tcp ? tcp_ping_client(&o) : ping_client(&o);
    }
    if (!strcmp(o.mode, "flood")) {
        return flood(&o);
    }
    if (!strcmp(o.mode, "stream")) {
        /* a message at least every ns: a faster rate would never advance the schedule */
        if (!o.rate_kBps || !o.ms || (int64_t)o.size * 1000000 / o.rate_kBps < 1) {
            usage();
        }
        return stream(&o);
    }
    usage();
}
