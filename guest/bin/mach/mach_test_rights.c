/* mach_test rights: names, rights, user references, and rights that travel in messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mach_test.h"

/* a complex message to dest with one port descriptor (name, disp) and a reply port */
static mach_msg_return_t send_right(task_t task, mach_port_name_t dest, int id,
                                    mach_port_name_t name, mach_msg_type_name_t disp,
                                    mach_port_name_t reply)
{
    struct {
        mach_msg_header_t h;
        mach_msg_body_t body;
        mach_msg_port_descriptor_t port;
    } m = {
        .h = {
            .msgh_bits = MACH_MSGH_BITS(MACH_MSG_TYPE_COPY_SEND,
                                        reply ? MACH_MSG_TYPE_MAKE_SEND_ONCE : 0) |
                         MACH_MSGH_BITS_COMPLEX,
            .msgh_remote_port = dest,
            .msgh_local_port = reply,
            .msgh_id = id,
        },
        .body = { 1 },
        .port = { .name = name, .disposition = (uint8_t)disp,
                  .type = MACH_MSG_PORT_DESCRIPTOR },
    };
    return mach_msg_task(task, &m.h, MACH_SEND_MSG | MACH_SEND_TIMEOUT, sizeof(m), 0,
                         MACH_PORT_NULL, WAIT_MS, MACH_PORT_NULL);
}

/* the port descriptor of a received message: its name and disposition */
static mach_port_name_t got_right(msgbuf_t *m, unsigned *disp)
{
    mach_msg_descriptor_t *d = mach_msg_descriptors(&m->h);

    if (!(m->h.msgh_bits & MACH_MSGH_BITS_COMPLEX) ||
        ((mach_msg_body_t *)m->body)->msgh_descriptor_count != 1 ||
        d->type.type != MACH_MSG_PORT_DESCRIPTOR) {
        *disp = 0;
        return MACH_PORT_NULL;
    }
    *disp = d->port.disposition;
    return d->port.name;
}

/* user references and types within one task */
static void refs(task_t t)
{
    mach_port_name_t p, dead;
    mach_port_urefs_t n = 0;
    kern_return_t kr;

    kr = mach_port_allocate(t, MACH_PORT_RIGHT_RECEIVE, &p);
    cli_result("allocate_receive", kr == KERN_SUCCESS && type_of(t, p) == MACH_PORT_TYPE_RECEIVE
               && MACH_PORT_VALID(p), "%s, type %#x", E(kr), type_of(t, p));
    kr = mach_port_insert_right(t, p, p, MACH_MSG_TYPE_MAKE_SEND);
    mach_port_get_refs(t, p, MACH_PORT_RIGHT_SEND, &n);
    cli_result("make_send_same_name", kr == KERN_SUCCESS && n == 1 &&
               type_of(t, p) == MACH_PORT_TYPE_SEND_RECEIVE, "%s, %u refs, type %#x", E(kr), n,
               type_of(t, p));
    kr = mach_port_mod_refs(t, p, MACH_PORT_RIGHT_SEND, 2);
    mach_port_deallocate(t, p);
    mach_port_get_refs(t, p, MACH_PORT_RIGHT_SEND, &n);
    cli_result("send_urefs_add_and_drop", kr == KERN_SUCCESS && n == 2, "%s, %u refs", E(kr), n);
    kr = mach_port_mod_refs(t, p, MACH_PORT_RIGHT_SEND, -3);
    cli_result("urefs_below_zero_invalid_value", kr == KERN_INVALID_VALUE, "%s", E(kr));
    kr = mach_port_mod_refs(t, p, MACH_PORT_RIGHT_SEND, MACH_PORT_UREFS_MAX);
    cli_result("urefs_overflow", kr == KERN_UREFS_OVERFLOW, "%s", E(kr));
    kr = mach_port_mod_refs(t, p, MACH_PORT_RIGHT_RECEIVE, 1);
    cli_result("receive_refs_only_minus_one", kr == KERN_INVALID_VALUE, "%s", E(kr));
    kr = mach_port_insert_right(t, p + 4, p, MACH_MSG_TYPE_MAKE_SEND);
    cli_result("send_rights_one_name_per_port", kr == KERN_RIGHT_EXISTS || kr == KERN_NAME_EXISTS,
               "%s", E(kr));
    mach_port_mod_refs(t, p, MACH_PORT_RIGHT_SEND, -2);
    cli_result("last_send_ref_keeps_receive", type_of(t, p) == MACH_PORT_TYPE_RECEIVE,
               "type %#x", type_of(t, p));
    kr = mach_port_deallocate(t, p);
    cli_result("deallocate_receive_alone_invalid_right", kr == KERN_INVALID_RIGHT, "%s", E(kr));
    kr = mach_port_mod_refs(t, p, MACH_PORT_RIGHT_RECEIVE, -1);
    cli_result("destroy_receive", kr == KERN_SUCCESS && type_of(t, p) == 0, "%s, type %#x",
               E(kr), type_of(t, p));

    kr = mach_port_allocate(t, MACH_PORT_RIGHT_DEAD_NAME, &dead);
    mach_port_mod_refs(t, dead, MACH_PORT_RIGHT_DEAD_NAME, 1);
    mach_port_get_refs(t, dead, MACH_PORT_RIGHT_DEAD_NAME, &n);
    cli_result("dead_name_refs", kr == KERN_SUCCESS && type_of(t, dead) ==
               MACH_PORT_TYPE_DEAD_NAME && n == 2, "%s, %u refs", E(kr), n);
    cli_result("send_to_dead_name_invalid_dest",
               send_data(t, dead, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, 0, 0, 0) ==
               MACH_SEND_INVALID_DEST, "sent");
    mach_port_mod_refs(t, dead, MACH_PORT_RIGHT_DEAD_NAME, -2);
    cli_result("dead_name_gone", type_of(t, dead) == 0, "type %#x", type_of(t, dead));
}

