/* mach_test death, killed: tasks that die, and processes killed inside mach_msg. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mach_test.h"

#define BIG_OOL (4u << 20)

/* where this node's ports are looked up: here, or (--node 1 under norma_loop.ko) through
 * the mirror, so that every right to them is a proxy's and every message crosses */
static unsigned via;

/* a message to dest carrying a send right made from 'right' and 'pages' OOL pages */
static mach_msg_return_t send_loaded(task_t t, mach_port_name_t dest, mach_port_name_t right,
                                     const void *data, size_t size, mach_msg_option_t option)
{
    struct {
        mach_msg_header_t h;
        mach_msg_body_t body;
        mach_msg_descriptor_t d[2];
    } m = {
        .h = { .msgh_bits = MACH_MSGH_BITS(MACH_MSG_TYPE_COPY_SEND, 0) | MACH_MSGH_BITS_COMPLEX,
               .msgh_remote_port = dest, .msgh_id = 77 },
        .body = { 2 },
    };
    m.d[0].port = (mach_msg_port_descriptor_t){ .name = right,
        .disposition = MACH_MSG_TYPE_MAKE_SEND, .type = MACH_MSG_PORT_DESCRIPTOR };
    m.d[1].out_of_line = (mach_msg_ool_descriptor_t){ .address = (uintptr_t)data,
        .size = (uint32_t)size, .type = MACH_MSG_OOL_DESCRIPTOR };
    return mach_msg_task(t, &m.h, MACH_SEND_MSG | option, sizeof(m), 0, MACH_PORT_NULL,
                         WAIT_MS, MACH_PORT_NULL);
}

/* a child of this process that runs fn and exits with its result; close_fd: a task of
 * the parent the child must not keep alive */
static pid_t child(int (*fn)(void *), void *arg, int close_fd)
{
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        if (close_fd >= 0) {
            close(close_fd);
        }
        _exit(fn(arg));
    }
    return pid;
}

struct target { task_t task; mach_port_name_t port; };

static int send_blocking(void *arg)
{
    struct target *to = arg;
    mach_msg_return_t mr = send_data(to->task, to->port, MACH_MSG_TYPE_COPY_SEND, 9, NULL, 0,
                                     0, 0, 0);
    return mr == MACH_SEND_INVALID_DEST ? 3 : mr == MACH_MSG_SUCCESS ? 0 : 2;
}

static int receive_blocking(void *arg)
{
    struct target *on = arg;
    static msgbuf_t m;
    mach_msg_return_t mr = mach_msg_task(on->task, &m.h, MACH_RCV_MSG, 0, sizeof(m), on->port,
                                         0, MACH_PORT_NULL);
    return mr == MACH_RCV_PORT_DIED ? 4 : 2;
}

/* two receive rights, each in a message queued on the other's port, outlive their task:
 * nothing can receive them (Mach would leak them too); module exit destroys them */
static void cycle(void)
{
    task_t c = mach_task_create();
    mach_port_name_t a = new_port(c), b = new_port(c);
    struct {
        mach_msg_header_t h;
        mach_msg_body_t body;
        mach_msg_port_descriptor_t port;
    } m = { .body = { 1 } };
    mach_msg_return_t mr1, mr2;

    m.h = (mach_msg_header_t){ .msgh_remote_port = b, .msgh_bits = MACH_MSGH_BITS_COMPLEX |
                               MACH_MSGH_BITS(MACH_MSG_TYPE_COPY_SEND, 0) };
    m.port = (mach_msg_port_descriptor_t){ .name = a, .disposition = MACH_MSG_TYPE_MOVE_RECEIVE,
                                           .type = MACH_MSG_PORT_DESCRIPTOR };
    mr1 = mach_msg_task(c, &m.h, MACH_SEND_MSG, sizeof(m), 0, 0, 0, 0);
    m.h.msgh_remote_port = a;
    m.port.name = b;
    mr2 = mach_msg_task(c, &m.h, MACH_SEND_MSG, sizeof(m), 0, 0, 0, 0);
    cli_result("receive_rights_in_a_cycle", mr1 == MACH_MSG_SUCCESS && mr2 == MACH_MSG_SUCCESS &&
               type_of(c, a) == MACH_PORT_TYPE_SEND && type_of(c, b) == MACH_PORT_TYPE_SEND,
               "%s, %s", E(mr1), E(mr2));
    mach_task_terminate(c);
}

