/*
 * file_time: a file written with a pattern, and the time to read one from start to end,
 * as a program does (open, read, close), in the guest's clock: under icount that is
 * modeled time (docs/machines.md, "Guest CPU speed"). For the storage paths of the
 * PUMA-II benchmark (NFS: docs/nfs.md).
 *
 *   file_time write FILE [--bytes N]
 *       writes N bytes (default 1 MiB, a whole number of 16-byte records): record k is
 *       its byte offset, 15 decimal digits and a newline, so a block lost, repeated or
 *       out of place changes the file's checksum; prints  RESULT file_write bytes=N
 *   file_time read FILE [--block B]
 *       reads FILE to its end in reads of B bytes (default 65536); prints
 *       RESULT file_read bytes=N block=B ns=T
 *       T from before open to after close (CLOCK_MONOTONIC): the whole read as cat
 *       or dd would see it, the open's round trips included.
 * Exit status 0, 1 if a call failed (named on stderr), 2 for bad arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define RECORD 16

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static int fail(const char *what, const char *file)
{
    fprintf(stderr, "file_time: %s %s: %s\n", what, file, strerror(errno));
    return 1;
}

static int write_pattern(const char *file, long bytes)
{
    static char buf[65536];
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    if (fd < 0) {
        return fail("cannot create", file);
    }
    for (long off = 0; off < bytes; ) {
        size_t n = 0;
        for (; n < sizeof(buf) && off + (long)n < bytes; n += RECORD) {
            /* 15 digits and a newline: the terminating NUL lands on the next record */
            char rec[RECORD + 1];
            snprintf(rec, sizeof(rec), "%015ld\n", off + (long)n);
            memcpy(buf + n, rec, RECORD);
        }
        for (size_t done = 0; done < n; ) {
            ssize_t w = write(fd, buf + done, n - done);
            if (w < 0) {
                close(fd);
                return fail("cannot write", file);
            }
            done += w;
        }
        off += n;
    }
    if (close(fd) < 0) {
        return fail("cannot close", file);
    }
    printf("RESULT file_write bytes=%ld\n", bytes);
    return 0;
}

static int read_timed(const char *file, long block)
{
    char *buf = malloc(block);
    uint64_t bytes = 0;

    if (!buf) {
        fprintf(stderr, "file_time: no memory for a block of %ld bytes\n", block);
        return 1;
    }
    uint64_t t0 = now_ns();
    int fd = open(file, O_RDONLY);
    if (fd < 0) {
        return fail("cannot open", file);
    }
    for (;;) {
        ssize_t r = read(fd, buf, block);
        if (r < 0) {
            close(fd);
            return fail("cannot read", file);
        }
        if (r == 0) {
            break;
        }
        bytes += r;
    }
    if (close(fd) < 0) {
        return fail("cannot close", file);
    }
    uint64_t t1 = now_ns();
    printf("RESULT file_read bytes=%llu block=%ld ns=%llu\n", (unsigned long long)bytes,
           block, (unsigned long long)(t1 - t0));
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const write_opts[] = { "--bytes", NULL };
    static const char *const read_opts[] = { "--block", NULL };

    if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'h') {
        puts("file_time write FILE [--bytes N] | file_time read FILE [--block B]: see the "
             "head of guest/bin/fs/file_time.c");
        return 0;
    }
    cli_parse("file_time", 1, argv, 1, read_opts);     /* names the program in errors */
    if (argc < 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "read"))) {
        cli_usage_error("give write FILE or read FILE");
    }
    if (!strcmp(argv[1], "write")) {
        cli_parse("file_time write", argc, argv, 3, write_opts);
        long bytes = cli_num("--bytes", "1048576", 0, 1L << 40, "bytes to write");
        if (bytes % RECORD) {
            cli_usage_error("--bytes %ld: give a multiple of %d (the pattern's record)",
                            bytes, RECORD);
        }
        return write_pattern(argv[2], bytes);
    }
    cli_parse("file_time read", argc, argv, 3, read_opts);
    return read_timed(argv[2], cli_num("--block", "65536", 1, 1L << 30, "bytes per read"));
}
