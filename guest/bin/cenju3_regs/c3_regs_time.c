/*
 * c3_regs_time: the Cenju-3 interface's register and cache operation costs as a guest
 * sees them (tests/boards/cenju3/test_c3_guest.py). Maps BAR0 through sysfs (no driver
 * needed) and times, with the interface's own NOW register:
 *   reads     N reads of C3_REG_ID
 *   cache     a flush of LEN bytes at physical address ADDR (only its time: the
 *             interface reads and writes nothing for it)
 * and prints "RESULT c3_<what> size=<n> value=<ns>". The numbers include the loop's own
 * instructions; two runs that differ only in a parameter differ by exactly its share.
 *
 *   c3_regs_time --reads N --cache-addr ADDR --cache-len LEN
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/cli.h"
#include "retrolink/regs/cenju3-regs.h"

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

/* A PCI function's sysfs attribute as a hex number (0 if unreadable). */
static unsigned sysfs_hex(const char *dev, const char *attr)
{
    char path[512];
    unsigned val = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", dev, attr);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%x", &val) != 1) {
            val = 0;
        }
        fclose(f);
    }
    return val;
}

/* The interface's BAR0, mapped: the PCI function with its vendor and device ids. */
static volatile uint32_t *map_bar0(void)
{
    DIR *d = opendir("/sys/bus/pci/devices");
    struct dirent *e;
    char path[512];

    if (!d) {
        perror("/sys/bus/pci/devices");
        exit(1);
    }
    while ((e = readdir(d))) {
        if (sysfs_hex(e->d_name, "vendor") != C3_PCI_VENDOR_ID ||
            sysfs_hex(e->d_name, "device") != C3_PCI_DEVICE_ID) {
            continue;
        }
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/enable", e->d_name);
        int en = open(path, O_WRONLY);
        if (en >= 0) {
            if (write(en, "1", 1) != 1) {
                perror("enable");
            }
            close(en);
        }
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", e->d_name);
        int fd = open(path, O_RDWR | O_SYNC);
        if (fd < 0) {
            perror(path);
            exit(1);
        }
        void *p = mmap(NULL, C3_BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        closedir(d);
        return p;
    }
    fprintf(stderr, "c3_regs_time: no Cenju-3 interface (%04x:%04x)\n", C3_PCI_VENDOR_ID,
            C3_PCI_DEVICE_ID);
    exit(1);
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--reads", "--cache-addr", "--cache-len", NULL };

    cli_parse("c3_regs_time", argc, argv, 1, known);
    long reads = cli_num("--reads", "1000", 1, 1000000, "reads of C3_REG_ID");
    long addr = cli_num("--cache-addr", "1048576", 0, 0x7fffffff, "a physical address");
    long len = cli_num("--cache-len", "16384", 1, 16 << 20, "bytes to flush");

    regs = map_bar0();
    if (rd(C3_REG_ID) != C3_ID_VALUE) {
        fprintf(stderr, "c3_regs_time: C3_REG_ID reads 0x%x\n", rd(C3_REG_ID));
        return 1;
    }
    uint64_t t0 = now();
    for (long i = 0; i < reads; i++) {
        (void)rd(C3_REG_ID);
    }
    uint64_t t1 = now();
    printf("RESULT c3_reads size=%ld value=%llu\n", reads, (unsigned long long)(t1 - t0));

    uint32_t ops = rd(C3_REG_CACHE_OPS);
    t0 = now();
    wr(C3_REG_CACHE_ADDR_LO, (uint32_t)addr);
    wr(C3_REG_CACHE_ADDR_HI, 0);
    wr(C3_REG_CACHE_LEN, (uint32_t)len);
    wr(C3_REG_CACHE_OP, C3_CACHE_FLUSH);
    t1 = now();
    if (rd(C3_REG_CACHE_OPS) != ops + 1) {
        fprintf(stderr, "c3_regs_time: the cache operation was refused (C3_ERR %u)\n",
                rd(C3_REG_ERROR));
        return 1;
    }
    printf("RESULT c3_cache size=%ld value=%llu\n", len, (unsigned long long)(t1 - t0));
    return 0;
}
