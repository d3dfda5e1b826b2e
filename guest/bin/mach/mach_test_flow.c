/* mach_test qlimit, notify: queue limits, blocked senders, accepted notifications. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mach_test.h"

static void on_usr1(int sig)
{
    (void)sig;
}

/* a child process of this task that sends one message to dest (blocking) and exits
 * with 0 (sent), 1 (MACH_SEND_INTERRUPTED) or 2 (anything else) */
static pid_t blocked_sender(task_t t, mach_port_name_t dest)
{
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        struct sigaction sa = { .sa_handler = on_usr1 };    /* no SA_RESTART */
        sigaction(SIGUSR1, &sa, NULL);
        mach_msg_return_t mr = send_data(t, dest, MACH_MSG_TYPE_COPY_SEND, 99, "late", 4,
                                         0, 0, 0);
        _exit(mr == MACH_MSG_SUCCESS ? 0 : mr == MACH_SEND_INTERRUPTED ? 1 : 2);
    }
    return pid;
}

static void limits(task_t t, mach_port_name_t p)
{
    struct mach_port_status st = status_of(t, p);
    mach_msg_return_t mr = MACH_MSG_SUCCESS;
    kern_return_t kr;
    int sent = 0;
    int64_t t0;

    cli_result("qlimit_default_5", st.qlimit == MACH_PORT_QLIMIT_DEFAULT, "%u", st.qlimit);
    while (sent < 10 && (mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, sent, NULL, 0,
                                        MACH_SEND_TIMEOUT, 0, 0)) == MACH_MSG_SUCCESS) {
        sent++;
    }
    cli_result("queue_holds_qlimit", sent == 5 && mr == MACH_SEND_TIMED_OUT &&
               status_of(t, p).msgcount == 5, "%d sent, then %s", sent, E(mr));
    t0 = now_ms();
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 0, NULL, 0, MACH_SEND_TIMEOUT, 200, 0);
    t0 = now_ms() - t0;
    cli_result("send_timeout_waits_then_times_out", mr == MACH_SEND_TIMED_OUT && t0 >= 200 &&
               t0 < 2000 && status_of(t, p).msgcount == 5, "%s after %lld ms", E(mr),
               (long long)t0);
    mach_port_limits_t lim = { .mpl_qlimit = 6 };
    kr = mach_port_set_attributes(t, p, MACH_PORT_LIMITS_INFO, (mach_port_info_t)&lim,
                                  MACH_PORT_LIMITS_INFO_COUNT);
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 5, NULL, 0, MACH_SEND_TIMEOUT, 0, 0);
    cli_result("raised_qlimit_takes_more", kr == KERN_SUCCESS && mr == MACH_MSG_SUCCESS &&
               status_of(t, p).msgcount == 6, "%s, %s", E(kr), E(mr));
    kr = mach_port_set_qlimit(t, p, MACH_PORT_QLIMIT_MAX + 1);
    cli_result("qlimit_above_max_invalid_value", kr == KERN_INVALID_VALUE, "%s", E(kr));
    kr = mach_port_set_attributes(t, p, 2, (mach_port_info_t)&lim, MACH_PORT_LIMITS_INFO_COUNT);
    cli_result("set_attributes_other_flavor_invalid_argument", kr == KERN_INVALID_ARGUMENT,
               "%s", E(kr));
    kr = mach_port_set_qlimit(t, p, MACH_PORT_QLIMIT_MAX);
    cli_result("qlimit_max_16", kr == KERN_SUCCESS && status_of(t, p).qlimit == 16, "%s",
               E(kr));
}

