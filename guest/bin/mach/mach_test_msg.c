/* mach_test inline, ool: message content through the echo server, and receive sizes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mach_test.h"

#define OOL_PAGE MACH_MSG_OOL_PAGE

/* send m (size bytes) to echo with reply port p (MAKE_SEND_ONCE) */
static mach_msg_return_t to_echo(task_t t, mach_port_name_t echo, mach_port_name_t p,
                                 msgbuf_t *m, size_t size)
{
    m->h.msgh_bits = (m->h.msgh_bits & MACH_MSGH_BITS_COMPLEX) |
                     MACH_MSGH_BITS(MACH_MSG_TYPE_COPY_SEND, MACH_MSG_TYPE_MAKE_SEND_ONCE);
    m->h.msgh_remote_port = echo;
    m->h.msgh_local_port = p;
    m->h.msgh_id = ID_ECHO;
    return mach_msg_task(t, &m->h, MACH_SEND_MSG | MACH_SEND_TIMEOUT, (mach_msg_size_t)size, 0,
                         MACH_PORT_NULL, WAIT_MS, MACH_PORT_NULL);
}

/* ... and receive the echo in r */
static mach_msg_return_t round_trip(task_t t, mach_port_name_t echo, mach_port_name_t p,
                                    msgbuf_t *m, size_t size, msgbuf_t *r)
{
    mach_msg_return_t mr = to_echo(t, echo, p, m, size);

    return mr ? mr : receive(t, p, r, 0, 0);
}

/* The breakdown stamps are off by default (the module option stamps): on, in whichever
 * of norma.ko and norma_loop.ko (the mirror) is loaded. */
static void stamps_on(void)
{
    static const char *const modules[] = { "norma", "norma_loop" };

    for (size_t i = 0; i < sizeof(modules) / sizeof(modules[0]); i++) {
        char path[64];
        FILE *f;

        snprintf(path, sizeof(path), "/sys/module/%s/parameters/stamps", modules[i]);
        f = fopen(path, "w");
        if (f) {
            fputs("1\n", f);
            fclose(f);
        }
    }
}

/* the node's breakdown stamps after a round trip: the last send is the echo's reply, the
 * last receive this task's of it; in order, and the one carries the other's start */
static void breakdown(task_t t, mach_port_name_t echo, mach_port_name_t p, msgbuf_t *m,
                      msgbuf_t *r)
{
    struct mach_times a = { 0 };
    mach_msg_return_t mr;

    stamps_on();
    memset(m, 0, sizeof(*m));
    mr = round_trip(t, echo, p, m, sizeof(m->h) + 4, r);
    mach_msg_times(&a);
    cli_result("breakdown_stamps_in_order", mr == MACH_MSG_SUCCESS && a.send_begin_ns &&
               a.send_begin_ns <= a.send_copied_ns && a.send_copied_ns <= a.send_queued_ns &&
               a.rcv_sent_ns == a.send_begin_ns && a.rcv_queued_ns <= a.rcv_taken_ns &&
               a.rcv_taken_ns <= a.rcv_done_ns && a.send_begin_ns <= a.rcv_queued_ns &&
               a.send_remote == a.rcv_remote && (!a.rcv_remote || a.rcv_arrived_ns),
               "%s: send %llu %llu %llu (remote %u), receive %llu %llu %llu %llu %llu (remote %u)",
               E(mr), (unsigned long long)a.send_begin_ns, (unsigned long long)a.send_copied_ns,
               (unsigned long long)a.send_queued_ns, a.send_remote,
               (unsigned long long)a.rcv_sent_ns, (unsigned long long)a.rcv_arrived_ns,
               (unsigned long long)a.rcv_queued_ns, (unsigned long long)a.rcv_taken_ns,
               (unsigned long long)a.rcv_done_ns, a.rcv_remote);
}

static void inline_sizes(task_t t, mach_port_name_t echo)
{
    static const unsigned sizes[] = { 0, 4, 8, 64, 380, 384, 388, 1024, 2048, 4096,
                                      MACH_MSG_SIZE_MAX - sizeof(mach_msg_header_t) };
    msgbuf_t *m = calloc(1, sizeof(*m)), *r = calloc(1, sizeof(*r));
    mach_port_name_t p = new_port(t);
    char name[64];

    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        unsigned n = sizes[i];
        mach_msg_return_t mr;

        memset(m, 0, sizeof(*m));
        memset(r, 0xee, sizeof(*r));
        fill_pattern(m->body, n, n);
        mr = round_trip(t, echo, p, m, sizeof(m->h) + n, r);
        snprintf(name, sizeof(name), "inline_%u_bytes", n);
        cli_result(name, mr == MACH_MSG_SUCCESS && r->h.msgh_size == sizeof(r->h) + n &&
                   r->h.msgh_id == ID_ECHO + 100 && check_pattern(r->body, n, n) < 0 &&
                   r->h.msgh_local_port == p && r->h.msgh_remote_port == MACH_PORT_NULL &&
                   r->h.msgh_bits == MACH_MSGH_BITS(0, MACH_MSG_TYPE_PORT_SEND_ONCE) &&
                   r->h.msgh_seqno == i, "%s: size %u id %d bits %#x seqno %u, bad byte %ld",
                   E(mr), r->h.msgh_size, r->h.msgh_id, r->h.msgh_bits, r->h.msgh_seqno,
                   check_pattern(r->body, n, n));
    }
    cli_result("reply_send_once_used_up", status_of(t, p).sorights == 0, "%u left",
               status_of(t, p).sorights);
    breakdown(t, echo, p, m, r);
    mach_port_mod_refs(t, p, MACH_PORT_RIGHT_RECEIVE, -1);
    mach_port_deallocate(t, p);
    free(m);
    free(r);
}

