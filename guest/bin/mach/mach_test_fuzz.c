/*
 * mach_test fuzz: random calls with random arguments (mostly plausible, some garbage) from
 * a few tasks, none of which may crash or hang the kernel; afterwards the tasks die and
 * a clean round trip must still work. Deterministic: the seed decides everything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mach_test.h"

#define TASKS   3
#define POOL    64

static uint64_t rng;
static unsigned sent, received, port_calls_ok;   /* what the calls did: not all refused */

static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (uint32_t)(rng % n) : 0;
}

static task_t tasks[TASKS];
static mach_port_name_t pools[TASKS][POOL]; /* names each task was given */
static mach_port_name_t *pool;              /* the current task's */
static unsigned char *data;             /* OOL source */
#define DATA_SIZE (64u << 10)

static mach_port_name_t any_name(void)
{
    switch (rnd(16)) {
    case 0:
        return MACH_PORT_NULL;
    case 1:
        return MACH_PORT_DEAD;
    case 2:
        return rnd(0xffffffffu);
    default:
        return pool[rnd(POOL)];
    }
}

static void remember(mach_port_name_t name)
{
    if (MACH_PORT_VALID(name)) {
        pool[rnd(POOL)] = name;
    }
}

/* mostly what a sender would use, sometimes anything */
static uint8_t any_disposition(void)
{
    static const uint8_t likely[] = { MACH_MSG_TYPE_COPY_SEND, MACH_MSG_TYPE_COPY_SEND,
                                      MACH_MSG_TYPE_MAKE_SEND, MACH_MSG_TYPE_MAKE_SEND_ONCE,
                                      MACH_MSG_TYPE_MOVE_SEND, MACH_MSG_TYPE_MOVE_SEND_ONCE,
                                      MACH_MSG_TYPE_MOVE_RECEIVE };
    return rnd(10) ? likely[rnd(sizeof(likely))] : (uint8_t)rnd(256);
}

/* a disposition the name's right allows, most of the time */
static uint8_t fitting_disposition(task_t t, mach_port_name_t name)
{
    mach_port_type_t type = 0;

    if (rnd(5) == 0 || mach_port_type(t, name, &type) != KERN_SUCCESS) {
        return any_disposition();
    }
    if (type & MACH_PORT_TYPE_RECEIVE) {
        return rnd(3) ? MACH_MSG_TYPE_MAKE_SEND : MACH_MSG_TYPE_MAKE_SEND_ONCE;
    }
    if (type & MACH_PORT_TYPE_SEND_ONCE) {
        return MACH_MSG_TYPE_MOVE_SEND_ONCE;
    }
    return rnd(4) ? MACH_MSG_TYPE_COPY_SEND : MACH_MSG_TYPE_MOVE_SEND;
}

static uint64_t any_address(void)
{
    switch (rnd(12)) {
    case 0:
        return 0;
    case 1:
        return rnd(0xffffffffu);
    case 2:
        return 0xffff888000000000ull + rnd(1u << 30);     /* the kernel's */
    default:
        return (uintptr_t)data + rnd(4096);
    }
}

static uint32_t any_size(void)
{
    switch (rnd(16)) {
    case 0:
        return rnd(0xffffffffu);
    case 1:
        return MACH_MSG_OOL_MAX + rnd(2);
    default:
        return rnd(DATA_SIZE - 4096);
    }
}

