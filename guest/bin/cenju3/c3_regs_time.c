/*
 * c3_regs_time: the Cenju-3 interface's register and cache operation costs as a guest
 * sees them (tests/boards/cenju3/test_c3_guest.py). Maps BAR0 through sysfs (no driver
 * needed) and times, with the interface's own NOW register:
 *   reads     N reads of C3_REG_ID
 *   cache     a flush of LEN bytes at physical address ADDR (only its time: the
 *             interface reads and writes nothing for it)
 * and prints "RESULT c3_<what> size=<n> value=<ns>", the least of --repeat timings each:
 * an interrupt inside one (the guest's timer tick) only adds to it. The numbers include
 * the loop's own instructions; two runs that differ only in a parameter differ by
 * exactly its share.
 *
 *   c3_regs_time --reads N --cache-addr ADDR --cache-len LEN [--repeat R]
 */
#include "c3_bar.h"
#include "cli/cli.h"

static volatile uint32_t *regs;

static uint32_t rd(uint32_t off)
{
    return regs[off / 4];
}

static void wr(uint32_t off, uint32_t val)
{
    regs[off / 4] = val;
}

static uint64_t now(void)
{
    uint32_t lo = rd(C3_REG_NOW_LO);            /* latches HI */

    return (uint64_t)rd(C3_REG_NOW_HI) << 32 | lo;
}

static uint64_t time_reads(long reads)
{
    uint64_t t0 = now();
    for (long i = 0; i < reads; i++) {
        (void)rd(C3_REG_ID);
    }
    return now() - t0;
}

/* One flush's time, or UINT64_MAX if the interface refused it */
static uint64_t time_flush(long addr, long len)
{
    uint32_t ops = rd(C3_REG_CACHE_OPS);
    uint64_t t0 = now();
    wr(C3_REG_CACHE_ADDR_LO, (uint32_t)addr);
    wr(C3_REG_CACHE_ADDR_HI, 0);
    wr(C3_REG_CACHE_LEN, (uint32_t)len);
    wr(C3_REG_CACHE_OP, C3_CACHE_FLUSH);
    uint64_t t = now() - t0;
    if (rd(C3_REG_CACHE_OPS) != ops + 1) {
        fprintf(stderr, "c3_regs_time: the cache operation was refused (C3_ERR %u)\n",
                rd(C3_REG_ERROR));
        return UINT64_MAX;
    }
    return t;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--reads", "--cache-addr", "--cache-len", "--repeat",
                                         NULL };

    cli_parse("c3_regs_time", argc, argv, 1, known);
    long reads = cli_num("--reads", "1000", 1, 1000000, "reads of C3_REG_ID");
    long addr = cli_num("--cache-addr", "1048576", 0, 0x7fffffff, "a physical address");
    long len = cli_num("--cache-len", "16384", 1, 16 << 20, "bytes to flush");
    long repeat = cli_num("--repeat", "5", 1, 1000, "timings of each, the least reported");

    regs = c3_map_bar0("c3_regs_time");
    uint64_t best_reads = UINT64_MAX, best_flush = UINT64_MAX;
    for (long r = 0; r < repeat; r++) {
        uint64_t t = time_reads(reads);
        best_reads = t < best_reads ? t : best_reads;
    }
    printf("RESULT c3_reads size=%ld value=%llu\n", reads, (unsigned long long)best_reads);
    for (long r = 0; r < repeat; r++) {
        uint64_t t = time_flush(addr, len);
        if (t == UINT64_MAX) {
            return 1;
        }
        best_flush = t < best_flush ? t : best_flush;
    }
    printf("RESULT c3_cache size=%ld value=%llu\n", len, (unsigned long long)best_flush);
    return 0;
}