/* a message larger than the receive buffer: left queued with MACH_RCV_LARGE, else gone */
static void too_large(task_t t)
{
    msgbuf_t *m = calloc(1, sizeof(*m));
    mach_port_name_t p = new_port(t);
    unsigned char data[2048];
    mach_msg_return_t mr;

    fill_pattern(data, sizeof(data), 5);
    send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 5, data, sizeof(data), 0, 0, 0);
    mr = mach_msg_task(t, &m->h, MACH_RCV_MSG | MACH_RCV_LARGE | MACH_RCV_TIMEOUT, 0, 1024, p,
                       0, MACH_PORT_NULL);
    cli_result("rcv_large_leaves_it_queued", mr == MACH_RCV_TOO_LARGE &&
               m->h.msgh_size == sizeof(m->h) + sizeof(data) && status_of(t, p).msgcount == 1,
               "%s, size %u, %u queued", E(mr), m->h.msgh_size, status_of(t, p).msgcount);
    mr = receive(t, p, m, 0, 0);
    cli_result("rcv_large_then_received", mr == MACH_MSG_SUCCESS &&
               check_pattern(m->body, sizeof(data), 5) < 0, "%s", E(mr));
    send_data(t, p, MACH_MSG_TYPE_COPY_SEND, 6, data, sizeof(data), 0, 0, 0);
    mr = mach_msg_task(t, &m->h, MACH_RCV_MSG | MACH_RCV_TIMEOUT, 0, 1024, p, 0,
                       MACH_PORT_NULL);
    cli_result("rcv_too_large_destroys_it", mr == MACH_RCV_TOO_LARGE &&
               status_of(t, p).msgcount == 0 && status_of(t, p).seqno == 2,
               "%s, %u queued", E(mr), status_of(t, p).msgcount);
    mach_port_mod_refs(t, p, MACH_PORT_RIGHT_RECEIVE, -1);
    mach_port_deallocate(t, p);
    free(m);
}

int test_inline(int node)
{
    task_t t = mach_task_self();
    pid_t pid;
    mach_port_name_t echo = t == TASK_NULL ? MACH_PORT_NULL : find_echo(t, node, &pid);

    if (echo == MACH_PORT_NULL) {
        cli_result("echo_server", 0, "none");
        return 1;
    }
    inline_sizes(t, echo);
    too_large(t);
    stop_echo(t, echo, pid);
    return 0;
}

/* ---- OOL -------------------------------------------------------------------------- */

struct ool_msg {
    mach_msg_header_t h;
    mach_msg_body_t body;
    mach_msg_descriptor_t d[3];
    uint32_t tail;                  /* inline data after the descriptors */
};

static int mapped(const void *p, size_t len)
{
    return msync((void *)((uintptr_t)p & ~(uintptr_t)4095), len, MS_ASYNC) == 0;
}

/* the OOL region of a received descriptor holds the pattern, then zeroes to its page end */
static int region_ok(const mach_msg_ool_descriptor_t *d, size_t size, unsigned seed,
                     char *why, size_t whylen)
{
    const unsigned char *p = (const unsigned char *)(uintptr_t)d->address;
    size_t end = (size + OOL_PAGE - 1) / OOL_PAGE * OOL_PAGE;
    long bad;

    if (d->type != MACH_MSG_OOL_DESCRIPTOR || d->size != size || (size && !p) ||
        (d->address & 4095)) {
        snprintf(why, whylen, "type %u size %u address %#llx", d->type, d->size,
                 (unsigned long long)d->address);
        return 0;
    }
    bad = check_pattern(p, size, seed);
    for (size_t i = size; bad < 0 && i < end; i++) {
        if (p[i]) {
            bad = (long)i;
        }
    }
    snprintf(why, whylen, "bad byte at %ld of %zu", bad, size);
    return bad < 0;
}

