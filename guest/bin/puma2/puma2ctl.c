/*
 * puma2ctl: the PUMA-II board from a shell, through /dev/puma2 (uapi/puma2.h).
 *
 *   puma2ctl node | nodes           this board's station, the ring's boards
 *   puma2ctl stats                  the board's counters, one "key=value" line
 *   puma2ctl barrier ID             wait until every node has reached barrier ID
 *                                   (0..255: a counter in the DSM's last page)
 *   puma2ctl counter ITERS          every node adds 1 ITERS times to one counter in the
 *                                   DSM under a lock in the DSM; prints the total
 *   puma2ctl read FILE [--bs N] [--label L]
 *                                   read FILE (N-byte read() calls), print the time it
 *                                   took and what the board counted meanwhile
 *   puma2ctl faults --pages N       the mapped DSM's fault times across two nodes
 *   puma2ctl copy --pages N         node 1 has the board bring N pages that node 0
 *                                   wrote (board to board, nothing to the host), timed
 *
 * Measurements are printed as "RESULT <name> key=value ..." lines (the benchmark's).
 *
 * The barrier, the lock and the fault pages live in the DSM's last pages (layout
 * below); every program that uses them maps the same offsets on every node.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "retrolink/regs/puma2-regs.h"
#include "retrolink/uapi/puma2.h"

#define PAGE            4096u
/* DSM pages from the end: the barriers' counters, the lock, the counter */
#define BARRIER_PAGE    1u
#define LOCK_PAGE       2u
#define COUNTER_PAGE    3u
#define FAULT_FIRST     4u      /* the fault pages: FAULT_FIRST .. FAULT_FIRST + N - 1 */
#define MAX_BARRIERS    256
#define WAIT_S          600

static int dev = -1;
static struct puma2_info info;

static void die(const char *what)
{
    fprintf(stderr, "puma2ctl: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void open_board(void)
{
    dev = open("/dev/puma2", O_RDWR);
    if (dev < 0)
        die("/dev/puma2 (is puma2.ko loaded, is there a board?)");
    if (ioctl(dev, PUMA2_IOC_INFO, &info))
        die("PUMA2_IOC_INFO");
}

static uint64_t now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* The DSM page `from_end` pages before its end, mapped read-write. */
static volatile uint32_t *dsm_page(unsigned from_end, unsigned count)
{
    if (from_end > info.dsm_pages)
        cli_usage_error("the DSM has %u pages: too few for this", info.dsm_pages);
    void *p = mmap(NULL, (size_t)count * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, dev,
                   (off_t)(info.dsm_pages - from_end) * PAGE);
    if (p == MAP_FAILED)
        die("mmap /dev/puma2");
    return p;
}

static void stats(struct puma2_stats *st)
{
    if (ioctl(dev, PUMA2_IOC_STATS, st))
        die("PUMA2_IOC_STATS");
}

/* A counter every node adds 1 to, then waits for all: a read copy while it spins. */
static void barrier(unsigned id)
{
    volatile uint32_t *b = dsm_page(BARRIER_PAGE, 1);
    time_t deadline = time(NULL) + WAIT_S;

    __atomic_fetch_add(&b[id], 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&b[id], __ATOMIC_SEQ_CST) < info.nodes) {
        if (time(NULL) > deadline) {
            fprintf(stderr, "puma2ctl: barrier %u: %u of %u nodes after %d s\n", id, b[id],
                    info.nodes, WAIT_S);
            exit(1);
        }
        usleep(1000);
    }
}

/* test and test-and-set: spinning on a read copy moves no page until the holder lets go */
static void lock(volatile uint32_t *l)
{
    for (;;) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED))
            usleep(100);
        if (!__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
            return;
    }
}

