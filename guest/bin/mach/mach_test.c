/*
 * mach_test: in-guest tests of norma.ko's Mach IPC (docs/boards/norma.md) through
 * libmach. Prints "PASS <name>" or "FAIL <name>: why" per case; exits 1 if any failed.
 *
 *   mach_test rights  [--node N]   names, rights and user references; rights in messages
 *   mach_test inline  [--node N]   inline content, sizes, sequence numbers, RCV_TOO_LARGE
 *   mach_test ool     [--node N]   OOL content by page mapping, several regions, deallocate
 *   mach_test qlimit  [--node N]   queue limits: blocking senders, SEND_TIMEOUT, signals
 *   mach_test notify  [--node N]   MACH_SEND_NOTIFY and MACH_NOTIFY_MSG_ACCEPTED
 *   mach_test death   [--node N]   a task dies: dead names, woken senders and receivers
 *   mach_test killed  [--node N]   processes killed in the middle of mach_msg
 *   mach_test badargs [--node N]   every documented error for bad arguments
 *   mach_test fuzz [--node N] [--rounds R] [--seed S]   random calls from several tasks
 *   mach_test manytoone [--senders S] [--remote R] [--messages M]   S local senders and R
 *                     "mach_test sendto" on other nodes to one port: all arrive, in order
 *   mach_test sendto --node N --id K [--messages M]   one of those remote senders
 *   mach_test serve [--name S] [--seconds T]   an echo server, for the tests on other nodes
 *   mach_test hold --seconds T     keep a task (and a port) open for T seconds
 *
 * With --node N the tests talk to the echo server that "mach_test serve" runs on node N
 * (found with netname_look_up); without it they fork one on this node. death and killed
 * make their ports here and look them up on node N: that is for norma_loop.ko, whose
 * node 1 is this node through a mirror. Every wait is bounded.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mach_test.h"

int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

mach_msg_return_t send_data(task_t task, mach_port_name_t dest, mach_msg_type_name_t disp,
                            int id, const void *data, size_t len, mach_msg_option_t option,
                            mach_msg_timeout_t timeout, mach_port_name_t notify)
{
    static msgbuf_t m;
    size_t size = sizeof(m.h) + ((len + 3) & ~(size_t)3);

    memset(&m.h, 0, sizeof(m.h));
    m.h.msgh_bits = MACH_MSGH_BITS(disp, 0);
    m.h.msgh_remote_port = dest;
    m.h.msgh_id = id;
    if (len) {
        memcpy(m.body, data, len);
    }
    return mach_msg_task(task, &m.h, MACH_SEND_MSG | option, (mach_msg_size_t)size, 0,
                         MACH_PORT_NULL, timeout, notify);
}

mach_msg_return_t receive(task_t task, mach_port_name_t port, msgbuf_t *buf,
                          mach_msg_option_t option, mach_msg_timeout_t timeout)
{
    if (!(option & MACH_RCV_TIMEOUT)) {
        option |= MACH_RCV_TIMEOUT;
        timeout = WAIT_MS;
    }
    return mach_msg_task(task, &buf->h, MACH_RCV_MSG | option, 0, sizeof(*buf), port,
                         timeout, MACH_PORT_NULL);
}

mach_port_name_t new_port(task_t task)
{
    mach_port_name_t name = MACH_PORT_NULL;

    if (mach_port_allocate(task, MACH_PORT_RIGHT_RECEIVE, &name) != KERN_SUCCESS ||
        mach_port_insert_right(task, name, name, MACH_MSG_TYPE_MAKE_SEND) != KERN_SUCCESS) {
        printf("setup: cannot allocate a port\n");
        return MACH_PORT_NULL;
    }
    return name;
}

struct mach_port_status status_of(task_t task, mach_port_name_t name)
{
    struct mach_port_status st;

    if (mach_port_get_status(task, name, &st) != KERN_SUCCESS) {
        memset(&st, 0xff, sizeof(st));
    }
    return st;
}

mach_port_type_t type_of(task_t task, mach_port_name_t name)
{
    mach_port_type_t type = 0;

    if (mach_port_type(task, name, &type) != KERN_SUCCESS) {
        return 0;
    }
    return type;
}

void fill_pattern(void *p, size_t len, unsigned seed)
{
    unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        b[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 12));
    }
}

long check_pattern(const void *p, size_t len, unsigned seed)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) {
        if (b[i] != (unsigned char)(i * 131 + seed * 7 + (i >> 12))) {
            return (long)i;
        }
    }
    return -1;
}

int wait_child(pid_t pid, int ms)
{
    int st;
    int64_t end = now_ms() + ms;

    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (r < 0 || now_ms() >= end) {
            return -1;
        }
        usleep(10000);
    }
}

/* ---- the echo server ----------------------------------------------------------------- */

