/*
 * via_pingpong: the VIA NIC's benchmark over VIPL (docs/boards/via.md).
 *
 *   via_pingpong --server|--client --peer N [--mode poll|block] [--sizes 4,16,...]
 *                [--reps R] [--bandwidth]
 *
 * The server (any --peer: it takes the first request) and the client run with the same
 * sizes and reps. For each size: R ping-pongs (after 2 untimed), the client printing
 *   RESULT via_latency mode=MODE size=SIZE us=US    (one-way: half the mean round trip)
 * and with --bandwidth, R messages streamed with up to 16 sends outstanding, ended by
 * the server's 4-byte answer:
 *   RESULT via_bandwidth mode=MODE size=SIZE MBps=B (SIZE * R bytes over the time)
 * Completion by polling VipSendDone/VipRecvDone (poll) or VipSendWait/VipRecvWait
 * (block: the process sleeps until the NIC's interrupt). Times are clock_gettime in
 * the guest (modelled time): the same run prints the same lines.
 * Exit status 0, 1 on an error (a line "ERROR what: code" says which).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "via_conn.h"

#define MAX_SIZES   32
#define RQ          200         /* receives posted: all into one buffer */
#define WINDOW      16          /* sends outstanding while streaming */
#define WARMUP      2
#define WAIT_MS     10000
#define DISC        "pingpong"

struct bench {
    struct via_conn c;
    int block;
    VIP_DESCRIPTOR *rd, *sd;    /* RQ receive, WINDOW send descriptors */
    char *rbuf, *sbuf;
    unsigned next_send;
    unsigned sends_out;
};

static void fail(const char *what, VIP_RETURN r)
{
    printf("ERROR %s: %s\n", what, VipReturnName(r));
    exit(1);
}

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* the next completed descriptor of a queue: polled or waited for */
static VIP_DESCRIPTOR *complete(struct bench *b, int recv)
{
    VIP_DESCRIPTOR *d;
    VIP_RETURN r;

    if (b->block) {
        r = recv ? VipRecvWait(b->c.vi, WAIT_MS, &d) : VipSendWait(b->c.vi, WAIT_MS, &d);
    } else {
        int64_t give_up = now_ns() + (int64_t)WAIT_MS * 1000000;

        do {
            r = recv ? VipRecvDone(b->c.vi, &d) : VipSendDone(b->c.vi, &d);
        } while (r == VIP_NOT_DONE && now_ns() < give_up);
        if (r == VIP_NOT_DONE)
            r = VIP_TIMEOUT;
    }
    if (r != VIP_SUCCESS)
        fail(recv ? "receive" : "send", r);
    if (d->CS.Status & VIP_STATUS_ERROR_MASK) {
        printf("ERROR %s completed with status %#x\n", recv ? "receive" : "send",
               d->CS.Status);
        exit(1);
    }
    return d;
}

static void post_recv(struct bench *b, VIP_DESCRIPTOR *d)
{
    VIP_RETURN r;

    via_conn_desc(&b->c, d, b->rbuf, b->c.attrs.MaxTransferSize);
    r = VipPostRecv(b->c.vi, d, b->c.mh);
    if (r != VIP_SUCCESS)
        fail("VipPostRecv", r);
}

/* a receive completed: post its descriptor again; returns the message's length */
static unsigned take_recv(struct bench *b)
{
    VIP_DESCRIPTOR *d = complete(b, 1);
    unsigned len = d->CS.Length;

    post_recv(b, d);
    return len;
}

static void reap_send(struct bench *b)
{
    complete(b, 0);
    b->sends_out--;
}

static void send_msg(struct bench *b, unsigned size)
{
    VIP_DESCRIPTOR *d;
    VIP_RETURN r;

    if (b->sends_out == WINDOW)
        reap_send(b);
    d = &b->sd[b->next_send++ % WINDOW];
    via_conn_desc(&b->c, d, b->sbuf, size);
    r = VipPostSend(b->c.vi, d, b->c.mh);
    if (r != VIP_SUCCESS)
        fail("VipPostSend", r);
    b->sends_out++;
}

static void drain_sends(struct bench *b)
{
    while (b->sends_out)
        reap_send(b);
}

