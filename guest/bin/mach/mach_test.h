/*
 * mach_test: in-guest tests of norma.ko's Mach IPC through libmach (docs/boards/norma.md).
 * What the subcommands share: messages, an echo server, bounded waits, child processes.
 */
#ifndef MACH_TEST_H
#define MACH_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "mach/mach.h"

#define ECHO_NAME       "mach_test_echo"    /* the echo server's name on its node */
#define ID_ECHO         1000                /* echo it back to the reply port, id + 100 */
#define ID_CALLBACK     1001                /* send a message to the port in descriptor 0 */
#define ID_STOP         1002                /* the server stops */
#define ID_PAUSE        1003                /* the server takes nothing for (u32) ms */
#define ID_CALLED_BACK  1100
#define WAIT_MS         10000               /* the bound on any one wait */

/* a buffer for any message */
typedef struct {
    mach_msg_header_t h;
    unsigned char body[MACH_MSG_SIZE_MAX];
} msgbuf_t;

/* the name of a Mach return code, for FAIL lines */
#define E(code) mach_error_string(code)

/* a simple message: header + len bytes of data (rounded up to 4) */
mach_msg_return_t send_data(task_t task, mach_port_name_t dest, mach_msg_type_name_t disp,
                            int id, const void *data, size_t len, mach_msg_option_t option,
                            mach_msg_timeout_t timeout, mach_port_name_t notify);
/* receive into buf (whole size) with a timeout (WAIT_MS if 0 given and no option) */
mach_msg_return_t receive(task_t task, mach_port_name_t port, msgbuf_t *buf,
                          mach_msg_option_t option, mach_msg_timeout_t timeout);
/* a new port with a send right under its name, in task */
mach_port_name_t new_port(task_t task);
/* the receive status of name ('msgcount' and so on); all -1 if it fails */
struct mach_port_status status_of(task_t task, mach_port_name_t name);
mach_port_type_t type_of(task_t task, mach_port_name_t name);   /* 0: no such name */
/* bytes of a deterministic pattern; check_pattern: the first bad offset, or -1 */
void fill_pattern(void *p, size_t len, unsigned seed);
long check_pattern(const void *p, size_t len, unsigned seed);
int64_t now_ms(void);

/* The echo server: a port named ECHO_NAME on its node. find_echo: a send right to the one
 * on node (waiting up to WAIT_MS for it), or, with node -1, one forked here (its pid in
 * *pid); stop_echo ends it. */
mach_port_name_t find_echo(task_t task, int node, pid_t *pid);
void stop_echo(task_t task, mach_port_name_t echo, pid_t pid);
int serve(const char *name, unsigned seconds);
/* a child's exit status (or 128 + its signal), waiting at most ms; -1: still running */
int wait_child(pid_t pid, int ms);
/* how many messages without reply port the echo server's queue takes while it pauses:
 * its queue limit here, this node's window for it on another node */
int fill_paused_echo(task_t t, mach_port_name_t echo, unsigned pause_ms);

int test_rights(int node);
int test_inline(int node);
int test_ool(int node);
int test_qlimit(int node);
int test_notify(int node);
int test_death(int node);
int test_killed(int node);
int test_badargs(int node);
int test_fuzz(int node, unsigned rounds, unsigned seed);
int test_many_to_one(unsigned senders, unsigned remote, unsigned messages);
int send_to(int node, unsigned id, unsigned messages);

#endif