/* a send-once right: one send, then it is gone */
static void send_once(task_t t)
{
    mach_port_name_t p = new_port(t), so = p + 0x1000;
    kern_return_t kr = mach_port_insert_right(t, so, p, MACH_MSG_TYPE_MAKE_SEND_ONCE);
    mach_msg_return_t mr;
    msgbuf_t *m = calloc(1, sizeof(*m));

    cli_result("make_send_once_own_name", kr == KERN_SUCCESS &&
               type_of(t, so) == MACH_PORT_TYPE_SEND_ONCE && status_of(t, p).sorights == 1,
               "%s, type %#x", E(kr), type_of(t, so));
    mr = send_data(t, so, MACH_MSG_TYPE_MOVE_SEND_ONCE, 7, "once", 4, 0, 0, 0);
    cli_result("send_once_sends", mr == MACH_MSG_SUCCESS && type_of(t, so) == 0,
               "%s, type %#x after", E(mr), type_of(t, so));
    mr = send_data(t, so, MACH_MSG_TYPE_MOVE_SEND_ONCE, 7, "once", 4, 0, 0, 0);
    cli_result("send_once_used_up", mr == MACH_SEND_INVALID_DEST, "%s", E(mr));
    mr = receive(t, p, m, 0, 0);
    cli_result("send_once_arrives_as_send_once", mr == MACH_MSG_SUCCESS &&
               MACH_MSGH_BITS_LOCAL(m->h.msgh_bits) == MACH_MSG_TYPE_PORT_SEND_ONCE &&
               m->h.msgh_local_port == p && status_of(t, p).sorights == 0,
               "%s, bits %#x", E(mr), m->h.msgh_bits);
    mach_port_mod_refs(t, p, MACH_PORT_RIGHT_RECEIVE, -1);
    mach_port_deallocate(t, p);
    free(m);
}

