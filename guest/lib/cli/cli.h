/*
 * cli: what every guest program does the same way: check its arguments (each
 * option known, given once, with a value that parses and is in range; a bad
 * one is a message on stderr and exit status 2), and bound every blocking call.
 */
#ifndef CLI_H
#define CLI_H

#include <stdnoreturn.h>

/* Usage errors: "PROG: message (see PROG --help)" on stderr, exit 2. */
noreturn void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Take argv[first..] as "--name value" pairs; every name must be in known
 * (NULL-terminated). prog names the program (and mode) in messages.
 */
void cli_parse(const char *prog, int argc, char **argv, int first, const char *const *known);
/* Whether the option was given. */
int cli_given(const char *name);
/* An option's value; dflt NULL: the option is required. */
const char *cli_str(const char *name, const char *dflt);
/* An option as a whole decimal number in lo..hi; why is said when it is not. */
long cli_num(const char *name, const char *dflt, long lo, long hi, const char *why);
/* A comma-separated list of such numbers, 1..max of them; returns how many. */
int cli_nums(const char *name, long lo, long hi, long *out, int max);

/*
 * A blocking call with a deadline: CLI_BOUNDED(seconds, call) runs call; if it
 * is still blocked after that many seconds it is interrupted (SIGALRM, every
 * second after the first expiry, so a signal that lands before the call
 * blocks is not lost) and fails with errno ETIMEDOUT.
 */
void cli_arm(unsigned seconds);
long cli_disarm(long ret);
#define CLI_BOUNDED(seconds, call) (cli_arm(seconds), cli_disarm(call))

/*
 * Test programs: "PASS name", or "FAIL name: why" (fmt and what follows) on stdout,
 * flushed at once; cli_failures() counts the FAILs so far.
 */
void cli_result(const char *name, int ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cli_failures(void);

/*
 * v (>= 0) with three decimals, as printf's %.3f prints it, into buf (CLI_FIXED3_LEN):
 * for programs also built against klibc, whose printf has no floating point.
 */
#define CLI_FIXED3_LEN 32
const char *cli_fixed3(double v, char *buf);

#endif
