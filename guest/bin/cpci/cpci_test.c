/*
 * cpci_test: /dev/cpci0 from a process, every call and error path, for
 * tests/boards/cpci/test_cpci_driver.py. Prints "PASS name" or "FAIL name: why"
 * (lib/cli), exit status 1 if any failed.
 *
 *   cpci_test local        bad arguments to every ioctl and mmap (wrong node, own node,
 *                          offsets, sizes, PROT_EXEC, MAP_PRIVATE), a wait that times
 *                          out and one a signal ends, a store through the window
 *                          counted, a waiter killed (nothing of it left)
 *   cpci_test load-time [--reps N]
 *                          a store through the window onto the next node read back
 *                          with a load, then the round trip of one 32-bit load:
 *                          RESULT cpci_load us=US (the mean)
 *   cpci_test hold         map a peer's window and the local area, then wait for
 *                          /tmp/unbound and touch them (SIGBUS) and call (ENODEV)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cpci_map.h"
#include "retrolink/regs/cpci-regs.h"

#define STATE       "/sys/class/misc/cpci0/state"
#define TX_WRITES   "/sys/class/misc/cpci0/tx_writes"
/* the word of the user area these checks store into (cpci_pingpong's messages and
 * sequence word are elsewhere) */
#define TEST_WORD   (CPCI_USER_SIZE / 4 - 2)   /* stored by the one node before it */
#define LOCAL_WORD  (CPCI_USER_SIZE / 4 - 3)   /* stored by this node only */

static void expect_errno(const char *name, long ret, int err)
{
    cli_result(name, ret < 0 && errno == err, "returned %ld (%s), expected %s", ret,
               ret < 0 ? strerror(errno) : "success", strerror(err));
}

/* a sysfs file's first line ("" if it cannot be read) */
static void read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");

    buf[0] = 0;
    if (f) {
        if (!fgets(buf, len, f))
            buf[0] = 0;
        fclose(f);
    }
}

/* the driver's count of files and waiters, the part of STATE a process leaves */
static void files_waiters(char *buf, size_t len)
{
    char *irqs;

    read_line(STATE, buf, len);
    irqs = strstr(buf, " irqs");
    if (irqs)
        *irqs = 0;
}