static void latency(struct bench *b, int server, unsigned size, long reps, const char *mode)
{
    int64_t t0 = 0;
    long i;

    for (i = 0; i < reps + WARMUP; i++) {
        if (i == WARMUP)
            t0 = now_ns();
        if (server) {
            take_recv(b);
            send_msg(b, size);
        } else {
            send_msg(b, size);
            take_recv(b);
        }
        drain_sends(b);
    }
    if (!server)
        printf("RESULT via_latency mode=%s size=%u us=%.2f\n", mode, size,
               (double)(now_ns() - t0) / reps / 2 / 1000);
}

static void bandwidth(struct bench *b, int server, unsigned size, long reps, const char *mode)
{
    int64_t t0 = now_ns();
    long i;

    if (server) {
        for (i = 0; i < reps; i++)
            take_recv(b);
        send_msg(b, 4);
        drain_sends(b);
        return;
    }
    for (i = 0; i < reps; i++)
        send_msg(b, size);
    take_recv(b);
    drain_sends(b);
    printf("RESULT via_bandwidth mode=%s size=%u MBps=%.2f\n", mode, size,
           (double)size * reps * 1000 / (double)(now_ns() - t0));
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--peer", "--mode", "--sizes", "--reps", NULL };
    long sizes[MAX_SIZES], reps;
    int server, bw = 0, nsizes, i, n = 1;
    struct bench b = { 0 };
    const char *mode, *err;
    VIP_RETURN r;

    if (argc < 2 || (strcmp(argv[1], "--server") && strcmp(argv[1], "--client")))
        cli_usage_error("the first argument is --server or --client");
    server = !strcmp(argv[1], "--server");
    /* --bandwidth is a flag: take it out before the "--name value" pairs */
    for (i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--bandwidth"))
            bw = 1;
        else
            argv[n++] = argv[i];
    }
    argv[n] = NULL;
    cli_parse("via_pingpong", n, argv, 1, known);
    long peer = cli_num("--peer", "-1", -1, 65535, "a node number");
    mode = cli_str("--mode", "poll");
    if (strcmp(mode, "poll") && strcmp(mode, "block"))
        cli_usage_error("--mode is poll or block");
    nsizes = cli_given("--sizes") ? cli_nums("--sizes", 4, VIA_MAX_MSG, sizes, MAX_SIZES) : 0;
    if (!nsizes) {
        for (nsizes = 0; nsizes < 15; nsizes++)
            sizes[nsizes] = 4L << nsizes;       /* 4 .. 65536 */
    }
    reps = cli_num("--reps", "100", 1, RQ - WINDOW, "messages a size (at most 184)");
    if (!server && peer < 0)
        cli_usage_error("the client needs --peer");
    b.block = !strcmp(mode, "block");

    /* descriptors first (64-byte aligned: the region is page-aligned), then buffers */
    size_t descs = (RQ + WINDOW) * sizeof(VIP_DESCRIPTOR);
    err = via_conn_open(&b.c, descs + 2 * (size_t)VIA_MAX_MSG, NULL, NULL);
    if (err)
        fail(err, VIP_ERROR_RESOURCE);
    b.rd = b.c.mem;
    b.sd = b.rd + RQ;
    b.rbuf = (char *)b.c.mem + descs;
    b.sbuf = b.rbuf + VIA_MAX_MSG;
    memset(b.sbuf, 0x5a, VIA_MAX_MSG);
    for (i = 0; i < RQ; i++)
        post_recv(&b, &b.rd[i]);
    r = via_conn_connect(&b.c, server, (int)peer, DISC, 60000);
    if (r != VIP_SUCCESS)
        fail(server ? "VipConnectWait/Accept" : "VipConnectRequest", r);

    for (i = 0; i < nsizes; i++)
        latency(&b, server, sizes[i], reps, mode);
    for (i = 0; bw && i < nsizes; i++)
        bandwidth(&b, server, sizes[i], reps, mode);
    fflush(stdout);
    /* the client disconnects once the server has answered its last message */
    if (!server)
        VipDisconnect(b.c.vi);
    via_conn_close(&b.c);
    return 0;
}
