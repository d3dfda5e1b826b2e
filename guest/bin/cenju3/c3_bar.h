/*
 * The Cenju-3 interface without a driver, for the test programs beside this file: find
 * the PCI function by its ids, switch on memory decoding and bus mastering through its
 * sysfs config file, map BAR0 through resource0. Any failure ends the program (status 1).
 */
#ifndef C3_BAR_H
#define C3_BAR_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "retrolink/regs/cenju3-regs.h"

static void c3_die(const char *prog, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, errno ? strerror(errno) : "failed");
    exit(1);
}

/* A PCI function's sysfs attribute as a hex number (0 if unreadable). */
static unsigned c3_sysfs_hex(const char *name, const char *attr)
{
    char path[512];
    unsigned val = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", name, attr);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%x", &val) != 1) {
            val = 0;
        }
        fclose(f);
    }
    return val;
}

static volatile uint32_t *c3_map_bar0(const char *prog)
{
    DIR *d = opendir("/sys/bus/pci/devices");
    struct dirent *e;
    char dev[256] = "", path[512];
    uint16_t cmd;

    if (!d) {
        c3_die(prog, "/sys/bus/pci/devices");
    }
    while ((e = readdir(d)) && !dev[0]) {
        if (c3_sysfs_hex(e->d_name, "vendor") == C3_PCI_VENDOR_ID &&
            c3_sysfs_hex(e->d_name, "device") == C3_PCI_DEVICE_ID) {
            snprintf(dev, sizeof(dev), "%s", e->d_name);
        }
    }
    closedir(d);
    if (!dev[0]) {
        errno = ENODEV;
        c3_die(prog, "no Cenju-3 interface");
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", dev);
    int cfg = open(path, O_RDWR);
    if (cfg < 0 || pread(cfg, &cmd, 2, 4) != 2) {
        c3_die(prog, path);
    }
    cmd |= 0x6;                         /* memory space, bus master */
    if (pwrite(cfg, &cmd, 2, 4) != 2) {
        c3_die(prog, "the PCI command register");
    }
    close(cfg);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", dev);
    int fd = open(path, O_RDWR | O_SYNC);
    if (fd < 0) {
        c3_die(prog, path);
    }
    void *p = mmap(NULL, C3_BAR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        c3_die(prog, "mmap BAR0");
    }
    volatile uint32_t *regs = p;
    if (regs[C3_REG_ID / 4] != C3_ID_VALUE) {
        errno = ENODEV;
        c3_die(prog, "C3_REG_ID");
    }
    return regs;
}

#endif