static void fuzz_send(task_t t, msgbuf_t *m)
{
    mach_msg_body_t *body = (mach_msg_body_t *)m->body;
    mach_msg_descriptor_t *d = mach_msg_descriptors(&m->h);
    unsigned n = rnd(4), size;
    mach_msg_option_t option = MACH_SEND_MSG | MACH_SEND_TIMEOUT;

    memset(m, 0, sizeof(m->h) + 256);
    m->h.msgh_remote_port = any_name();
    m->h.msgh_local_port = rnd(2) ? MACH_PORT_NULL : any_name();
    m->h.msgh_bits = MACH_MSGH_BITS(fitting_disposition(t, m->h.msgh_remote_port),
                                    fitting_disposition(t, m->h.msgh_local_port));
    m->h.msgh_id = (int)rnd(100);
    if (rnd(3)) {
        m->h.msgh_bits |= MACH_MSGH_BITS_COMPLEX;
        body->msgh_descriptor_count = rnd(30) ? n : rnd(0xffffffffu);
        for (unsigned i = 0; i < n; i++) {
            if (rnd(2)) {
                mach_port_name_t name = rnd(3) ? any_name() : MACH_PORT_NULL;
                d[i].port = (mach_msg_port_descriptor_t){ .name = name,
                    .disposition = fitting_disposition(t, name),
                    .type = MACH_MSG_PORT_DESCRIPTOR };
            } else {
                d[i].out_of_line = (mach_msg_ool_descriptor_t){ .address = any_address(),
                    .size = any_size(), .copy = (uint8_t)(rnd(10) ? 1 : rnd(4)),
                    .type = (uint8_t)(rnd(20) ? MACH_MSG_OOL_DESCRIPTOR : rnd(256)) };
            }
        }
    }
    if (rnd(50) == 0) {
        m->h.msgh_bits |= 1u << rnd(32);
    }
    size = sizeof(m->h) + (m->h.msgh_bits & MACH_MSGH_BITS_COMPLEX ? 4 + 16 * n : 0) +
           4 * rnd(64);
    if (rnd(30) == 0) {
        size = rnd(MACH_MSG_SIZE_MAX + 64);
    }
    if (rnd(4) == 0) {
        option |= MACH_SEND_NOTIFY;
    }
    mach_msg_return_t mr = mach_msg_task(t, &m->h, option, size, 0, 0, 0, any_name());
    sent += mr == MACH_MSG_SUCCESS || mr == MACH_SEND_WILL_NOTIFY;
}

/* receive what there is; remember its names, unmap its OOL */
static void fuzz_receive(task_t t, msgbuf_t *m)
{
    mach_msg_option_t option = MACH_RCV_MSG | MACH_RCV_TIMEOUT | (rnd(2) ? MACH_RCV_LARGE : 0);
    mach_msg_size_t size = rnd(8) ? sizeof(*m) : rnd(sizeof(*m));
    mach_msg_return_t mr = mach_msg_task(t, &m->h, option, 0, size, any_name(), 0, 0);

    if ((mr != MACH_MSG_SUCCESS && (mr & ~MACH_MSG_MASK) != MACH_RCV_BODY_ERROR) ||
        size < sizeof(m->h)) {
        return;
    }
    received++;
    remember(m->h.msgh_remote_port);
    if (m->h.msgh_bits & MACH_MSGH_BITS_COMPLEX) {
        mach_msg_descriptor_t *d = mach_msg_descriptors(&m->h);
        unsigned n = ((mach_msg_body_t *)m->body)->msgh_descriptor_count;
        for (unsigned i = 0; i < n && i < MACH_MSG_DESC_MAX; i++) {
            if (d[i].type.type == MACH_MSG_PORT_DESCRIPTOR) {
                remember(d[i].port.name);
            } else if (d[i].out_of_line.address) {
                munmap((void *)(uintptr_t)d[i].out_of_line.address,
                       (d[i].out_of_line.size + MACH_MSG_OOL_PAGE - 1) / MACH_MSG_OOL_PAGE *
                       MACH_MSG_OOL_PAGE);
            }
        }
    }
}

