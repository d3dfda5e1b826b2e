/*
 * The fabric's lines on stderr, each prefixed "fabric: " (docs/fabric.md,
 * "Outputs"), and its fatal errors: a last line saying why, then a nonzero
 * exit status ("Exit status"). Running out of memory is one of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fabric.h"

static const char *owned[2];   /* the socket and the lock-step file: removed at a fatal error */

static char prefix[96] = "fabric: ";

void fabric_log_prefix(uint32_t shard, const char *host)
{
    snprintf(prefix, sizeof(prefix), "fabric shard %u%s%s%s: ", shard, host[0] ? " (" : "",
             host, host[0] ? ")" : "");
}

static void vlog(const char *fmt, va_list ap)
{
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void fabric_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void fabric_owns(const char *path)
{
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        if (!owned[i]) {
            owned[i] = path;
            return;
        }
    }
}

void fabric_fatal(int status, const char *fmt, ...)
{
    va_list ap;
    for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
        if (owned[i]) {
            unlink(owned[i]);
        }
    }
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
    exit(status);
}

static void *checked(void *p, size_t n, size_t size)
{
    if (!p && n && size) {
        fabric_fatal(EXIT_RUNTIME, "out of memory (allocating %zu x %zu bytes)", n, size);
    }
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    return checked(calloc(n, size), n, size);
}

void *xmalloc(size_t size)
{
    return checked(malloc(size), 1, size);
}

void *xreallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) {
        checked(NULL, n, size);
    }
    return checked(realloc(p, n * size), n, size);
}