/* one request: echo it (rights and OOL go back as they came), call back, or stop */
static int serve_one(task_t task, msgbuf_t *m)
{
    mach_msg_header_t *h = &m->h;
    mach_msg_body_t *body = (mach_msg_body_t *)m->body;
    mach_msg_descriptor_t *d = mach_msg_descriptors(h);
    int complex = h->msgh_bits & MACH_MSGH_BITS_COMPLEX;
    unsigned n = complex ? body->msgh_descriptor_count : 0;

    if (h->msgh_id == ID_STOP) {
        return 1;
    }
    if (h->msgh_id == ID_PAUSE) {
        uint32_t ms;
        memcpy(&ms, m->body, sizeof(ms));
        usleep(ms * 1000);
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        if (d[i].type.type == MACH_MSG_OOL_DESCRIPTOR) {
            d[i].out_of_line.deallocate = 1;    /* the mapping goes back with it */
        }
    }
    if (h->msgh_id == ID_CALLBACK && n && d[0].type.type == MACH_MSG_PORT_DESCRIPTOR) {
        mach_port_name_t to = d[0].port.name;
        mach_msg_type_name_t disp = d[0].port.disposition;
        if (MACH_PORT_VALID(h->msgh_remote_port)) {
            mach_port_deallocate(task, h->msgh_remote_port);
        }
        send_data(task, to, disp, ID_CALLED_BACK, "back", 4, MACH_SEND_TIMEOUT, WAIT_MS, 0);
        return 0;
    }
    if (!MACH_PORT_VALID(h->msgh_remote_port)) {
        return 0;
    }
    /* the reply right came as PORT_SEND or PORT_SEND_ONCE: moved back as such */
    h->msgh_bits = MACH_MSGH_BITS(MACH_MSGH_BITS_REMOTE(h->msgh_bits), 0) |
                   (h->msgh_bits & MACH_MSGH_BITS_COMPLEX);
    h->msgh_local_port = MACH_PORT_NULL;
    h->msgh_id += 100;
    mach_msg_task(task, h, MACH_SEND_MSG | MACH_SEND_TIMEOUT, h->msgh_size, 0,
                  MACH_PORT_NULL, WAIT_MS, MACH_PORT_NULL);
    return 0;
}

int serve(const char *name, unsigned seconds)
{
    static msgbuf_t m;
    task_t task = mach_task_create();
    mach_port_name_t port;
    kern_return_t kr;
    int64_t end = now_ms() + seconds * 1000LL;

    if (task == TASK_NULL) {
        printf("serve: cannot open %s: %s\n", MACH_DEVICE, strerror(errno));
        return 1;
    }
    mach_port_allocate(task, MACH_PORT_RIGHT_RECEIVE, &port);
    mach_port_set_qlimit(task, port, MACH_PORT_QLIMIT_MAX);
    kr = netname_check_in(task, name, port);
    if (kr != NETNAME_SUCCESS) {
        printf("serve: netname_check_in(%s): %s\n", name, E(kr));
        return 1;
    }
    while (now_ms() < end) {
        mach_msg_return_t mr = receive(task, port, &m, MACH_RCV_TIMEOUT, 500);
        if (mr == MACH_RCV_TIMED_OUT) {
            continue;
        }
        if (mr != MACH_MSG_SUCCESS) {
            printf("serve: receive: %s\n", E(mr));
            return 1;
        }
        if (serve_one(task, &m)) {
            break;
        }
    }
    mach_task_terminate(task);
    return 0;
}

mach_port_name_t find_echo(task_t task, int node, pid_t *pid)
{
    mach_port_name_t echo = MACH_PORT_NULL;
    kern_return_t kr = KERN_FAILURE;
    unsigned here, nodes;

    *pid = -1;
    if (node < 0) {
        fflush(stdout);
        *pid = fork();
        if (*pid == 0) {
            _exit(serve(ECHO_NAME, 120));
        }
        mach_host_node(&here, &nodes);
        node = (int)here;
    }
    for (int64_t end = now_ms() + WAIT_MS; now_ms() < end; usleep(20000)) {
        kr = netname_look_up(task, (unsigned)node, ECHO_NAME, &echo);
        if (kr != NETNAME_NOT_CHECKED_IN) {
            break;
        }
    }
    if (kr != NETNAME_SUCCESS) {
        printf("setup: no echo server on node %d: %s\n", node, E(kr));
        return MACH_PORT_NULL;
    }
    return echo;
}