static void fuzz_port_call(task_t t, unsigned node)
{
    static const char *const names[] = { "fz_a", "fz_b", "fz_c" };
    mach_port_name_t name = MACH_PORT_NULL;
    mach_port_urefs_t refs;
    mach_port_type_t type;
    struct mach_port_status st;

    switch (rnd(10)) {
    case 0:
    case 1:
        if (mach_port_allocate(t, rnd(4) ? MACH_PORT_RIGHT_RECEIVE : rnd(6), &name) ==
            KERN_SUCCESS) {
            remember(name);
            port_calls_ok++;
        }
        break;
    case 2:
        mach_port_deallocate(t, any_name());
        break;
    case 3:
        mach_port_mod_refs(t, any_name(), rnd(6), (int)rnd(5) - 2);
        break;
    case 4:
        name = any_name();
        if (rnd(2)) {
            mach_port_insert_right(t, name, name, MACH_MSG_TYPE_MAKE_SEND);
        } else if (mach_port_insert_right(t, rnd(2) ? name : rnd(0xffffffffu), any_name(),
                                          15 + rnd(8)) == KERN_SUCCESS) {
            remember(name);
        }
        break;
    case 5:
        mach_port_set_qlimit(t, any_name(), rnd(20));
        break;
    case 6:
        mach_port_get_refs(t, any_name(), rnd(6), &refs);
        mach_port_type(t, any_name(), &type);
        mach_port_get_status(t, any_name(), &st);
        break;
    case 7:
        netname_check_in(t, names[rnd(3)], any_name());
        break;
    case 8:
        if (netname_look_up(t, rnd(4) ? node : rnd(300), names[rnd(3)], &name) ==
            NETNAME_SUCCESS) {
            remember(name);
        }
        break;
    default:
        netname_check_out(t, names[rnd(3)], any_name());
        break;
    }
}

int test_fuzz(int node, unsigned rounds, unsigned seed)
{
    msgbuf_t *m = calloc(1, sizeof(*m));
    unsigned here = 0, nodes = 0, look = 0;
    pid_t pid;
    mach_port_name_t echo = MACH_PORT_NULL, p;
    int ok;

    rng = 0x9e3779b97f4a7c15ull ^ seed;
    data = malloc(DATA_SIZE);
    fill_pattern(data, DATA_SIZE, seed);
    mach_host_node(&here, &nodes);
    look = node >= 0 ? (unsigned)node : here;
    for (int i = 0; i < TASKS; i++) {
        tasks[i] = mach_task_create();
    }
    pool = pools[0];
    if (node >= 0) {
        echo = find_echo(tasks[0], node, &pid);     /* a port on another node in the pool */
        remember(echo);
    }
    for (unsigned r = 0; r < rounds; r++) {
        unsigned ti = rnd(TASKS);
        task_t t = tasks[ti];
        pool = pools[ti];
        switch (rnd(4)) {
        case 0:
            fuzz_send(t, m);
            break;
        case 1:
            fuzz_receive(t, m);
            break;
        default:
            fuzz_port_call(t, look);
            break;
        }
        if (rnd(500) == 0) {            /* a task dies, another is born */
            mach_task_terminate(tasks[ti]);
            tasks[ti] = mach_task_create();
            memset(pools[ti], 0, sizeof(pools[ti]));
        }
    }
    for (int i = 0; i < TASKS; i++) {
        mach_task_terminate(tasks[i]);
    }
    /* afterwards: a clean task still works */
    task_t t = mach_task_create();
    p = new_port(t);
    send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 5, "after", 5, MACH_SEND_TIMEOUT, 0, 0);
    ok = receive(t, p, m, MACH_RCV_TIMEOUT, 0) == MACH_MSG_SUCCESS && m->h.msgh_id == 5 &&
         !memcmp(m->body, "after", 5);
    printf("fuzz: %u rounds, seed %u: %u messages sent, %u received, %u ports allocated\n",
           rounds, seed, sent, received, port_calls_ok);
    cli_result("fuzz_then_clean_round_trip", ok, "%u rounds, seed %u", rounds, seed);
    cli_result("fuzz_exercised", sent >= rounds / 100 && received >= rounds / 200,
               "only %u sent and %u received", sent, received);
    mach_task_terminate(t);
    free(data);
    free(m);
    return 0;
}