/* rights moved and copied between two tasks of this node */
static void between_tasks(task_t a)
{
    task_t b = mach_task_create();
    mach_port_name_t pb = new_port(b), sb = MACH_PORT_NULL, p2, p3, got;
    mach_port_urefs_t n = 0;
    msgbuf_t *m = calloc(1, sizeof(*m));
    mach_msg_return_t mr;
    unsigned disp;

    netname_check_in(b, "rights_b", pb);
    netname_look_up(a, 0, "rights_b", &sb);
    mach_port_deallocate(b, pb);
    netname_check_out(b, "rights_b", pb);

    /* the receive right has one holder: once moved, the sender has only its send right */
    p2 = new_port(a);
    mr = send_right(a, sb, 1, p2, MACH_MSG_TYPE_MOVE_RECEIVE, MACH_PORT_NULL);
    cli_result("move_receive_leaves_send", mr == MACH_MSG_SUCCESS &&
               type_of(a, p2) == MACH_PORT_TYPE_SEND, "%s, type %#x", E(mr), type_of(a, p2));
    mr = receive(a, p2, m, MACH_RCV_TIMEOUT, 0);
    cli_result("moved_receive_not_receivable", mr == MACH_RCV_INVALID_NAME, "%s", E(mr));
    mr = receive(b, pb, m, 0, 0);
    got = got_right(m, &disp);
    cli_result("receive_right_arrives", mr == MACH_MSG_SUCCESS &&
               disp == MACH_MSG_TYPE_PORT_RECEIVE && type_of(b, got) == MACH_PORT_TYPE_RECEIVE,
               "%s, disposition %u, type %#x", E(mr), disp, type_of(b, got));
    send_data(a, p2, MACH_MSG_TYPE_COPY_SEND, 42, "to b", 4, MACH_SEND_TIMEOUT, WAIT_MS, 0);
    mr = receive(b, got, m, 0, 0);
    cli_result("new_holder_receives", mr == MACH_MSG_SUCCESS && m->h.msgh_id == 42,
               "%s, id %d", E(mr), m->h.msgh_id);

    /* COPY_SEND keeps the sender's reference, MOVE_SEND takes one */
    p3 = new_port(a);
    mach_port_mod_refs(a, p3, MACH_PORT_RIGHT_SEND, 1);
    send_right(a, sb, 2, p3, MACH_MSG_TYPE_COPY_SEND, MACH_PORT_NULL);
    mach_port_get_refs(a, p3, MACH_PORT_RIGHT_SEND, &n);
    cli_result("copy_send_keeps_ref", n == 2, "%u refs", n);
    send_right(a, sb, 3, p3, MACH_MSG_TYPE_MOVE_SEND, MACH_PORT_NULL);
    mach_port_get_refs(a, p3, MACH_PORT_RIGHT_SEND, &n);
    cli_result("move_send_takes_ref", n == 1, "%u refs", n);
    receive(b, pb, m, 0, 0);
    got = got_right(m, &disp);
    mr = receive(b, pb, m, 0, 0);
    cli_result("send_rights_merge_under_one_name", mr == MACH_MSG_SUCCESS &&
               got_right(m, &disp) == got && mach_port_get_refs(b, got, MACH_PORT_RIGHT_SEND,
               &n) == KERN_SUCCESS && n == 2, "%s, %u refs", E(mr), n);
    mr = send_data(b, got, MACH_MSG_TYPE_COPY_SEND, 43, NULL, 0, MACH_SEND_TIMEOUT, WAIT_MS, 0);
    cli_result("received_send_right_sends", mr == MACH_MSG_SUCCESS &&
               receive(a, p3, m, 0, 0) == MACH_MSG_SUCCESS && m->h.msgh_id == 43, "%s", E(mr));

    /* a receive right may not travel in its own queue */
    mr = send_right(a, p3, 4, p3, MACH_MSG_TYPE_MOVE_RECEIVE, MACH_PORT_NULL);
    cli_result("receive_right_to_itself_refused", mr == MACH_SEND_INVALID_RIGHT &&
               type_of(a, p3) == MACH_PORT_TYPE_SEND_RECEIVE, "%s", E(mr));
    /* a refused message takes nothing: the move of the send right did not happen */
    mach_port_get_refs(a, p3, MACH_PORT_RIGHT_SEND, &n);
    mr = send_right(a, sb, 5, p3, MACH_MSG_TYPE_MOVE_SEND, p3 + 0x77777);
    cli_result("refused_message_takes_nothing", mr == MACH_SEND_INVALID_REPLY &&
               mach_port_get_refs(a, p3, MACH_PORT_RIGHT_SEND, &n) == KERN_SUCCESS && n == 1,
               "%s, %u refs", E(mr), n);

    /* the port dies: the other task's send right becomes a dead name */
    mach_port_mod_refs(b, got, MACH_PORT_RIGHT_SEND, -2);
    mach_port_mod_refs(a, p3, MACH_PORT_RIGHT_RECEIVE, -1);
    cli_result("port_death_leaves_dead_name_here", type_of(a, p3) == MACH_PORT_TYPE_DEAD_NAME,
               "type %#x", type_of(a, p3));
    mach_task_terminate(b);
    cli_result("task_death_leaves_dead_name", type_of(a, sb) == MACH_PORT_TYPE_DEAD_NAME &&
               send_data(a, sb, MACH_MSG_TYPE_COPY_SEND, 1, NULL, 0, 0, 0, 0) ==
               MACH_SEND_INVALID_DEST, "type %#x", type_of(a, sb));
    free(m);
}

