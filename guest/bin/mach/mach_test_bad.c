/* mach_test badargs: every bad argument gets its documented error (docs/boards/norma.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mach_test.h"

struct cmsg {
    mach_msg_header_t h;
    mach_msg_body_t body;
    mach_msg_descriptor_t d[MACH_MSG_DESC_MAX + 1];
};

static mach_msg_return_t send_raw(task_t t, void *msg, size_t size, mach_msg_option_t option)
{
    return mach_msg_task(t, msg, MACH_SEND_MSG | MACH_SEND_TIMEOUT | option,
                         (mach_msg_size_t)size, 0, MACH_PORT_NULL, 0, MACH_PORT_NULL);
}

static void expect(const char *name, kern_return_t got, kern_return_t want)
{
    cli_result(name, got == want, "%s, want %s", E(got), E(want));
}
#define EXPECT(name, got, want) expect(name, got, want)

static void bad_messages(task_t t, mach_port_name_t p)
{
    struct cmsg *m = calloc(1, sizeof(*m));
    mach_port_name_t so = p + 0x3000;
    mach_msg_header_t *h = &m->h;

#define HDR(rd, ld, dest, reply) (*h = (mach_msg_header_t){ .msgh_bits = MACH_MSGH_BITS(rd, ld), \
    .msgh_remote_port = dest, .msgh_local_port = reply })
    HDR(MACH_MSG_TYPE_COPY_SEND, 0, p, 0);
    EXPECT("send_size_zero", send_raw(t, m, 0, 0), MACH_SEND_MSG_TOO_SMALL);
    EXPECT("send_size_below_header", send_raw(t, m, 20, 0), MACH_SEND_MSG_TOO_SMALL);
    EXPECT("send_size_not_x4", send_raw(t, m, 26, 0), MACH_SEND_MSG_TOO_SMALL);
    EXPECT("send_size_above_max", send_raw(t, m, MACH_MSG_SIZE_MAX + 4, 0), MACH_SEND_TOO_LARGE);
    EXPECT("send_null_buffer", send_raw(t, NULL, 24, 0), MACH_SEND_INVALID_DATA);
    EXPECT("unknown_option", send_raw(t, m, 24, 0x8000), MACH_SEND_INVALID_TYPE);
    h->msgh_bits |= 0x40000000;
    EXPECT("unknown_header_bits", send_raw(t, m, 24, 0), MACH_SEND_INVALID_HEADER);
    HDR(MACH_MSG_TYPE_COPY_SEND, 0, p + 0x100000, 0);
    EXPECT("dest_unknown_name", send_raw(t, m, 24, 0), MACH_SEND_INVALID_DEST);
    HDR(MACH_MSG_TYPE_COPY_SEND, 0, MACH_PORT_NULL, 0);
    EXPECT("dest_null", send_raw(t, m, 24, 0), MACH_SEND_INVALID_DEST);
    HDR(0, 0, p, 0);
    EXPECT("dest_no_disposition", send_raw(t, m, 24, 0), MACH_SEND_INVALID_DEST);
    HDR(MACH_MSG_TYPE_MOVE_RECEIVE, 0, p, 0);
    EXPECT("dest_move_receive", send_raw(t, m, 24, 0), MACH_SEND_INVALID_DEST);
    HDR(MACH_MSG_TYPE_MOVE_SEND_ONCE, 0, p, 0);
    EXPECT("dest_send_once_of_send_right", send_raw(t, m, 24, 0), MACH_SEND_INVALID_DEST);
    HDR(MACH_MSG_TYPE_COPY_SEND, MACH_MSG_TYPE_MAKE_SEND, p, p + 0x100000);
    EXPECT("reply_unknown_name", send_raw(t, m, 24, 0), MACH_SEND_INVALID_REPLY);
    HDR(MACH_MSG_TYPE_COPY_SEND, MACH_MSG_TYPE_MOVE_RECEIVE, p, p);
    EXPECT("reply_move_receive", send_raw(t, m, 24, 0), MACH_SEND_INVALID_REPLY);
    HDR(MACH_MSG_TYPE_COPY_SEND, 7, p, p);
    EXPECT("reply_bad_disposition", send_raw(t, m, 24, 0), MACH_SEND_INVALID_REPLY);
    mach_port_insert_right(t, so, p, MACH_MSG_TYPE_MAKE_SEND_ONCE);
    HDR(MACH_MSG_TYPE_MOVE_SEND_ONCE, MACH_MSG_TYPE_MOVE_SEND_ONCE, so, so);
    EXPECT("one_send_once_used_twice", send_raw(t, m, 24, 0), MACH_SEND_INVALID_REPLY);
    mach_port_deallocate(t, so);

    HDR(MACH_MSG_TYPE_COPY_SEND, 0, p, 0);
    h->msgh_bits |= MACH_MSGH_BITS_COMPLEX;
    EXPECT("complex_without_body", send_raw(t, m, 24, 0), MACH_SEND_MSG_TOO_SMALL);
    m->body.msgh_descriptor_count = MACH_MSG_DESC_MAX + 1;
    EXPECT("too_many_descriptors", send_raw(t, m, sizeof(*m), 0), MACH_SEND_TOO_LARGE);
    m->body.msgh_descriptor_count = 2;
    EXPECT("descriptors_past_the_end", send_raw(t, m, 28 + 16, 0), MACH_SEND_MSG_TOO_SMALL);
    m->body.msgh_descriptor_count = 1;
    m->d[0].type.type = 7;
    EXPECT("unknown_descriptor_type", send_raw(t, m, 44, 0), MACH_SEND_INVALID_TYPE);
    m->d[0].port = (mach_msg_port_descriptor_t){ .name = p, .disposition = 15,
                                                 .type = MACH_MSG_PORT_DESCRIPTOR };
    EXPECT("port_bad_disposition", send_raw(t, m, 44, 0), MACH_SEND_INVALID_TYPE);
    m->d[0].port.name = p + 0x100000;
    m->d[0].port.disposition = MACH_MSG_TYPE_COPY_SEND;
    EXPECT("port_unknown_name", send_raw(t, m, 44, 0), MACH_SEND_INVALID_RIGHT);
    m->d[0].out_of_line = (mach_msg_ool_descriptor_t){ .address = 16, .size = 100,
                                                       .type = MACH_MSG_OOL_DESCRIPTOR };
    EXPECT("ool_bad_address", send_raw(t, m, 44, 0), MACH_SEND_INVALID_MEMORY);
    m->d[0].out_of_line.address = ~0ull - 50;
    EXPECT("ool_wraps_around", send_raw(t, m, 44, 0), MACH_SEND_INVALID_MEMORY);
    m->d[0].out_of_line.address = 0xffff888000000000ull;
    EXPECT("ool_kernel_address", send_raw(t, m, 44, 0), MACH_SEND_INVALID_MEMORY);
    m->d[0].out_of_line.size = MACH_MSG_OOL_MAX + 1;
    EXPECT("ool_too_large", send_raw(t, m, 44, 0), MACH_SEND_TOO_LARGE);
    m->d[0].out_of_line.size = 100;
    m->d[0].out_of_line.copy = 5;
    EXPECT("ool_bad_copy_option", send_raw(t, m, 44, 0), MACH_SEND_INVALID_TYPE);
    cli_result("refused_sends_queue_nothing", status_of(t, p).msgcount == 0, "%u queued",
               status_of(t, p).msgcount);
    free(m);
}

static void bad_receives(task_t t, mach_port_name_t p)
{
    msgbuf_t *m = calloc(1, sizeof(*m));
    mach_port_name_t s = p + 0x4000;
    mach_msg_return_t mr;

    mach_port_insert_right(t, s, p, MACH_MSG_TYPE_MAKE_SEND_ONCE);
    mr = receive(t, p + 0x100000, m, MACH_RCV_TIMEOUT, 0);
    EXPECT("receive_unknown_name", mr, MACH_RCV_INVALID_NAME);
    mr = receive(t, s, m, MACH_RCV_TIMEOUT, 0);
    EXPECT("receive_without_receive_right", mr, MACH_RCV_INVALID_NAME);
    mach_port_deallocate(t, s);
    mr = receive(t, p, m, MACH_RCV_TIMEOUT, 0);
    EXPECT("receive_empty_times_out", mr, MACH_RCV_TIMED_OUT);
    send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 1, "data", 4, 0, 0, 0);
    mr = mach_msg_task(t, &m->h, MACH_RCV_MSG | MACH_RCV_LARGE, 0, 8, p, 0, MACH_PORT_NULL);
    EXPECT("receive_buffer_below_header", mr, MACH_RCV_TOO_LARGE);
    mr = mach_msg_task(t, NULL, MACH_RCV_MSG, 0, sizeof(*m), p, 0, MACH_PORT_NULL);
    cli_result("receive_null_buffer", mr == MACH_RCV_INVALID_DATA &&
               status_of(t, p).msgcount == 0, "%s", E(mr));
    mr = mach_msg_task(t, &m->h, MACH_RCV_MSG | 0x8000, 0, sizeof(*m), p, 0, MACH_PORT_NULL);
    EXPECT("receive_unknown_option", mr, MACH_RCV_INVALID_DATA);
    free(m);
}

static void bad_port_calls(task_t t, mach_port_name_t p)
{
    mach_port_name_t n;
    mach_port_urefs_t refs;
    struct mach_port_status st;

    EXPECT("allocate_bad_right", mach_port_allocate(t, 9, &n), KERN_INVALID_VALUE);
    EXPECT("allocate_port_set", mach_port_allocate(t, MACH_PORT_RIGHT_PORT_SET, &n),
           KERN_INVALID_VALUE);
    EXPECT("allocate_send_right", mach_port_allocate(t, MACH_PORT_RIGHT_SEND, &n),
           KERN_INVALID_VALUE);
    EXPECT("deallocate_unknown", mach_port_deallocate(t, p + 0x100000), KERN_INVALID_NAME);
    EXPECT("deallocate_null", mach_port_deallocate(t, MACH_PORT_NULL), KERN_INVALID_NAME);
    EXPECT("mod_refs_bad_right", mach_port_mod_refs(t, p, 9, 1), KERN_INVALID_VALUE);
    EXPECT("mod_refs_right_not_held", mach_port_mod_refs(t, p, MACH_PORT_RIGHT_DEAD_NAME, 1),
           KERN_INVALID_RIGHT);
    EXPECT("insert_bad_type", mach_port_insert_right(t, p, p, MACH_MSG_TYPE_MOVE_RECEIVE),
           KERN_INVALID_VALUE);
    EXPECT("insert_null_name", mach_port_insert_right(t, MACH_PORT_NULL, p,
           MACH_MSG_TYPE_MAKE_SEND), KERN_INVALID_VALUE);
    EXPECT("insert_unknown_poly", mach_port_insert_right(t, p + 0x100001, p + 0x100000,
           MACH_MSG_TYPE_MAKE_SEND_ONCE), KERN_INVALID_NAME);
    EXPECT("get_refs_unknown", mach_port_get_refs(t, p + 0x100000, MACH_PORT_RIGHT_SEND, &refs),
           KERN_INVALID_NAME);
    EXPECT("get_refs_bad_right", mach_port_get_refs(t, p, 9, &refs), KERN_INVALID_VALUE);
    EXPECT("status_unknown", mach_port_get_status(t, p + 0x100000, &st), KERN_INVALID_NAME);
}

static void bad_names(task_t t, mach_port_name_t p, int node)
{
    char raw[sizeof(((struct mach_netname_args *)0)->name)];
    struct mach_netname_args a;
    mach_port_name_t s, dead;
    task_t other = mach_task_create();
    mach_port_name_t q = new_port(other);

    EXPECT("netname_empty", netname_check_in(t, "", p), KERN_INVALID_ARGUMENT);
    memset(raw, 'x', sizeof(raw));
    raw[sizeof(raw) - 1] = 0;
    EXPECT("netname_31_chars_fits", netname_check_in(t, raw, p), NETNAME_SUCCESS);
    netname_check_out(t, raw, p);
    memset(&a, 0, sizeof(a));
    memset(a.name, 'y', sizeof(a.name));            /* no NUL in it */
    a.port = p;
    cli_result("netname_unterminated", ioctl((int)t, MACH_IOC_NETNAME_CHECK_IN, &a) == 0 &&
               a.ret == KERN_INVALID_ARGUMENT, "ret %d", a.ret);
    EXPECT("netname_look_up_no_such_node", netname_look_up(t, 250, "x", &s),
           NETNAME_NO_SUCH_HOST);
    if (node >= 0) {
        EXPECT("netname_look_up_unknown_there", netname_look_up(t, (unsigned)node,
               "no-such-name", &s), NETNAME_NOT_CHECKED_IN);
    }
    EXPECT("netname_look_up_unknown", netname_look_up(t, 0, "no-such-name", &s),
           NETNAME_NOT_CHECKED_IN);
    mach_port_allocate(t, MACH_PORT_RIGHT_DEAD_NAME, &dead);
    EXPECT("netname_check_in_dead_name", netname_check_in(t, "bad_dead", dead),
           NETNAME_INVALID_PORT);
    EXPECT("netname_check_in_unknown", netname_check_in(t, "bad_unknown", p + 0x100000),
           NETNAME_INVALID_PORT);
    netname_check_in(t, "bad_taken", p);
    EXPECT("netname_taken_by_another_port", netname_check_in(other, "bad_taken", q),
           NETNAME_NOT_YOUR_PORT);
    EXPECT("netname_check_out_not_yours", netname_check_out(other, "bad_taken", q),
           NETNAME_NOT_YOUR_PORT);
    EXPECT("netname_check_out", netname_check_out(t, "bad_taken", p), NETNAME_SUCCESS);
    EXPECT("netname_check_out_twice", netname_check_out(t, "bad_taken", p),
           NETNAME_NOT_CHECKED_IN);
    mach_task_terminate(other);
}