int test_death(int node)
{
    task_t m = mach_task_self(), a = mach_task_create();
    mach_port_name_t pa = new_port(a), pm = new_port(m), px = new_port(m), sa = 0;
    unsigned char *data = malloc(3 * MACH_MSG_OOL_PAGE);
    struct target to_a, on_x;
    pid_t sender, receiver;
    int rc_s, rc_r, queued = 0, blocked, remote;
    unsigned here = 0, nodes = 0;
    kern_return_t kr;

    mach_host_node(&here, &nodes);
    via = node < 0 ? here : (unsigned)node;
    remote = via != here;
    netname_check_in(a, "death_a", pa);
    kr = netname_look_up(m, via, "death_a", &sa);
    cli_result("look_up_here", kr == NETNAME_SUCCESS && type_of(m, sa) == MACH_PORT_TYPE_SEND,
               "%s", E(kr));
    fill_pattern(data, 3 * MACH_MSG_OOL_PAGE, 3);
    queued += send_loaded(m, sa, pm, data, 3 * MACH_MSG_OOL_PAGE, 0) == MACH_MSG_SUCCESS;
    while (queued < 5 && send_data(m, sa, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, 0, 0, 0) ==
           MACH_MSG_SUCCESS) {
        queued++;
    }
    /* the right in the queued message: counted here, or gone to the other node */
    cli_result("right_in_queued_message_counted", queued == 5 &&
               status_of(m, pm).srights == (remote ? 1u : 2u), "%d queued, %u send rights",
               queued, status_of(m, pm).srights);

    to_a = (struct target){ m, sa };
    on_x = (struct target){ m, px };
    sender = child(send_blocking, &to_a, (int)a);
    receiver = child(receive_blocking, &on_x, (int)a);
    usleep(300000);
    blocked = wait_child(sender, 0) < 0 && wait_child(receiver, 0) < 0;
    mach_task_terminate(a);
    rc_s = wait_child(sender, WAIT_MS);
    cli_result("blocked_sender_wakes_invalid_dest", blocked && rc_s == 3, "blocked %d, child %d",
               blocked, rc_s);
    cli_result("dead_name_after_task_death", type_of(m, sa) == MACH_PORT_TYPE_DEAD_NAME &&
               send_data(m, sa, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, 0, 0, 0) ==
               MACH_SEND_INVALID_DEST, "type %#x", type_of(m, sa));
    cli_result("queued_rights_released", status_of(m, pm).srights == 1, "%u send rights",
               status_of(m, pm).srights);
    kr = netname_look_up(m, via, "death_a", &sa);
    cli_result("dead_port_leaves_name_service", kr == NETNAME_NOT_CHECKED_IN, "%s", E(kr));
    mach_port_mod_refs(m, px, MACH_PORT_RIGHT_RECEIVE, -1);
    rc_r = wait_child(receiver, WAIT_MS);
    cli_result("blocked_receiver_wakes_port_died", rc_r == 4, "child %d", rc_r);
    cycle();
    for (pid_t *p = (pid_t[]){ sender, receiver, 0 }; *p; p++) {
        if (wait_child(*p, 0) < 0) {
            kill(*p, SIGKILL);
        }
    }
    free(data);
    return 0;
}

/* ---- processes killed in mach_msg ---------------------------------------------------- */

static int own_task_sends(void *arg)
{
    const char *name = arg;
    task_t t = mach_task_create();
    mach_port_name_t s = 0;

    if (netname_look_up(t, via, name, &s) != NETNAME_SUCCESS) {
        return 2;
    }
    send_data(t, s, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, 0, 0, 0);
    return 0;
}

static int own_task_receives(void *arg)
{
    static msgbuf_t m;
    task_t t = mach_task_create();
    mach_port_name_t p = new_port(t);

    netname_check_in(t, arg, p);
    mach_msg_task(t, &m.h, MACH_RCV_MSG, 0, sizeof(m), new_port(t), 0, MACH_PORT_NULL);
    return 0;
}

static int own_task_streams(void *arg)
{
    const char *name = arg;
    task_t t = mach_task_create();
    mach_port_name_t s = 0;
    unsigned char *data = malloc(BIG_OOL);

    if (netname_look_up(t, via, name, &s) != NETNAME_SUCCESS) {
        return 2;
    }
    fill_pattern(data, BIG_OOL, 9);
    for (;;) {
        send_loaded(t, s, new_port(t), data, BIG_OOL, 0);
    }
}

/* a name's right becomes a dead name; another node learns of a death by a message, so
 * this may take a moment */
static mach_port_type_t wait_dead(task_t t, mach_port_name_t name)
{
    for (int64_t end = now_ms() + WAIT_MS; now_ms() < end; usleep(10000)) {
        if (type_of(t, name) == MACH_PORT_TYPE_DEAD_NAME) {
            break;
        }
    }
    return type_of(t, name);
}