void stop_echo(task_t task, mach_port_name_t echo, pid_t pid)
{
    if (echo != MACH_PORT_NULL && pid > 0) {
        send_data(task, echo, MACH_MSG_TYPE_COPY_SEND, ID_STOP, NULL, 0, MACH_SEND_TIMEOUT,
                  WAIT_MS, 0);
    }
    if (pid > 0 && wait_child(pid, WAIT_MS) < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    if (echo != MACH_PORT_NULL) {
        mach_port_deallocate(task, echo);
    }
}

int fill_paused_echo(task_t t, mach_port_name_t echo, unsigned pause_ms)
{
    int sent = 0;

    if (send_data(t, echo, MACH_MSG_TYPE_COPY_SEND, ID_PAUSE, &pause_ms, sizeof(pause_ms),
                  MACH_SEND_TIMEOUT, WAIT_MS, 0) != MACH_MSG_SUCCESS) {
        return -1;
    }
    usleep(100000);     /* the server has taken the pause */
    while (sent < 100 && send_data(t, echo, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0,
                                   MACH_SEND_TIMEOUT, 0, 0) == MACH_MSG_SUCCESS) {
        sent++;
    }
    return sent;
}

static int hold(unsigned seconds)
{
    task_t task = mach_task_self();
    mach_port_name_t port = task == TASK_NULL ? MACH_PORT_NULL : new_port(task);

    printf("held %s\n", port != MACH_PORT_NULL ? "a port" : "nothing");
    fflush(stdout);
    sleep(seconds);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--node", "--name", "--seconds", "--rounds",
                                         "--seed", "--senders", "--remote", "--messages",
                                         "--id", NULL };
    static const struct { const char *name; int (*fn)(int node); } tests[] = {
        { "rights", test_rights }, { "inline", test_inline }, { "ool", test_ool },
        { "qlimit", test_qlimit }, { "notify", test_notify }, { "badargs", test_badargs },
        { "death", test_death }, { "killed", test_killed },
    };
    const char *cmd = argc > 1 ? argv[1] : "--help";

    if (!strcmp(cmd, "--help")) {
        printf("usage: mach_test rights|inline|ool|qlimit|notify|badargs|death|killed"
               " [--node N]\n"
               "       mach_test fuzz [--node N] [--rounds R] [--seed S]\n"
               "       mach_test manytoone [--senders S] [--remote R] [--messages M]\n"
               "       mach_test sendto --node N --id K [--messages M]\n"
               "       mach_test serve [--name S] [--seconds T] | hold --seconds T\n");
        return 0;
    }
    cli_parse("mach_test", argc, argv, 2, known);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
        if (!strcmp(cmd, tests[i].name)) {
            int node = (int)cli_num("--node", "-1", -1, 255, "a node, or -1: this one");
            return tests[i].fn(node) || cli_failures() != 0;
        }
    }
    if (!strcmp(cmd, "fuzz")) {
        int node = (int)cli_num("--node", "-1", -1, 255, "a node, or -1: this one");
        return test_fuzz(node, (unsigned)cli_num("--rounds", "3000", 1, 10000000, NULL),
                         (unsigned)cli_num("--seed", "1", 0, 0x7fffffff, NULL)) ||
               cli_failures() != 0;
    }
    if (!strcmp(cmd, "manytoone")) {
        return test_many_to_one((unsigned)cli_num("--senders", "8", 0, 64, NULL),
                                (unsigned)cli_num("--remote", "0", 0, 64, NULL),
                                (unsigned)cli_num("--messages", "50", 1, 100000, NULL)) ||
               cli_failures() != 0;
    }
    if (!strcmp(cmd, "sendto")) {
        return send_to((int)cli_num("--node", NULL, 0, 255, NULL),
                       (unsigned)cli_num("--id", NULL, 0, 63, NULL),
                       (unsigned)cli_num("--messages", "50", 1, 100000, NULL));
    }
    if (!strcmp(cmd, "serve")) {
        return serve(cli_str("--name", ECHO_NAME),
                     (unsigned)cli_num("--seconds", "300", 1, 86400, NULL));
    }
    if (!strcmp(cmd, "hold")) {
        return hold((unsigned)cli_num("--seconds", NULL, 1, 3600, NULL));
    }
    cli_usage_error("unknown test '%s'", cmd);
}
