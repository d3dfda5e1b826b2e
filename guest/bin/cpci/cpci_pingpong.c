/*
 * cpci_pingpong: the CompactPCI backplane's raw CPU-copy ping-pong between node 0 and
 * node 1 (docs/boards/cpci-driver.md), over /dev/cpci0's windows.
 *
 *   cpci_pingpong [--doorbell] [--sizes 4,16,...] [--reps R] [--warmup W]
 *
 * Run on both nodes with the same arguments (other nodes take no part). Node 0 copies
 * a message of SIZE bytes into node 1's user area through its window with 32-bit
 * stores (each one a transaction on the 32-bit backplane), then stores a sequence word
 * after it; node 1 polls its own user area (cached local memory) for that word, then
 * copies the message back the same way. The bus keeps a node's transactions in order,
 * so the message is there before the word. With --doorbell the receiver sleeps in
 * CPCI_IOC_WAIT and the sender rings doorbell 2 after the word. For each size, W
 * untimed round trips, then R timed; node 0 checks the echo and prints
 *   RESULT cpci_latency mode=copy|copy_db size=SIZE us=US    (one-way: half the mean round trip)
 * Node 1 starts the run by ringing node 0's doorbell 3 once its own word is cleared.
 * Times are clock_gettime in the guest (modelled time): the same run prints the same
 * lines. Exit status 0, 1 on an error (a line "ERROR what" says which).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cpci_map.h"

#define MAX_SIZES   32
#define MAX_MSG     65536
#define FLAG        (CPCI_USER_SIZE / 4 - 1)    /* the sequence word: the area's last */
#define DB_MSG      CPCI_USER_DB_FIRST          /* a message is there */
#define DB_START    (CPCI_USER_DB_FIRST + 1)    /* node 1 is ready */
#define WAIT_MS     60000

_Static_assert(MAX_MSG / 4 < FLAG, "the sequence word is after every message");

static struct cpci_map m;
static int doorbell, node;

static void fail(const char *what)
{
    printf("ERROR %s: %s\n", what, strerror(errno));
    exit(1);
}

/* SIZE bytes into the peer's user area: one 32-bit store a word, then the word */
static void send_msg(const volatile uint32_t *src, unsigned size, uint32_t seq)
{
    unsigned i;

    for (i = 0; i < size / 4; i++)
        m.win[i] = src[i];
    m.win[FLAG] = seq;
    if (doorbell && cpci_map_ring(&m, !node, DB_MSG))
        fail("CPCI_IOC_RING");
}

/* until the peer's word says seq: polled, or after its doorbell */
static void await_msg(uint32_t seq)
{
    int64_t give_up;
    unsigned n = 0;

    if (doorbell) {
        if (cpci_map_wait(&m, !node, DB_MSG, WAIT_MS))
            fail("CPCI_IOC_WAIT");
        if (m.local[FLAG] != seq) {
            printf("ERROR the doorbell came before the sequence word %u (it is %u)\n", seq,
                   m.local[FLAG]);
            exit(1);
        }
        return;
    }
    give_up = cpci_now_ns() + (int64_t)WAIT_MS * 1000000;
    while (m.local[FLAG] != seq) {
        if (++n % 4096 == 0 && cpci_now_ns() > give_up) {
            printf("ERROR no message %u from node %d within %d s\n", seq, !node,
                   WAIT_MS / 1000);
            exit(1);
        }
    }
}

static void pingpong(const uint32_t *msg, unsigned size, long reps, long warmup,
                     uint32_t *seq)
{
    int64_t t0 = cpci_now_ns();
    long i;

    for (i = 0; i < warmup + reps; i++) {
        if (i == warmup)
            t0 = cpci_now_ns();
        ++*seq;
        if (node == 0) {
            send_msg(msg, size, *seq);
            await_msg(*seq);
        } else {
            await_msg(*seq);
            send_msg(m.local, size, *seq);     /* the message back, as it came */
        }
    }
    if (node != 0)
        return;
    for (i = 0; i < size / 4; i++) {
        if (m.local[i] != msg[i]) {
            printf("ERROR the echo of %u bytes differs at byte %ld\n", size, i * 4);
            exit(1);
        }
    }
    printf("RESULT cpci_latency mode=%s size=%u us=%.1f\n", doorbell ? "copy_db" : "copy",
           size, (double)(cpci_now_ns() - t0) / reps / 2 / 1000);
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--sizes", "--reps", "--warmup", NULL };
    static uint32_t msg[MAX_MSG / 4];
    long sizes[MAX_SIZES], reps, warmup;
    int nsizes, i, n = 1;
    uint32_t seq = 0;
    const char *err;

    /* --doorbell is a flag: take it out before the "--name value" pairs */
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--doorbell"))
            doorbell = 1;
        else
            argv[n++] = argv[i];
    }
    argv[n] = NULL;
    cli_parse("cpci_pingpong", n, argv, 1, known);
    nsizes = cli_given("--sizes") ? cli_nums("--sizes", 4, MAX_MSG, sizes, MAX_SIZES) : 0;
    if (!nsizes) {
        for (nsizes = 0; nsizes < 15; nsizes++)
            sizes[nsizes] = 4L << nsizes;       /* 4 .. 65536 */
    }
    for (i = 0; i < nsizes; i++)
        if (sizes[i] % 4)
            cli_usage_error("--sizes are whole 32-bit words (multiples of 4)");
    reps = cli_num("--reps", "100", 1, 1000000, "round trips a size");
    warmup = cli_num("--warmup", "2", 0, 1000000, "untimed round trips a size");
    setvbuf(stdout, NULL, _IOLBF, 0);

    err = cpci_map_open(&m, -1);
    if (err)
        fail(err);
    node = (int)m.info.node;
    if (node > 1) {
        printf("node %d takes no part (the ping-pong is node 0's and node 1's)\n", node);
        return 0;
    }
    if (m.info.nodes < 2) {
        printf("ERROR node 1 is not on the backplane (%u node)\n", m.info.nodes);
        return 1;
    }
    cpci_map_close(&m);
    err = cpci_map_open(&m, !node);
    if (err)
        fail(err);
    for (i = 0; i < MAX_MSG / 4; i++)
        msg[i] = (uint32_t)i * 2654435761u + 0x5a5a5a5au;

    /* the start: each side's word cleared before the other can store into it */
    m.local[FLAG] = 0;
    if (node == 1) {
        if (cpci_map_ring(&m, 0, DB_START))
            fail("CPCI_IOC_RING");
    } else if (cpci_map_wait(&m, 1, DB_START, WAIT_MS)) {
        fail("waiting for node 1 (CPCI_IOC_WAIT)");
    }
    for (i = 0; i < nsizes; i++)
        pingpong(msg, sizes[i], reps, warmup, &seq);
    cpci_map_close(&m);
    return 0;
}
