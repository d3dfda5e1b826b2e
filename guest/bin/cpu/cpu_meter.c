/*
 * cpu_meter: the share of this node's CPU that something else uses over a window of
 * virtual time, measured the classic way: an idle-priority spinner counts the time it
 * gets. Under QEMU's icount the guest's TSC counts virtual ns (docs/machines.md, "Guest
 * CPU speed"), so the count is exact to the instruction.
 *
 *   cpu_meter --at EPOCH_MS --ms WINDOW [--tag NAME]
 *       sleeps until EPOCH_MS (CLOCK_REALTIME, ms since 1970: the nodes' clocks are the
 *       model's and agree), then spins at SCHED_IDLE for WINDOW ms, reading the TSC in
 *       a loop of a few instructions: consecutive reads less than GAP_NS apart are time
 *       the spinner had; any longer gap is time something else had (the kernel's
 *       interrupts and softirqs, any runnable process: every one of them preempts an
 *       idle-priority task at once). Prints
 *         RESULT cpu_load tag=NAME busy_pct=<busy share, %, 2 decimals> window_ms=WINDOW
 *   cpu_meter --at EPOCH_MS --ms 0: only sleeps until EPOCH_MS (to start a step there).
 * A node already past EPOCH_MS prints "ERROR late ..." and exits 1 (the window would
 * not be the one asked for). Exit status 0, 1 (late, a failed call), 2 (bad arguments).
 *
 * Busy includes the timer tick's own work, which is there without any communication:
 * a window with nothing else running measures that baseline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"

/* a loop iteration takes a few ns; a gap this long means the spinner was not running */
#define GAP_NS  1000

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static int sleep_until_ms(long long at_ms)
{
    struct timespec now, at = { .tv_sec = at_ms / 1000, .tv_nsec = at_ms % 1000 * 1000000 };

    clock_gettime(CLOCK_REALTIME, &now);
    if (now.tv_sec > at.tv_sec || (now.tv_sec == at.tv_sec && now.tv_nsec > at.tv_nsec)) {
        printf("ERROR late for the window at %lld ms: it is %lld ms\n", at_ms,
               (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
        return -1;
    }
    int r;
    while ((r = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL)) == EINTR) {
    }
    if (r) {
        printf("ERROR clock_nanosleep: %s\n", strerror(r));
        return -1;
    }
    return 0;
}

/*
 * Spin for at least window_ns: the TSC time the spinner had, and in *elapsed the window's
 * true length (a spinner kept off the CPU at the end sees it end late).
 */
static uint64_t spin(uint64_t window_ns, uint64_t *elapsed)
{
    uint64_t start = rdtsc(), prev = start, had = 0;

    for (;;) {
        uint64_t t = rdtsc();
        if (t - prev < GAP_NS) {
            had += t - prev;
        }
        prev = t;
        if (t - start >= window_ns) {
            *elapsed = t - start;
            return had;
        }
    }
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--at", "--ms", "--tag", NULL };

    if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'h') {
        puts("cpu_meter --at EPOCH_MS --ms WINDOW [--tag NAME]: see the head of "
             "guest/bin/cpu/cpu_meter.c");
        return 0;
    }
    cli_parse("cpu_meter", argc, argv, 1, known);
    long long at = cli_num("--at", NULL, 0, 1L << 50, "ms since 1970");
    long ms = cli_num("--ms", NULL, 0, 100000, "the window in ms");
    const char *tag = cli_str("--tag", "load");
    struct sched_param idle = { .sched_priority = 0 };

    if (ms && sched_setscheduler(0, SCHED_IDLE, &idle)) {
        printf("ERROR sched_setscheduler(SCHED_IDLE): %s\n", strerror(errno));
        return 1;
    }
    if (sleep_until_ms(at)) {
        return 1;
    }
    if (!ms) {
        return 0;
    }
    uint64_t elapsed, had = spin((uint64_t)ms * 1000000, &elapsed);
    double busy = 100.0 * (double)(elapsed - had) / (double)elapsed;
    printf("RESULT cpu_load tag=%s busy_pct=%.2f window_ms=%ld\n", tag, busy, ms);
    return 0;
}
