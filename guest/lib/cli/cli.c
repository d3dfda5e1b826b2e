/* cli: see cli.h. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cli.h"

#define MAX_OPTS 16

static const char *prog = "?";
static struct { const char *name, *value; } opts[MAX_OPTS];
static int nopts;

static int find(const char *name)
{
    for (int i = 0; i < nopts; i++) {
        if (!strcmp(opts[i].name, name)) {
            return i;
        }
    }
    return -1;
}

noreturn void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* the program's name without its mode */
    fprintf(stderr, " (see %.*s --help)\n", (int)strcspn(prog, " "), prog);
    exit(2);
}

void cli_parse(const char *name, int argc, char **argv, int first, const char *const *known)
{
    prog = name;
    for (int i = first; i < argc; i += 2) {
        int k = 0;
        while (known[k] && strcmp(known[k], argv[i])) {
            k++;
        }
        if (!known[k]) {
            cli_usage_error("unknown option '%s'", argv[i]);
        }
        if (i + 1 >= argc) {
            cli_usage_error("%s needs a value", argv[i]);
        }
        if (find(argv[i]) >= 0 || nopts == MAX_OPTS) {
            cli_usage_error("%s given twice", argv[i]);
        }
        opts[nopts].name = known[k];
        opts[nopts++].value = argv[i + 1];
    }
}

int cli_given(const char *name)
{
    return find(name) >= 0;
}

const char *cli_str(const char *name, const char *dflt)
{
    int i = find(name);
    if (i >= 0) {
        return opts[i].value;
    }
    if (!dflt) {
        cli_usage_error("missing %s", name);
    }
    return dflt;
}

static long number(const char *name, const char *s, long lo, long hi, const char *why)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno) {
        cli_usage_error("%s '%s' is not a whole number", name, s);
    }
    if (v < lo || v > hi) {
        cli_usage_error("%s %ld is out of range: it must be %ld..%ld%s%s%s", name, v, lo, hi,
                        why ? " (" : "", why ? why : "", why ? ")" : "");
    }
    return v;
}

long cli_num(const char *name, const char *dflt, long lo, long hi, const char *why)
{
    return number(name, cli_str(name, dflt), lo, hi, why);
}

int cli_nums(const char *name, long lo, long hi, long *out, int max)
{
    char item[32];
    const char *s = cli_str(name, NULL);
    int n = 0;
    for (;;) {
        size_t len = strcspn(s, ",");
        if (n == max) {
            cli_usage_error("%s: more than %d values", name, max);
        }
        if (len == 0 || len >= sizeof(item)) {
            cli_usage_error("%s '%s': expected numbers separated by commas", name,
                            cli_str(name, NULL));
        }
        memcpy(item, s, len);
        item[len] = 0;
        out[n++] = number(name, item, lo, hi, NULL);
        if (!s[len]) {
            return n;
        }
        s += len + 1;
    }
}

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
    (void)sig;
    fired = 1;
}

void cli_arm(unsigned seconds)
{
    struct sigaction sa = { .sa_handler = on_alarm };   /* no SA_RESTART: interrupt */
    struct itimerval t = { .it_value = { seconds, 0 }, .it_interval = { 1, 0 } };
    sigaction(SIGALRM, &sa, NULL);
    fired = 0;
    setitimer(ITIMER_REAL, &t, NULL);
}

long cli_disarm(long ret)
{
    int e = errno;
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    errno = ret < 0 && fired && e == EINTR ? ETIMEDOUT : e;
    return ret;
}

static int failures;

void cli_result(const char *name, int ok, const char *fmt, ...)
{
    if (ok) {
        printf("PASS %s\n", name);
    } else {
        va_list ap;
        failures++;
        printf("FAIL %s: ", name);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    fflush(stdout);
}

int cli_failures(void)
{
    return failures;
}

const char *cli_fixed3(double v, char *buf)
{
    /* long, not long long: a 32-bit SPARC converts it in hardware (no libgcc call) */
    long whole = (long)v, thousandths = (long)((v - whole) * 1000 + 0.5);

    if (thousandths == 1000) {
        whole++;
        thousandths = 0;
    }
    snprintf(buf, CLI_FIXED3_LEN, "%ld.%03ld", whole, thousandths);
    return buf;
}