/* a sender blocked on a full queue: woken by room, or by a signal */
static void blocking(task_t t, mach_port_name_t p)
{
    msgbuf_t *m = calloc(1, sizeof(*m));
    pid_t pid;
    int still, rc, got = 0;

    while (receive(t, p, m, MACH_RCV_TIMEOUT, 0) == MACH_MSG_SUCCESS) {
        got++;
    }
    mach_port_set_qlimit(t, p, 1);
    send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, 0, 0, 0);
    pid = blocked_sender(t, p);
    usleep(300000);
    still = wait_child(pid, 0) < 0;
    receive(t, p, m, 0, 0);
    rc = wait_child(pid, WAIT_MS);
    cli_result("full_queue_blocks_sender_until_room", got == 6 && still && rc == 0 &&
               status_of(t, p).msgcount == 1, "blocked %d, child %d, %u queued", still, rc,
               status_of(t, p).msgcount);
    receive(t, p, m, 0, 0);
    cli_result("blocked_sender_message_arrives", m->h.msgh_id == 99 &&
               !memcmp(m->body, "late", 4), "id %d", m->h.msgh_id);

    send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, 0, 0, 0);
    pid = blocked_sender(t, p);
    usleep(300000);
    kill(pid, SIGUSR1);
    rc = wait_child(pid, WAIT_MS);
    cli_result("blocked_send_interrupted_by_signal", rc == 1 && status_of(t, p).msgcount == 1,
               "child %d, %u queued", rc, status_of(t, p).msgcount);
    if (rc < 0) {
        kill(pid, SIGKILL);
    }
    receive(t, p, m, 0, 0);
    free(m);
}

/* the echo server's port, here or on another node: its queue limit (16) here; on another
 * node this node's window of unaccepted messages (MACH_PORT_QLIMIT_DEFAULT), which
 * refills as the server takes them */
static void through_server(task_t t, int node)
{
    pid_t pid;
    mach_port_name_t echo = find_echo(t, node, &pid), p = new_port(t);
    msgbuf_t *m = calloc(1, sizeof(*m));
    unsigned here = 0, nodes = 0;
    int remote, want, filled, ok = 0;

    mach_host_node(&here, &nodes);
    remote = node >= 0 && (unsigned)node != here;
    want = remote ? MACH_PORT_QLIMIT_DEFAULT : MACH_PORT_QLIMIT_MAX;
    filled = fill_paused_echo(t, echo, 500);
    cli_result(remote ? "remote_window_is_default_qlimit" : "server_queue_is_its_qlimit",
               filled == want, "%d messages before the limit, want %d", filled, want);
    for (int i = 0; i < 40; i++) {      /* waits for room as the server takes them */
        ok += send_data(t, echo, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, MACH_SEND_TIMEOUT,
                        WAIT_MS, 0) == MACH_MSG_SUCCESS;
    }
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 5; i++) {
            mach_msg_header_t h = {
                .msgh_bits = MACH_MSGH_BITS(MACH_MSG_TYPE_COPY_SEND, MACH_MSG_TYPE_MAKE_SEND),
                .msgh_remote_port = echo, .msgh_local_port = p, .msgh_id = ID_ECHO,
            };
            ok += mach_msg_task(t, &h, MACH_SEND_MSG | MACH_SEND_TIMEOUT, sizeof(h), 0, 0,
                                WAIT_MS, 0) == MACH_MSG_SUCCESS;
        }
        for (int i = 0; i < 5; i++) {
            ok += receive(t, p, m, 0, 0) == MACH_MSG_SUCCESS && m->h.msgh_id == ID_ECHO + 100;
        }
    }
    cli_result("many_sends_through_the_limit", ok == 80, "%d of 80 sends and replies", ok);
    stop_echo(t, echo, pid);
    free(m);
}

int test_qlimit(int node)
{
    task_t t = mach_task_self();
    mach_port_name_t p = t == TASK_NULL ? MACH_PORT_NULL : new_port(t);

    if (p == MACH_PORT_NULL) {
        cli_result("open", 0, "%s", MACH_DEVICE);
        return 1;
    }
    limits(t, p);
    blocking(t, p);
    kern_return_t kr = mach_port_set_qlimit(t, p + 0x100000, 3);
    cli_result("qlimit_unknown_name", kr == KERN_INVALID_NAME, "%s", E(kr));
    mach_port_name_t so = p + 0x2000;
    mach_port_insert_right(t, so, p, MACH_MSG_TYPE_MAKE_SEND_ONCE);
    kr = mach_port_set_qlimit(t, so, 3);
    cli_result("qlimit_needs_receive_right", kr == KERN_INVALID_RIGHT, "%s", E(kr));
    mach_port_deallocate(t, so);
    through_server(t, node);
    return 0;
}

/* ---- MACH_SEND_NOTIFY ------------------------------------------------------------------ */

/* the echo server's port while it pauses: full (on another node: this node's window),
 * then forced; the notification comes once the server took the forced message */
