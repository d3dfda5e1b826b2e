/*
 * boot_barrier: the node's wait at the boot barrier (docs/snapshots.md), then its copy of
 * this run's command out of fw_cfg, in one process (x86 nodes; init runs it).
 *
 *   boot_barrier --length FILE --slot FILE --out FILE [--print FILE]
 *       says it has arrived (the retrolink-barrier device, port 0xf5 through /dev/port),
 *       sleeps to the barrier's time (ports 0xf6-0xf9: the microseconds left) until the
 *       status reads "passed", then copies the first LENGTH bytes of the slot to --out,
 *       LENGTH being the decimal number in the length file (none, or 0: nothing to copy,
 *       --out is not written), and writes the --print file's contents (the run's end
 *       marker) on stdout. A node without the device (its port reads 0xff) is past the
 *       barrier at once.
 *
 * Why one process: a cluster may be snapshotted at the barrier's time, and everything a
 * node does from there runs in lock-step with every other node, each time the cluster
 * starts from the snapshot. At 75 MIPS a fork of busybox costs a node about 7 ms of
 * virtual time; the shell's barrier loop and `head -c` forked twice after that time.
 * Here the process that sleeps to it wakes, reads the status and copies the command. And
 * the shell's `read` takes a byte a system call, each a fw_cfg transfer: 5 ms for the
 * length and the end marker, which this reads in one go each.
 *
 * Exit status 0; 1 (a failed call, said on stderr); 2 (bad arguments).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

/* the retrolink-barrier device's I/O ports (qemu/core/rl-barrier.c) */
#define BARRIER_STATUS_PORT     0xf5
#define BARRIER_LEFT_US_PORT    0xf6    /* 4 bytes, little-endian, latched by the first */
#define BARRIER_ARRIVE          1
#define BARRIER_PASSED          2
#define BARRIER_ABSENT          0xff    /* an unclaimed port */

#define LENGTH_DIGITS_MAX       16

static int fail(const char *what, const char *path)
{
    fprintf(stderr, "boot_barrier: %s %s: %s\n", what, path, strerror(errno));
    return 1;
}

static int port_read(int fd, unsigned port, unsigned char *buf, size_t n)
{
    return pread(fd, buf, n, port) == (ssize_t)n ? 0 : -1;
}

/* arrive, then sleep to the barrier's time: the status read after each sleep */
static int wait_at_barrier(void)
{
    unsigned char status, left[4], arrive = BARRIER_ARRIVE;
    int fd = open("/dev/port", O_RDWR | O_CLOEXEC);

    if (fd < 0) {
        return fail("cannot open", "/dev/port");
    }
    if (port_read(fd, BARRIER_STATUS_PORT, &status, 1)) {
        return fail("cannot read", "/dev/port");
    }
    if (status == BARRIER_ABSENT) {
        close(fd);
        return 0;
    }
    if (pwrite(fd, &arrive, 1, BARRIER_STATUS_PORT) != 1) {
        return fail("cannot write", "/dev/port");
    }
    for (;;) {
        if (port_read(fd, BARRIER_STATUS_PORT, &status, 1)) {
            return fail("cannot read", "/dev/port");
        }
        if (status == BARRIER_PASSED) {
            break;
        }
        if (port_read(fd, BARRIER_LEFT_US_PORT, left, sizeof(left))) {
            return fail("cannot read", "/dev/port");
        }
        unsigned long us = left[0] | left[1] << 8 | left[2] << 16 | (unsigned long)left[3] << 24;
        struct timespec t = { .tv_sec = us / 1000000, .tv_nsec = us % 1000000 * 1000 };
        while (nanosleep(&t, &t) && errno == EINTR) {
        }
    }
    close(fd);
    return 0;
}

/* the decimal length in path; 0 if there is no such file */
static int read_length(const char *path, long *length)
{
    char text[LENGTH_DIGITS_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    *length = 0;
    if (fd < 0) {
        return errno == ENOENT ? 0 : fail("cannot open", path);
    }
    ssize_t n = read(fd, text, LENGTH_DIGITS_MAX);
    close(fd);
    if (n < 0) {
        return fail("cannot read", path);
    }
    text[n] = '\0';
    char *end;
    errno = 0;
    *length = strtol(text, &end, 10);
    if (end == text || (*end && *end != '\n') || *length < 0 || errno) {
        fprintf(stderr, "boot_barrier: %s holds \"%s\", not a length\n", path, text);
        return 1;
    }
    return 0;
}

/* length bytes of in (a path, for messages) to fd to; length -1: all of it */
static int copy(int in, const char *path, long length, int to, const char *to_path)
{
    char buf[16384];

    while (length) {
        size_t want = length > 0 && length < (long)sizeof(buf) ? (size_t)length : sizeof(buf);
        ssize_t n = read(in, buf, want);
        if (n < 0) {
            return fail("cannot read", path);
        }
        if (n == 0) {
            if (length < 0) {
                return 0;
            }
            fprintf(stderr, "boot_barrier: %s ends %ld bytes short of its length\n",
                    path, length);
            return 1;
        }
        if (write(to, buf, n) != n) {
            return fail("cannot write", to_path);
        }
        if (length > 0) {
            length -= n;
        }
    }
    return 0;
}

static int copy_file(const char *path, long length, const char *out)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);

    if (in < 0) {
        return fail("cannot open", path);
    }
    int to = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : STDOUT_FILENO;
    if (to < 0) {
        close(in);
        return fail("cannot create", out);
    }
    int rc = copy(in, path, length, to, out ? out : "stdout");
    close(in);
    if (out && close(to) && rc == 0) {
        rc = fail("cannot write", out);
    }
    return rc;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--length", "--slot", "--out", "--print", NULL };
    long length;

    if (argc == 2 && !strcmp(argv[1], "--help")) {
        puts("usage: boot_barrier --length FILE --slot FILE --out FILE [--print FILE]");
        return 0;
    }
    cli_parse("boot_barrier", argc, argv, 1, known);
    const char *length_file = cli_str("--length", NULL);
    const char *slot = cli_str("--slot", NULL);
    const char *out = cli_str("--out", NULL);
    const char *print = cli_str("--print", "");

    if (wait_at_barrier()) {
        return 1;
    }
    /* read after the barrier: from a snapshot, this run's QEMU has the run's command */
    if (read_length(length_file, &length)) {
        return 1;
    }
    if (length && copy_file(slot, length, out)) {
        return 1;
    }
    return *print ? copy_file(print, -1, NULL) : 0;
}