/* rights through the echo server (on another node with --node): a send right moved there
 * and used there; a receive right refused if the server is elsewhere */
static void through_server(task_t t, int node)
{
    pid_t pid;
    mach_port_name_t echo = find_echo(t, node, &pid), p = new_port(t), back;
    msgbuf_t *m = calloc(1, sizeof(*m));
    mach_msg_return_t mr;
    unsigned disp, here = 0, nodes = 0;

    mach_host_node(&here, &nodes);
    if (echo == MACH_PORT_NULL) {
        cli_result("echo_server", 0, "none");
        return;
    }
    mr = send_right(t, echo, ID_ECHO, p, MACH_MSG_TYPE_MAKE_SEND, p);
    if (mr == MACH_MSG_SUCCESS) {
        mr = receive(t, p, m, 0, 0);
    }
    back = got_right(m, &disp);
    cli_result("send_right_round_trip", mr == MACH_MSG_SUCCESS && m->h.msgh_id == ID_ECHO + 100
               && back == p && disp == MACH_MSG_TYPE_PORT_SEND, "%s, got %#x (port %#x)",
               E(mr), back, p);
    mr = send_right(t, echo, ID_CALLBACK, p, MACH_MSG_TYPE_MAKE_SEND, MACH_PORT_NULL);
    if (mr == MACH_MSG_SUCCESS) {
        mr = receive(t, p, m, 0, 0);
    }
    cli_result("moved_send_right_used_there", mr == MACH_MSG_SUCCESS &&
               m->h.msgh_id == ID_CALLED_BACK && !memcmp(m->body, "back", 4), "%s, id %d",
               E(mr), m->h.msgh_id);
    mr = send_right(t, echo, ID_CALLBACK, p, MACH_MSG_TYPE_MAKE_SEND_ONCE, MACH_PORT_NULL);
    if (mr == MACH_MSG_SUCCESS) {
        mr = receive(t, p, m, 0, 0);
    }
    cli_result("moved_send_once_used_there", mr == MACH_MSG_SUCCESS &&
               m->h.msgh_id == ID_CALLED_BACK && status_of(t, p).sorights == 0,
               "%s, id %d, %u send-once rights left", E(mr), m->h.msgh_id,
               status_of(t, p).sorights);
    if (node >= 0 && (unsigned)node != here) {
        mach_port_name_t r = new_port(t);
        mr = send_right(t, echo, ID_ECHO, r, MACH_MSG_TYPE_MOVE_RECEIVE, MACH_PORT_NULL);
        cli_result("receive_right_stays_on_its_node", mr == MACH_SEND_INVALID_RIGHT &&
                   type_of(t, r) == MACH_PORT_TYPE_SEND_RECEIVE, "%s", E(mr));
    }
    stop_echo(t, echo, pid);
    free(m);
}

int test_rights(int node)
{
    task_t t = mach_task_self();

    if (t == TASK_NULL) {
        cli_result("open", 0, "%s", MACH_DEVICE);
        return 1;
    }
    refs(t);
    send_once(t);
    between_tasks(t);
    through_server(t, node);
    return 0;
}