static void notify_through_server(task_t t, int node, mach_port_name_t n, msgbuf_t *m)
{
    pid_t pid;
    mach_port_name_t echo = find_echo(t, node, &pid);
    mach_msg_accepted_notification_t *not = (mach_msg_accepted_notification_t *)m;
    mach_msg_return_t mr, mr2;
    int filled = fill_paused_echo(t, echo, 1000);

    mr = send_data(t, echo, MACH_MSG_TYPE_COPY_SEND, 2, NULL, 0, MACH_SEND_NOTIFY, 0, n);
    mr2 = send_data(t, echo, MACH_MSG_TYPE_COPY_SEND, 2, NULL, 0, MACH_SEND_NOTIFY, 0, n);
    cli_result("server_notify_when_full", filled > 0 && mr == MACH_SEND_WILL_NOTIFY &&
               mr2 == MACH_SEND_NOTIFY_IN_PROGRESS, "%d sent, then %s, %s", filled, E(mr),
               E(mr2));
    mr = receive(t, n, m, MACH_RCV_TIMEOUT, 0);
    cli_result("server_no_notification_while_paused", mr == MACH_RCV_TIMED_OUT, "%s", E(mr));
    mr = receive(t, n, m, 0, 0);
    cli_result("server_msg_accepted_notification", mr == MACH_MSG_SUCCESS &&
               m->h.msgh_id == MACH_NOTIFY_MSG_ACCEPTED && not->not_port == echo,
               "%s, id %d, port %#x (want %#x)", E(mr), m->h.msgh_id, not->not_port, echo);
    stop_echo(t, echo, pid);
}

int test_notify(int node)
{
    task_t t = mach_task_self();
    mach_port_name_t p = t == TASK_NULL ? MACH_PORT_NULL : new_port(t), n = new_port(t);
    msgbuf_t *m = calloc(1, sizeof(*m));
    mach_msg_accepted_notification_t *not = (mach_msg_accepted_notification_t *)m;
    mach_msg_return_t mr;

    if (p == MACH_PORT_NULL) {
        cli_result("open", 0, "%s", MACH_DEVICE);
        return 1;
    }
    mach_port_set_qlimit(t, p, 1);
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, MACH_SEND_NOTIFY, 0, n);
    cli_result("notify_with_room_just_sends", mr == MACH_MSG_SUCCESS, "%s", E(mr));
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 2, NULL, 0, MACH_SEND_NOTIFY, 0, p + 0x5555);
    cli_result("notify_bad_port_invalid_notify", mr == MACH_SEND_INVALID_NOTIFY, "%s", E(mr));
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 2, NULL, 0, MACH_SEND_NOTIFY, 0, n);
    cli_result("notify_full_queue_will_notify", mr == MACH_SEND_WILL_NOTIFY &&
               status_of(t, p).msgcount == 2, "%s, %u queued", E(mr), status_of(t, p).msgcount);
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 3, NULL, 0, MACH_SEND_NOTIFY, 0, n);
    cli_result("notify_in_progress_once_per_task", mr == MACH_SEND_NOTIFY_IN_PROGRESS &&
               status_of(t, p).msgcount == 2, "%s", E(mr));
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 3, NULL, 0, MACH_SEND_TIMEOUT, 0, 0);
    cli_result("forced_message_does_not_open_the_queue", mr == MACH_SEND_TIMED_OUT, "%s", E(mr));
    receive(t, p, m, 0, 0);
    mr = receive(t, n, m, MACH_RCV_TIMEOUT, 0);
    cli_result("no_notification_before_taken", mr == MACH_RCV_TIMED_OUT && m->h.msgh_id == 1,
               "%s", E(mr));
    mr = receive(t, p, m, 0, 0);
    cli_result("forced_message_received", mr == MACH_MSG_SUCCESS && m->h.msgh_id == 2, "%s id %d",
               E(mr), m->h.msgh_id);
    mr = receive(t, n, m, MACH_RCV_TIMEOUT, 0);
    cli_result("msg_accepted_notification", mr == MACH_MSG_SUCCESS &&
               m->h.msgh_id == MACH_NOTIFY_MSG_ACCEPTED && not->not_port == p &&
               m->h.msgh_size == sizeof(*not) &&
               MACH_MSGH_BITS_LOCAL(m->h.msgh_bits) == MACH_MSG_TYPE_PORT_SEND_ONCE,
               "%s, id %d, port %#x (want %#x), size %u", E(mr), m->h.msgh_id, not->not_port, p,
               m->h.msgh_size);
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 4, NULL, 0, MACH_SEND_NOTIFY, 0, n);
    cli_result("notify_again_after_accepted", mr == MACH_MSG_SUCCESS, "%s", E(mr));
    mr = send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 5, NULL, 0, MACH_SEND_NOTIFY, 0, n);
    /* a forced message destroyed unread (its port dies) still notifies */
    mach_port_mod_refs(t, p, MACH_PORT_RIGHT_RECEIVE, -1);
    mr = mr == MACH_SEND_WILL_NOTIFY ? receive(t, n, m, MACH_RCV_TIMEOUT, 0) : mr;
    cli_result("notification_when_destroyed", mr == MACH_MSG_SUCCESS &&
               m->h.msgh_id == MACH_NOTIFY_MSG_ACCEPTED, "%s", E(mr));
    notify_through_server(t, node, n, m);
    free(m);
    return 0;
}