static void unlock(volatile uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static void counter(long iters)
{
    volatile uint32_t *l = dsm_page(LOCK_PAGE, 1), *c = dsm_page(COUNTER_PAGE, 1);

    barrier(MAX_BARRIERS - 2);
    for (long i = 0; i < iters; i++) {
        lock(l);
        c[0] = c[0] + 1;        /* a plain load and store: the lock makes it exact */
        unlock(l);
    }
    barrier(MAX_BARRIERS - 1);
    printf("counter=%u expected=%lu\n", c[0], (unsigned long)iters * info.nodes);
}

static void read_file(const char *path, long bs, const char *label)
{
    struct puma2_stats a, b;
    char *buf = malloc(bs);
    uint64_t bytes = 0, t0;
    int fd = open(path, O_RDONLY);
    ssize_t n;

    if (fd < 0 || !buf)
        die(path);
    stats(&a);
    t0 = now_ns();
    while ((n = read(fd, buf, bs)) > 0)
        bytes += n;
    if (n < 0)
        die(path);
    uint64_t t = now_ns() - t0;
    stats(&b);
    printf("RESULT read path=%s read_ns=%llu bytes=%llu bus_ns=%llu net_ns=%llu "
           "pages_in=%u\n", label, (unsigned long long)t, (unsigned long long)bytes,
           (unsigned long long)(b.bus_ns - a.bus_ns), (unsigned long long)(b.net_ns - a.net_ns),
           b.pages_in - a.pages_in);
    close(fd);
    free(buf);
}

/* Touch every page once (a write or a read), timed; returns ns. */
static uint64_t touch(volatile uint32_t *p, long pages, int write)
{
    uint64_t t0 = now_ns();
    uint32_t sum = 0;

    for (long i = 0; i < pages; i++) {
        if (write)
            p[i * (PAGE / 4)] = (uint32_t)i + 1;
        else
            sum += p[i * (PAGE / 4)];
    }
    __asm__ volatile("" : : "r"(sum));
    return now_ns() - t0;
}

/*
 * Node 0 writes the pages (it owns them), node 1 reads them (each a read fault that
 * fetches the page from node 0), node 0 writes them again (each a write fault that
 * invalidates node 1's copy). The last node checks what it read.
 */
static void faults(long pages)
{
    volatile uint32_t *p = dsm_page(FAULT_FIRST + pages - 1, pages);
    struct puma2_stats a, b;

    if (info.nodes < 2)
        cli_usage_error("faults needs two nodes");
    if (info.node == 0)
        touch(p, pages, 1);
    barrier(MAX_BARRIERS - 4);
    if (info.node == 1) {
        stats(&a);
        uint64_t t = touch(p, pages, 0);
        stats(&b);
        long bad = 0;
        for (long i = 0; i < pages; i++)
            bad += p[i * (PAGE / 4)] != (uint32_t)i + 1;
        printf("RESULT faults kind=read pages=%ld ns=%llu pages_in=%u wrong=%ld\n", pages,
               (unsigned long long)t, b.pages_in - a.pages_in, bad);
    }
    barrier(MAX_BARRIERS - 5);
    if (info.node == 0) {
        stats(&a);
        uint64_t t = touch(p, pages, 1);
        stats(&b);
        printf("RESULT faults kind=write pages=%ld ns=%llu msgs_out=%u invalidated=%u\n",
               pages, (unsigned long long)t, b.msgs_out - a.msgs_out,
               b.invalidated - a.invalidated);
    }
    barrier(MAX_BARRIERS - 6);
}

/* Node 0 writes the pages (they are its board's), node 1 has its board fetch them. */
static void copy(long pages)
{
    /* the fault pages' neighbours: this program's only other pages */
    unsigned from_end = FAULT_FIRST + 1024 + pages - 1;
    struct puma2_fetch f = { .first = info.dsm_pages - from_end, .pages = pages,
                             .op = PUMA2_OP_READ };

    if (info.nodes < 2)
        cli_usage_error("copy needs two nodes");
    if (info.node == 0) {
        volatile uint32_t *p = dsm_page(from_end, pages);
        touch(p, pages, 1);
        munmap((void *)p, (size_t)pages * PAGE);        /* let the board give them away */
    }
    barrier(MAX_BARRIERS - 7);
    if (info.node == 1) {
        uint64_t t0 = now_ns();
        if (ioctl(dev, PUMA2_IOC_FETCH, &f))
            die("PUMA2_IOC_FETCH");
        printf("RESULT copy pages=%ld ns=%llu\n", pages, (unsigned long long)(now_ns() - t0));
    }
    barrier(MAX_BARRIERS - 8);
}

int main(int argc, char **argv)
{
    static const char *const read_opts[] = { "--bs", "--label", NULL };
    static const char *const fault_opts[] = { "--pages", NULL };
    const char *cmd = argc > 1 ? argv[1] : "";
    struct puma2_stats st;

    if (!strcmp(cmd, "--help") || argc < 2) {
        printf("usage: puma2ctl node|nodes|stats|barrier ID|counter ITERS|"
               "read FILE [--bs N] [--label L]|faults --pages N|copy --pages N\n");
        return argc < 2 ? 2 : 0;
    }
    open_board();
    if (!strcmp(cmd, "node")) {
        printf("%u\n", info.node);
    } else if (!strcmp(cmd, "nodes")) {
        printf("%u\n", info.nodes);
    } else if (!strcmp(cmd, "stats")) {
        stats(&st);
        printf("bus_ns=%llu net_ns=%llu pages_in=%u pages_out=%u msgs_in=%u msgs_out=%u "
               "invalidated=%u recalls=%u faults_read=%u faults_write=%u\n",
               (unsigned long long)st.bus_ns, (unsigned long long)st.net_ns, st.pages_in,
               st.pages_out, st.msgs_in, st.msgs_out, st.invalidated, st.recalls,
               st.faults_read, st.faults_write);
    } else if (!strcmp(cmd, "barrier") && argc == 3) {
        char *end;
        long id = strtol(argv[2], &end, 10);
        if (*end || id < 0 || id >= MAX_BARRIERS - 8)
            cli_usage_error("barrier ID must be 0..%d", MAX_BARRIERS - 9);
        barrier(id);
    } else if (!strcmp(cmd, "counter") && argc == 3) {
        char *end;
        long iters = strtol(argv[2], &end, 10);
        if (*end || iters < 1 || iters > 1000000)
            cli_usage_error("counter ITERS must be 1..1000000");
        counter(iters);
    } else if (!strcmp(cmd, "read") && argc >= 3) {
        cli_parse("puma2ctl read", argc, argv, 3, read_opts);
        read_file(argv[2], cli_num("--bs", "65536", 1, 1 << 24, "the read() size in bytes"),
                  cli_str("--label", "file"));
    } else if (!strcmp(cmd, "faults")) {
        cli_parse("puma2ctl faults", argc, argv, 2, fault_opts);
        faults(cli_num("--pages", "64", 1, 1024, "pages to fault"));
    } else if (!strcmp(cmd, "copy")) {
        cli_parse("puma2ctl copy", argc, argv, 2, fault_opts);
        copy(cli_num("--pages", "256", 1, 1024, "pages to copy"));
    } else {
        cli_usage_error("unknown command or missing argument: %s", cmd);
    }
    return 0;
}