static int kill_after(pid_t pid, int ms)
{
    usleep(ms * 1000);
    kill(pid, SIGKILL);
    return wait_child(pid, WAIT_MS);
}

int test_killed(int node)
{
    task_t m = mach_task_self();
    mach_port_name_t p = new_port(m), pm = new_port(m), s3 = 0, q = new_port(m);
    unsigned char *data = malloc(MACH_MSG_OOL_PAGE);
    msgbuf_t *buf = calloc(1, sizeof(*buf));
    int rc, got = 0, good = 0, remote, blocked;
    unsigned here = 0, nodes = 0;
    struct mach_port_status before;
    mach_port_name_t sp = 0;
    mach_msg_return_t mr;
    pid_t pid;

    mach_host_node(&here, &nodes);
    via = node < 0 ? here : (unsigned)node;
    remote = via != here;
    /* blocked in send: the queue full (or, through another node, this node's window);
     * killed, it leaves the port as it was */
    mach_port_set_qlimit(m, p, 1);
    netname_check_in(m, "killed_p", p);
    netname_look_up(m, via, "killed_p", &sp);
    while (send_data(m, sp, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, MACH_SEND_TIMEOUT, 0, 0) ==
           MACH_MSG_SUCCESS) {
        ;
    }
    before = status_of(m, p);
    pid = child(own_task_sends, "killed_p", -1);
    usleep(300000);
    blocked = wait_child(pid, 0) < 0;
    rc = kill_after(pid, 0);
    cli_result("killed_blocked_sender", blocked && rc == 128 + SIGKILL &&
               status_of(m, p).msgcount == before.msgcount &&
               status_of(m, p).srights == before.srights,
               "blocked %d, child %d, %u queued (%u before), %u send rights (%u before)", blocked,
               rc, status_of(m, p).msgcount, before.msgcount, status_of(m, p).srights,
               before.srights);

    /* blocked in receive, holding a port with a message carrying a right and OOL data */
    pid_t r = child(own_task_receives, "killed_r", -1);
    for (int i = 0; i < 500 && netname_look_up(m, via, "killed_r", &s3) != NETNAME_SUCCESS; i++) {
        usleep(10000);
    }
    mr = send_loaded(m, s3, pm, data, MACH_MSG_OOL_PAGE, MACH_SEND_TIMEOUT);
    rc = kill_after(r, 100);
    cli_result("killed_blocked_receiver", mr == MACH_MSG_SUCCESS && rc == 128 + SIGKILL &&
               wait_dead(m, s3) == MACH_PORT_TYPE_DEAD_NAME && status_of(m, pm).srights == 1,
               "%s, child %d, type %#x, %u send rights", E(mr), rc, type_of(m, s3),
               status_of(m, pm).srights);

    /* killed while streaming 4 MiB messages: every message that arrived is whole */
    mach_port_set_qlimit(m, q, MACH_PORT_QLIMIT_MAX);
    netname_check_in(m, "killed_q", q);
    pid_t st = child(own_task_streams, "killed_q", -1);
    for (int i = 0; i < 3 && receive(m, q, buf, 0, 0) == MACH_MSG_SUCCESS; i++) {
        mach_msg_descriptor_t *d = mach_msg_descriptors(&buf->h);
        unsigned char *o = (unsigned char *)(uintptr_t)d[1].out_of_line.address;
        got++;
        good += d[1].out_of_line.size == BIG_OOL && check_pattern(o, BIG_OOL, 9) < 0;
        munmap(o, BIG_OOL);
    }
    rc = kill_after(st, 50);
    while (receive(m, q, buf, MACH_RCV_TIMEOUT, 0) == MACH_MSG_SUCCESS) {
        mach_msg_descriptor_t *d = mach_msg_descriptors(&buf->h);
        unsigned char *o = (unsigned char *)(uintptr_t)d[1].out_of_line.address;
        got++;
        /* the right it carried is to a port of the dead task (from another node: to a
         * proxy that learns of the death only when it is used) */
        good += d[1].out_of_line.size == BIG_OOL && check_pattern(o, BIG_OOL, 9) < 0 &&
                (remote ? d[0].port.name != MACH_PORT_NULL : d[0].port.name == MACH_PORT_DEAD);
        munmap(o, BIG_OOL);
    }
    cli_result("killed_while_streaming_ool", rc == 128 + SIGKILL && got >= 3 && good == got,
               "child %d, %d messages, %d whole", rc, got, good);
    free(data);
    free(buf);
    return 0;
}