static void ool_sizes(task_t t, mach_port_name_t echo, mach_port_name_t p)
{
    static const unsigned sizes[] = { 1, 4096, OOL_PAGE, OOL_PAGE + 1, 3 * OOL_PAGE - 5,
                                      8 * OOL_PAGE, 9 * OOL_PAGE, 25 * OOL_PAGE };
    struct ool_msg *m = calloc(1, sizeof(msgbuf_t));
    msgbuf_t *r = calloc(1, sizeof(*r));
    char name[64], why[128];

    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        /* the data starts inside a page: pieces are not page-aligned on the way */
        unsigned char *buf = malloc(n + 100), *data = buf + 100;
        struct ool_msg *got = (struct ool_msg *)r;
        mach_msg_return_t mr;
        int ok;

        fill_pattern(data, n, i + 1);
        memset(m, 0, sizeof(*m));
        m->h.msgh_bits = MACH_MSGH_BITS_COMPLEX;
        m->body.msgh_descriptor_count = 1;
        m->d[0].out_of_line = (mach_msg_ool_descriptor_t){
            .address = (uintptr_t)data, .size = (uint32_t)n, .copy = MACH_MSG_VIRTUAL_COPY,
            .type = MACH_MSG_OOL_DESCRIPTOR };
        mr = round_trip(t, echo, p, (msgbuf_t *)m, offsetof(struct ool_msg, d[1]), r);
        ok = mr == MACH_MSG_SUCCESS && got->body.msgh_descriptor_count == 1 &&
             region_ok(&got->d[0].out_of_line, n, i + 1, why, sizeof(why));
        snprintf(name, sizeof(name), "ool_%zu_bytes", n);
        cli_result(name, ok, "%s: %s", E(mr), mr ? "" : why);
        if (ok) {
            unsigned char *q = (unsigned char *)(uintptr_t)got->d[0].out_of_line.address;
            q[0] ^= 1;                                  /* the receiver's to write */
            munmap(q, (n + OOL_PAGE - 1) / OOL_PAGE * OOL_PAGE);
        }
        free(buf);
    }
    free(m);
    free(r);
}

/* two regions, a port right and inline data in one message; the sender's deallocate */
static void ool_mixed(task_t t, mach_port_name_t echo, mach_port_name_t p)
{
    struct ool_msg *m = calloc(1, sizeof(msgbuf_t));
    msgbuf_t *r = calloc(1, sizeof(*r));
    struct ool_msg *got = (struct ool_msg *)r;
    size_t n1 = 5000, n2 = 2 * OOL_PAGE + 7;
    unsigned char *a = mmap(NULL, n1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *b = malloc(n2);
    mach_msg_return_t mr;
    char why1[128] = "", why2[128] = "";
    int ok;

    fill_pattern(a, n1, 11);
    fill_pattern(b, n2, 12);
    m->h.msgh_bits = MACH_MSGH_BITS_COMPLEX;
    m->body.msgh_descriptor_count = 3;
    m->d[0].out_of_line = (mach_msg_ool_descriptor_t){ .address = (uintptr_t)a, .size = n1,
        .deallocate = 1, .type = MACH_MSG_OOL_DESCRIPTOR };
    m->d[1].port = (mach_msg_port_descriptor_t){ .name = p,
        .disposition = MACH_MSG_TYPE_MAKE_SEND, .type = MACH_MSG_PORT_DESCRIPTOR };
    m->d[2].out_of_line = (mach_msg_ool_descriptor_t){ .address = (uintptr_t)b, .size = n2,
        .type = MACH_MSG_OOL_DESCRIPTOR };
    m->tail = 0x4d414348;
    /* checked before the echo comes back: its regions may be mapped where a was */
    mr = to_echo(t, echo, p, (msgbuf_t *)m, sizeof(*m));
    cli_result("ool_deallocate_unmaps_sender", mr == MACH_MSG_SUCCESS && !mapped(a, n1) &&
               errno == ENOMEM, "%s", E(mr));
    mr = mr ? mr : receive(t, p, r, 0, 0);
    ok = mr == MACH_MSG_SUCCESS && got->body.msgh_descriptor_count == 3 &&
         region_ok(&got->d[0].out_of_line, n1, 11, why1, sizeof(why1)) &&
         region_ok(&got->d[2].out_of_line, n2, 12, why2, sizeof(why2)) &&
         got->d[1].port.name == p && got->tail == 0x4d414348 &&
         got->h.msgh_size == sizeof(*m);
    cli_result("ool_two_regions_a_right_and_inline", ok, "%s: %s %s size %u", E(mr), why1, why2,
               got->h.msgh_size);
    if (ok) {
        munmap((void *)(uintptr_t)got->d[0].out_of_line.address, OOL_PAGE);
        munmap((void *)(uintptr_t)got->d[2].out_of_line.address, 3 * OOL_PAGE);
        mach_port_deallocate(t, p);
    }
    free(b);
    free(m);
    free(r);
}

int test_ool(int node)
{
    task_t t = mach_task_self();
    pid_t pid;
    mach_port_name_t echo = t == TASK_NULL ? MACH_PORT_NULL : find_echo(t, node, &pid);
    mach_port_name_t p;

    if (echo == MACH_PORT_NULL) {
        cli_result("echo_server", 0, "none");
        return 1;
    }
    p = new_port(t);
    ool_sizes(t, echo, p);
    ool_mixed(t, echo, p);
    stop_echo(t, echo, pid);
    return 0;
}