/* the device itself: open mode, unknown ioctls, bad pointers, mmap from outside */
static void bad_device(task_t t)
{
    int fd = open(MACH_DEVICE, O_RDONLY);
    void *map;

    cli_result("open_read_only_eacces", fd < 0 && errno == EACCES, "%s",
               fd < 0 ? strerror(errno) : "opened");
    if (fd >= 0) {
        close(fd);
    }
    cli_result("unknown_ioctl_enotty", ioctl((int)t, _IO(MACH_IOC_MAGIC, 0x7f)) < 0 &&
               errno == ENOTTY, "%s", strerror(errno));
    cli_result("ioctl_bad_pointer_efault", ioctl((int)t, MACH_IOC_MSG, (void *)8) < 0 &&
               errno == EFAULT, "%s", strerror(errno));
    map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, (int)t, 0);
    cli_result("mmap_from_outside_einval", map == MAP_FAILED && errno == EINVAL, "%s",
               map == MAP_FAILED ? strerror(errno) : "mapped");
}

/* the name table fills; a message whose right finds no room arrives without it */
static void full_names(void)
{
    task_t x = mach_task_create(), y = mach_task_create();
    mach_port_name_t n = 0, px, sx = 0, py = new_port(y);
    struct cmsg *m = calloc(1, sizeof(*m));
    unsigned count = 1;
    kern_return_t kr = KERN_SUCCESS;
    mach_msg_return_t mr;

    mach_port_allocate(x, MACH_PORT_RIGHT_RECEIVE, &px);
    netname_check_in(x, "bad_full", px);
    netname_look_up(y, 0, "bad_full", &sx);
    netname_check_out(x, "bad_full", px);
    while (count < MACH_PORT_NAMES_MAX + 5 &&
           (kr = mach_port_allocate(x, MACH_PORT_RIGHT_DEAD_NAME, &n)) == KERN_SUCCESS) {
        count++;
    }
    cli_result("name_table_full_no_space", kr == KERN_NO_SPACE && count == MACH_PORT_NAMES_MAX,
               "%s after %u names", E(kr), count);
    m->h = (mach_msg_header_t){ .msgh_remote_port = sx, .msgh_bits = MACH_MSGH_BITS_COMPLEX |
                                MACH_MSGH_BITS(MACH_MSG_TYPE_COPY_SEND, 0) };
    m->body.msgh_descriptor_count = 1;
    m->d[0].port = (mach_msg_port_descriptor_t){ .name = py,
        .disposition = MACH_MSG_TYPE_MAKE_SEND, .type = MACH_MSG_PORT_DESCRIPTOR };
    send_raw(y, m, 44, 0);
    mr = mach_msg_task(x, &m->h, MACH_RCV_MSG, 0, sizeof(*m), px, 0, MACH_PORT_NULL);
    cli_result("no_room_for_a_received_right", mr == (MACH_RCV_BODY_ERROR | MACH_MSG_IPC_SPACE)
               && m->d[0].port.name == MACH_PORT_NULL && status_of(y, py).srights == 1,
               "%s, name %#x, %u send rights", E(mr), m->d[0].port.name,
               status_of(y, py).srights);
    mach_task_terminate(x);
    mach_task_terminate(y);
    free(m);
}

int test_badargs(int node)
{
    task_t t = mach_task_self();
    mach_port_name_t p = t == TASK_NULL ? MACH_PORT_NULL : new_port(t);

    if (p == MACH_PORT_NULL) {
        cli_result("open", 0, "%s", MACH_DEVICE);
        return 1;
    }
    bad_messages(t, p);
    bad_receives(t, p);
    bad_port_calls(t, p);
    bad_names(t, p, node);
    bad_device(t);
    full_names();
    return 0;
}
