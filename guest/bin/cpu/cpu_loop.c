/*
 * cpu_loop: the time of a CPU-bound loop, read from the TSC. Under QEMU's icount the
 * guest's TSC counts virtual ns, and virtual time is a function of the instructions
 * run (docs/machines.md, "Guest CPU speed"), so this shows the guest's speed exactly.
 *
 *   cpu_loop [--iters N] [--reps R]
 *       R times: rdtsc, a loop of N iterations of two instructions (dec, jnz), rdtsc;
 *       prints  RESULT loop_ns iters=N reps=R min=.. max=.. total=..
 *       min is a repetition no interrupt landed in: the same instructions in every run
 *       (2N + a few), so min is their time at this node's speed; max and total include
 *       the kernel's timer interrupts, of which a slower CPU takes more per loop.
 * Exit status 0, or 2 for bad arguments.
 */
#include <stdint.h>
#include <stdio.h>

#include "cli/cli.h"

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

/* rdtsc, exactly 2 * iters instructions (iters >= 1), rdtsc: one asm block, so the
 * compiler cannot move or change anything between the two reads */
static uint64_t timed_loop(uint32_t iters)
{
    uint32_t lo0, hi0, lo1, hi1, n = iters;
    __asm__ volatile("rdtsc\n\t"
                     "mov %%eax, %0\n\t"
                     "mov %%edx, %1\n\t"
                     "1: dec %4\n\t"
                     "jnz 1b\n\t"
                     "rdtsc"
                     : "=&r"(lo0), "=&r"(hi0), "=a"(lo1), "=d"(hi1), "+r"(n)
                     :
                     : "cc");
    return ((uint64_t)hi1 << 32 | lo1) - ((uint64_t)hi0 << 32 | lo0);
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--iters", "--reps", NULL };

    if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'h') {
        puts("cpu_loop [--iters N] [--reps R]: see the head of guest/bin/cpu/cpu_loop.c");
        return 0;
    }
    cli_parse("cpu_loop", argc, argv, 1, known);
    uint32_t iters = cli_num("--iters", "10000", 1, 1000000000, "loop iterations");
    long reps = cli_num("--reps", "100", 1, 1000000, "repetitions");
    uint64_t min = UINT64_MAX, max = 0, total = 0;

    timed_loop(iters);          /* the code's page and TLB entries are warm from here on */
    for (long r = 0; r < reps; r++) {
        uint64_t t = timed_loop(iters);
        min = t < min ? t : min;
        max = t > max ? t : max;
        total += t;
    }
    printf("RESULT loop_ns iters=%u reps=%ld min=%llu max=%llu total=%llu\n", iters, reps,
           (unsigned long long)min, (unsigned long long)max, (unsigned long long)total);
    return 0;
}