static void sleep_ms(unsigned ms)
{
    nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

/* some other node: the next one */
static unsigned peer_of(const struct cpci_map *m)
{
    return (m->info.node + 1) % m->info.nodes;
}

static long try_mmap(int fd, size_t len, int prot, int flags, uint64_t off)
{
    void *p = mmap(NULL, len, prot, flags, fd, (off_t)off);

    if (p == MAP_FAILED)
        return -1;
    munmap(p, len);
    return 0;
}

/* ---- one node ------------------------------------------------------------------------- */

static void check_ioctls(struct cpci_map *m)
{
    unsigned self = m->info.node, nodes = m->info.nodes;
    struct cpci_wait w;

    cli_result("info", nodes >= 2 && nodes <= 8 && self < nodes &&
               m->info.user_size == CPCI_USER_SIZE, "node %u of %u, user_size %u", self,
               nodes, m->info.user_size);
    expect_errno("info_bad_pointer_efault", ioctl(m->fd, CPCI_IOC_INFO, NULL), EFAULT);
    expect_errno("unknown_ioctl_enotty", ioctl(m->fd, _IO(CPCI_IOC_MAGIC, 99), NULL), ENOTTY);
    expect_errno("ring_self_ehostunreach", cpci_map_ring(m, self, CPCI_USER_DB_FIRST),
                 EHOSTUNREACH);
    expect_errno("ring_no_such_node_ehostunreach", cpci_map_ring(m, nodes, CPCI_USER_DB_FIRST),
                 EHOSTUNREACH);
    expect_errno("ring_huge_node_ehostunreach", cpci_map_ring(m, 0xffffffffu,
                 CPCI_USER_DB_FIRST), EHOSTUNREACH);
    expect_errno("ring_netdev_doorbell_einval", cpci_map_ring(m, peer_of(m), 0), EINVAL);
    expect_errno("ring_netdev_doorbell1_einval", cpci_map_ring(m, peer_of(m), 1), EINVAL);
    expect_errno("ring_no_such_doorbell_einval", cpci_map_ring(m, peer_of(m), CPCI_DB_PER_NODE),
                 EINVAL);
    expect_errno("ring_bad_pointer_efault", ioctl(m->fd, CPCI_IOC_RING, (void *)8), EFAULT);
    /* what earlier programs left rung here, taken first */
    do
        w = (struct cpci_wait){ .timeout_ms = 1 };
    while (!ioctl(m->fd, CPCI_IOC_WAIT, &w));
    w = (struct cpci_wait){ .timeout_ms = 50 };
    expect_errno("wait_times_out", ioctl(m->fd, CPCI_IOC_WAIT, &w), ETIMEDOUT);
    w = (struct cpci_wait){ .timeout_ms = 50, .rsvd = 1 };
    expect_errno("wait_rsvd_einval", ioctl(m->fd, CPCI_IOC_WAIT, &w), EINVAL);
    expect_errno("wait_bad_pointer_efault", ioctl(m->fd, CPCI_IOC_WAIT, NULL), EFAULT);
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* a wait without a limit, ended by a signal whose handler returns */
static void check_wait_signal(struct cpci_map *m)
{
    struct sigaction sa = { .sa_handler = on_alarm }, old;     /* no SA_RESTART */
    struct itimerval t = { .it_value = { 0, 200000 } }, off = { { 0, 0 }, { 0, 0 } };
    struct cpci_wait w = { .timeout_ms = 0 };
    long ret;

    sigaction(SIGALRM, &sa, &old);
    setitimer(ITIMER_REAL, &t, NULL);
    ret = ioctl(m->fd, CPCI_IOC_WAIT, &w);
    setitimer(ITIMER_REAL, &off, NULL);
    sigaction(SIGALRM, &old, NULL);
    expect_errno("wait_signal_eintr", ret, EINTR);
}

static void check_mmaps(struct cpci_map *m)
{
    unsigned self = m->info.node, nodes = m->info.nodes, peer = peer_of(m);
    int rw = PROT_READ | PROT_WRITE, fd = m->fd;

    expect_errno("mmap_own_window_ehostunreach",
                 try_mmap(fd, 4096, rw, MAP_SHARED, CPCI_MMAP_WINDOW(self)), EHOSTUNREACH);
    if (nodes < 8)
        expect_errno("mmap_no_such_node_ehostunreach",
                     try_mmap(fd, 4096, rw, MAP_SHARED, CPCI_MMAP_WINDOW(nodes)), EHOSTUNREACH);
    expect_errno("mmap_inside_window_einval",
                 try_mmap(fd, 4096, rw, MAP_SHARED, CPCI_MMAP_WINDOW(peer) + 4096), EINVAL);
    expect_errno("mmap_past_the_windows_einval",
                 try_mmap(fd, 4096, rw, MAP_SHARED, CPCI_MMAP_WINDOW(8)), EINVAL);
    expect_errno("mmap_past_local_einval",
                 try_mmap(fd, 4096, rw, MAP_SHARED, CPCI_MMAP_LOCAL + 4096), EINVAL);
    expect_errno("mmap_too_large_einval",
                 try_mmap(fd, CPCI_USER_SIZE + 4096, rw, MAP_SHARED, CPCI_MMAP_LOCAL), EINVAL);
    expect_errno("mmap_window_too_large_einval",
                 try_mmap(fd, CPCI_USER_SIZE + 4096, rw, MAP_SHARED, CPCI_MMAP_WINDOW(peer)),
                 EINVAL);
    expect_errno("mmap_exec_eperm",
                 try_mmap(fd, 4096, rw | PROT_EXEC, MAP_SHARED, CPCI_MMAP_WINDOW(peer)), EPERM);
    expect_errno("mmap_local_exec_eperm",
                 try_mmap(fd, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, CPCI_MMAP_LOCAL), EPERM);
    expect_errno("mmap_private_einval",
                 try_mmap(fd, 4096, rw, MAP_PRIVATE, CPCI_MMAP_LOCAL), EINVAL);
    cli_result("mmap_partial_window", !try_mmap(fd, 8192, rw, MAP_SHARED, CPCI_MMAP_WINDOW(peer)),
               "%s", strerror(errno));
}

/* a store through the window is one transaction, counted */
static void check_window(struct cpci_map *m)
{
    char before[32], after[32];
    uint32_t v = 0xc0de0000u | m->info.node;

    cli_result("mprotect_exec_refused",
               mprotect((void *)m->local, 4096, PROT_READ | PROT_EXEC) < 0 && errno == EACCES,
               "%s", strerror(errno));
    m->local[LOCAL_WORD] = 0x12345678;
    cli_result("local_area_rw", m->local[LOCAL_WORD] == 0x12345678, "read %#x",
               m->local[LOCAL_WORD]);
    read_line(TX_WRITES, before, sizeof(before));
    m->win[TEST_WORD] = v;
    read_line(TX_WRITES, after, sizeof(after));
    /* at least ours: the netdev may have sent a frame meanwhile */
    cli_result("window_store_counted", strtoul(after, NULL, 10) > strtoul(before, NULL, 10),
               "tx_writes %s -> %s", before, after);
}

/* a child sleeping in a wait without a limit is killed: nothing of it is left */
static void check_killed_waiter(void)
{
    char before[128], during[128], after[128];
    int status = 0, i;
    pid_t pid;

    files_waiters(before, sizeof(before));
    pid = fork();
    if (pid == 0) {
        struct cpci_map c;
        struct cpci_wait w = { .timeout_ms = 0 };

        if (!cpci_map_open(&c, -1))
            ioctl(c.fd, CPCI_IOC_WAIT, &w);
        _exit(0);
    }
    for (i = 0; i < 100; i++) {
        files_waiters(during, sizeof(during));
        if (strstr(during, "waiters 1"))
            break;
        sleep_ms(10);
    }
    cli_result("kill_waiter_sleeping", strstr(during, "waiters 1") != NULL, "%s", during);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    cli_result("kill_waiter_killed", WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
               "status %#x", status);
    files_waiters(after, sizeof(after));
    cli_result("kill_waiter_nothing_left", before[0] && !strcmp(before, after),
               "before: %s after: %s", before, after);
}

static int role_local(void)
{
    struct cpci_map m;
    char before[128], after[128];
    const char *err;

    files_waiters(before, sizeof(before));
    err = cpci_map_open(&m, -1);
    if (err) {
        cli_result("open", 0, "%s: %s", err, strerror(errno));
        return 1;
    }
    cpci_map_close(&m);
    err = cpci_map_open(&m, peer_of(&m));
    cli_result("open_and_map", !err, "%s: %s", err ? err : "", strerror(errno));
    if (err)
        return 1;
    check_ioctls(&m);
    check_wait_signal(&m);
    check_mmaps(&m);
    check_window(&m);
    check_killed_waiter();
    cpci_map_close(&m);
    files_waiters(after, sizeof(after));
    cli_result("nothing_left_after_close", before[0] && !strcmp(before, after),
               "before: %s after: %s", before, after);
    return cli_failures() != 0;
}

/* ---- a window load's round trip ------------------------------------------------------ */

static int role_load_time(long reps)
{
    struct cpci_map m;
    const char *err = cpci_map_open(&m, -1);
    volatile uint32_t sink = 0;
    int64_t t0;
    long i;

    if (!err) {
        cpci_map_close(&m);
        err = cpci_map_open(&m, peer_of(&m));
    }
    if (err) {
        printf("ERROR %s: %s\n", err, strerror(errno));
        return 1;
    }
    /* a store through the window reaches the peer's memory: a load through it reads it */
    m.win[TEST_WORD] = 0xc0de0000u | m.info.node;
    sink = m.win[TEST_WORD];
    cli_result("window_load_reads_the_store", sink == (0xc0de0000u | m.info.node),
               "read %#x, stored %#x", sink, 0xc0de0000u | m.info.node);
    t0 = cpci_now_ns();
    for (i = 0; i < reps; i++)
        sink += m.win[TEST_WORD];
    printf("RESULT cpci_load us=%.2f\n", (double)(cpci_now_ns() - t0) / reps / 1000);
    cpci_map_close(&m);
    return cli_failures() != 0;
}

/* ---- unbind with a file open ---------------------------------------------------------- */

static sigjmp_buf jump;

static void on_sigbus(int sig)
{
    (void)sig;
    siglongjmp(jump, 1);
}

/* a touch of p: 1 if it raised SIGBUS */
static int touch_sigbus(volatile uint32_t *p)
{
    volatile int bus = 0;

    signal(SIGBUS, on_sigbus);
    if (!sigsetjmp(jump, 1))
        (void)*p;
    else
        bus = 1;
    signal(SIGBUS, SIG_DFL);
    return bus;
}

static int role_hold(void)
{
    struct cpci_map m;
    struct stat st;
    const char *err = cpci_map_open(&m, -1);
    int i;

    if (!err) {
        cpci_map_close(&m);
        err = cpci_map_open(&m, peer_of(&m));
    }
    if (err) {
        cli_result("hold_open", 0, "%s: %s", err, strerror(errno));
        return 1;
    }
    m.local[TEST_WORD] = 7;
    m.win[TEST_WORD] = 7;
    cli_result("hold_mapped", m.local[TEST_WORD] == 7, "read %u", m.local[TEST_WORD]);
    printf("READY hold\n");
    fflush(stdout);
    for (i = 0; i < 600 && stat("/tmp/unbound", &st); i++)
        sleep_ms(100);
    cli_result("hold_window_sigbus_after_unbind", touch_sigbus(&m.win[TEST_WORD]),
               "the window could still be read");
    cli_result("hold_local_sigbus_after_unbind", touch_sigbus(&m.local[TEST_WORD]),
               "the local area could still be read");
    expect_errno("hold_ioctl_enodev", ioctl(m.fd, CPCI_IOC_INFO, &m.info), ENODEV);
    expect_errno("hold_mmap_enodev", try_mmap(m.fd, 4096, PROT_READ, MAP_SHARED, CPCI_MMAP_LOCAL),
                 ENODEV);
    cpci_map_close(&m);     /* the close after unbind frees what is left */
    cli_result("hold_closed", 1, "closed");
    return cli_failures() != 0;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--reps", NULL };

    if (argc < 2)
        cli_usage_error("a role: local, load-time, hold");
    cli_parse("cpci_test", argc, argv, 2, known);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(argv[1], "local"))
        return role_local();
    if (!strcmp(argv[1], "load-time"))
        return role_load_time(cli_num("--reps", "100", 1, 1000000, "loads"));
    if (!strcmp(argv[1], "hold"))
        return role_hold();
    cli_usage_error("unknown role %s", argv[1]);
}