/* ---- many to one ------------------------------------------------------------------------ */

#define M2O_NAME    "mach_test_m2o"
#define M2O_ID      2000
#define M2O_MAX     64              /* senders */

struct m2o { uint32_t sender, seq; };

/* M messages from sender id to the port named M2O_NAME on node (waiting for it to be there);
 * 0 if all were sent */
int send_to(int node, unsigned id, unsigned messages)
{
    task_t t = mach_task_create();
    mach_port_name_t port = MACH_PORT_NULL;
    kern_return_t kr = KERN_FAILURE;
    unsigned here, nodes, sent = 0;

    mach_host_node(&here, &nodes);
    for (int64_t end = now_ms() + WAIT_MS; now_ms() < end; usleep(20000)) {
        kr = netname_look_up(t, node < 0 ? here : (unsigned)node, M2O_NAME, &port);
        if (kr != NETNAME_NOT_CHECKED_IN) {
            break;
        }
    }
    for (unsigned i = 0; kr == NETNAME_SUCCESS && i < messages; i++) {
        struct m2o body = { id, i };
        sent += send_data(t, port, MACH_MSG_TYPE_COPY_SEND, M2O_ID, &body, sizeof(body),
                          MACH_SEND_TIMEOUT, WAIT_MS, 0) == MACH_MSG_SUCCESS;
    }
    mach_task_terminate(t);
    return sent == messages ? 0 : 1;
}

static int local_sender(unsigned id, unsigned messages)
{
    return send_to(-1, id, messages);
}

/* senders local processes (ids 0 ..) and remote ones (mach_test sendto on other nodes, ids
 * after them) send 'messages' each to one port with the default queue limit */
int test_many_to_one(unsigned senders, unsigned remote, unsigned messages)
{
    task_t t = mach_task_self();
    mach_port_name_t p = new_port(t);
    msgbuf_t *m = calloc(1, sizeof(*m));
    unsigned next[M2O_MAX] = { 0 }, total = senders + remote, got = 0, disorder = 0;
    pid_t pids[M2O_MAX];
    int done = 0;

    if (total > M2O_MAX) {
        cli_usage_error("at most %d senders", M2O_MAX);
    }
    netname_check_in(t, M2O_NAME, p);
    for (unsigned i = 0; i < senders; i++) {
        fflush(stdout);
        pids[i] = fork();
        if (pids[i] == 0) {
            _exit(local_sender(i, messages));
        }
    }
    while (got < total * messages && receive(t, p, m, 0, 0) == MACH_MSG_SUCCESS) {
        struct m2o body;
        memcpy(&body, m->body, sizeof(body));
        if (m->h.msgh_id != M2O_ID || body.sender >= total || body.seq != next[body.sender]) {
            disorder++;
            continue;
        }
        next[body.sender]++;
        got++;
    }
    for (unsigned i = 0; i < senders; i++) {
        done += wait_child(pids[i], WAIT_MS) == 0;
    }
    cli_result("many_to_one_all_delivered", got == total * messages && disorder == 0,
               "%u of %u messages, %u out of order", got, total * messages, disorder);
    cli_result("many_to_one_local_senders_done", done == (int)senders, "%d of %u", done, senders);
    cli_result("many_to_one_nothing_left", status_of(t, p).msgcount == 0 &&
               status_of(t, p).seqno == got, "%u queued, seqno %u", status_of(t, p).msgcount,
               status_of(t, p).seqno);
    netname_check_out(t, M2O_NAME, p);
    free(m);
    return 0;
}
