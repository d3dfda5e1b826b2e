/*
 * mach_bench: the Cenju-3 benchmarks of the paper (bench/cenju3.toml), measured in the
 * guest with Mach IPC over NORMA IPC/DE (libmach). Times are CLOCK_MONOTONIC, which
 * under retrolink is the model's virtual time, and mach_msg_times() (the interface's
 * clock: the same virtual time on every node).
 *
 *   mach_bench serve [--trace 1]
 *       Registers a port as "bench" in this node's name service, then answers every
 *       message with one of the same size to its reply port (OOL data goes back OOL),
 *       until a message with id QUIT. With --trace, after answering the TRACE message it
 *       prints the receive-side stamps of that message as RESULT step lines.
 *   mach_bench client --server-node N --sizes S,... --reps R --warmup W
 *                     --ool-pages P,... --ool-runs R --ool-warmup W [--local 1] [--trace 1]
 *                     [--mark 1|2]
 *       Round trips to N's "bench" port: for each inline size
 *           RESULT latency where=remote size=S reps=R rtt_us=T oneway_us=T/2
 *       with --local the same against a second task of this node (a forked server),
 *       where=local; for each OOL page count (16 KB pages)
 *           RESULT ool pages=P runs=R avg_MBps=A max_MBps=M
 *       (size / (half the round trip): A over the mean round trip, M over the best);
 *       with --trace one 4-byte message's send-side stamps as RESULT step lines;
 *       --mark 1 (2) makes the timed remote (local) round trips an instruction profile
 *       window (docs/profile.md).
 *   mach_bench sink --senders N --messages M
 *       Registers "sink", takes N*M messages, checks each sender's arrive in order:
 *           RESULT many_to_one senders=N messages=N*M delivered=D
 *   mach_bench source --server-node N --messages M --size S
 *       Sends M messages of S inline bytes to N's "sink" (blocking while its queue is full).
 * With --trace the transport's own steps of that message are printed too (its trace,
 * docs/boards/norma.md), side=send or side=recv. Failures print "ERROR ..." and exit 1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "profile/rl_profile.h"
#include "mach/mach.h"

#define MAX_SIZES       32
#define MAX_INLINE      2048
#define MAX_OOL_PAGES   25
#define OOL_PAGE        MACH_MSG_OOL_PAGE
#define ID_PING         1000
#define ID_TRACE        1001
#define ID_QUIT         1002
#define ID_SINK         1003
#define ID_TRACE_ON     1004        /* the server starts the transport's trace */
#define TRACE_PARAM     "/sys/module/norma/parameters/trace"
#define STAMPS_PARAM    "/sys/module/norma/parameters/stamps"
#define TRACE_FILE      "/sys/kernel/debug/norma_trace"
#define LOOKUP_TRIES    600         /* 10 ms apart: the server may not be up yet */
#define MAX_SENDERS     255

/* a message as mach_bench sends it: header, body, one OOL descriptor, inline data */
struct bench_msg {
    mach_msg_header_t h;
    mach_msg_body_t body;
    mach_msg_ool_descriptor_t ool;
    unsigned char data[MAX_INLINE];
};
/* what a receive may bring: room for the largest inline part */
union rcv_buf {
    struct bench_msg m;
    unsigned char room[MACH_MSG_SIZE_MAX];
};

static noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static noreturn void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fputs("ERROR ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    exit(1);
}

static void check(kern_return_t kr, const char *what)
{
    if (kr != KERN_SUCCESS)
        die("%s: %s (0x%x)", what, mach_error_string(kr), (unsigned)kr);
}

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static mach_port_name_t new_port(task_t task)
{
    mach_port_name_t p;

    check(mach_port_allocate(task, MACH_PORT_RIGHT_RECEIVE, &p), "mach_port_allocate");
    return p;
}

/* A port of this task with a send right under the same name, checked in as name. */
static mach_port_name_t served_port(task_t task, const char *name)
{
    mach_port_name_t p = new_port(task);

    check(mach_port_insert_right(task, p, p, MACH_MSG_TYPE_MAKE_SEND), "insert_right");
    check(netname_check_in(task, name, p), "netname_check_in");
    return p;
}

static mach_port_name_t look_up(task_t task, unsigned node, const char *name)
{
    mach_port_name_t p;

    for (int i = 0; i < LOOKUP_TRIES; i++) {
        kern_return_t kr = netname_look_up(task, node, name, &p);

        if (kr == KERN_SUCCESS)
            return p;
        if (kr != NETNAME_NOT_CHECKED_IN)
            check(kr, "netname_look_up");
        usleep(10000);
    }
    die("no port '%s' on node %u after %d tries", name, node, LOOKUP_TRIES);
}

/* Build a message to dest with a send-once reply right to reply (if any), len inline
 * bytes and ool_len OOL bytes from ool (0: a simple message). Returns its size. */
static mach_msg_size_t build(struct bench_msg *m, mach_port_name_t dest,
                             mach_port_name_t reply, mach_msg_id_t id, size_t len,
                             void *ool, size_t ool_len, int dealloc)
{
    m->h.msgh_bits = MACH_MSGH_BITS(MACH_MSG_TYPE_COPY_SEND,
                                    reply ? MACH_MSG_TYPE_MAKE_SEND_ONCE : 0);
    m->h.msgh_remote_port = dest;
    m->h.msgh_local_port = reply;
    m->h.msgh_id = id;
    if (!ool_len) {
        /* simple: the inline data right after the header */
        memmove((char *)&m->h + sizeof(m->h), m->data, len);
        return (mach_msg_size_t)(sizeof(m->h) + ((len + 3) & ~3ul));
    }
    m->h.msgh_bits |= MACH_MSGH_BITS_COMPLEX;
    m->body.msgh_descriptor_count = 1;
    memset(&m->ool, 0, sizeof(m->ool));
    m->ool.address = (uintptr_t)ool;
    m->ool.size = (uint32_t)ool_len;
    m->ool.deallocate = (uint8_t)dealloc;
    m->ool.copy = MACH_MSG_VIRTUAL_COPY;
    m->ool.type = MACH_MSG_OOL_DESCRIPTOR;
    return (mach_msg_size_t)(offsetof(struct bench_msg, data) + ((len + 3) & ~3ul));
}

static void print_steps(const char *side, const char *const *names, const uint64_t *t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i])
            printf("RESULT step side=%s name=%s t_ns=%llu\n", side, names[i],
                   (unsigned long long)t[i]);
}

static void print_send_steps(void)
{
    struct mach_times t;
    static const char *const names[] = { "send_begin", "send_copied", "send_queued" };

    check(mach_msg_times(&t), "mach_msg_times");
    print_steps("send", names, (uint64_t[]){ t.send_begin_ns, t.send_copied_ns,
                                             t.send_queued_ns }, 3);
}

static void print_rcv_steps(void)
{
    struct mach_times t;
    static const char *const names[] = { "rcv_arrived", "rcv_queued", "rcv_taken", "rcv_done" };

    check(mach_msg_times(&t), "mach_msg_times");
    print_steps("recv", names, (uint64_t[]){ t.rcv_arrived_ns, t.rcv_queued_ns,
                                             t.rcv_taken_ns, t.rcv_done_ns }, 4);
}

static void set_param(const char *path, const char *value)
{
    FILE *f = fopen(path, "w");

    if (!f || fputs(value, f) < 0 || fclose(f))
        die("%s: %s", path, strerror(errno));
}

/* The breakdown stamps cost modeled time (each reads the interface's clock): off while
 * latency and throughput are measured, on for the one traced message. */
static void stamps(int on)
{
    set_param(STAMPS_PARAM, on ? "1\n" : "0\n");
}

/* The IPC layer's stamps and the transport's trace (docs/boards/norma.md): on, and the
 * trace emptied. */
static void transport_trace_on(void)
{
    stamps(1);
    set_param(TRACE_PARAM, "1\n");
    FILE *f = fopen(TRACE_FILE, "r");      /* opening it takes the entries out */
    if (!f)
        die("%s: %s", TRACE_FILE, strerror(errno));
    fclose(f);
}

/* Print the transport's steps of the last transfer that node 'src' began (or, src < 0,
 * that another node than this one began), and turn the trace off. Both nodes name a
 * transfer by (src, xid), so their lines join up. */
static void print_transport_steps(const char *side, int src)
{
    unsigned self, nodes;
    static const char *const names[] = { NULL, "de_send", "de_request_rx", "de_permit_tx",
        "de_permit_rx", "de_kmsg_tx", "de_pages_tx", "de_pages_rx", "de_deliver",
        "de_done_rx", "de_done", "de_accept_tx", "de_accept_rx" };
    static struct { unsigned long long t; unsigned src, xid, step; } e[4096];
    int n = 0, last = -1;
    FILE *f = fopen(TRACE_FILE, "r");

    if (!f)
        die("%s: %s", TRACE_FILE, strerror(errno));
    while (n < 4096 && fscanf(f, "%llu %u %u %u", &e[n].t, &e[n].src, &e[n].xid,
                              &e[n].step) == 4)
        n++;
    fclose(f);
    check(mach_host_node(&self, &nodes), "mach_host_node");
    for (int i = 0; src < 0 && i < n; i++)
        if (e[i].src != self)
            src = (int)e[i].src;        /* entries are oldest first: the latest wins */
    for (int i = 0; i < n; i++)
        if ((int)e[i].src == src && (last < 0 || e[i].xid >= e[last].xid))
            last = i;
    for (int i = 0; last >= 0 && i < n; i++)
        if ((int)e[i].src == src && e[i].xid == e[last].xid && e[i].step &&
            e[i].step < sizeof(names) / sizeof(names[0]))
            printf("RESULT step side=%s name=%s t_ns=%llu\n", side, names[e[i].step], e[i].t);
    set_param(TRACE_PARAM, "0\n");
    stamps(0);
}

/* ---- serve ------------------------------------------------------------------- */
static void serve_port(task_t task, mach_port_name_t port, int trace)
{
    static union rcv_buf in;
    static struct bench_msg out;

    for (;;) {
        mach_msg_return_t mr = mach_msg_task(task, &in.m.h, MACH_RCV_MSG, 0, sizeof(in),
                                             port, 0, 0);
        if (mr != MACH_MSG_SUCCESS)
            die("serve: receive: %s", mach_error_string(mr));
        if (in.m.h.msgh_id == ID_QUIT)
            return;
        if (trace && in.m.h.msgh_id == ID_TRACE_ON)
            transport_trace_on();
        if (trace && in.m.h.msgh_id == ID_TRACE) {
            print_rcv_steps();
            print_transport_steps("recv", -1);
        }
        /* answer with the same shape: inline bytes back, OOL data back (unmapped here) */
        void *ool = NULL;
        size_t ool_len = 0, len;
        const unsigned char *data;

        if (in.m.h.msgh_bits & MACH_MSGH_BITS_COMPLEX) {
            ool = (void *)(uintptr_t)in.m.ool.address;
            ool_len = in.m.ool.size;
            data = in.m.data;
            len = in.m.h.msgh_size - offsetof(struct bench_msg, data);
        } else {
            data = (const unsigned char *)&in.m.h + sizeof(in.m.h);
            len = in.m.h.msgh_size - sizeof(in.m.h);
        }
        if (len > MAX_INLINE)
            die("serve: %zu inline bytes", len);
        memcpy(out.data, data, len);
        mach_msg_size_t size = build(&out, in.m.h.msgh_remote_port, 0, in.m.h.msgh_id,
                                     len, ool, ool_len, 1);
        out.h.msgh_bits = (out.h.msgh_bits & MACH_MSGH_BITS_COMPLEX) |
                          MACH_MSGH_BITS(MACH_MSG_TYPE_MOVE_SEND_ONCE, 0);
        mr = mach_msg_task(task, &out.h, MACH_SEND_MSG, size, 0, 0, 0, 0);
        if (mr != MACH_MSG_SUCCESS)
            die("serve: reply: %s", mach_error_string(mr));
    }
}

static int cmd_serve(int argc, char **argv)
{
    static const char *const known[] = { "--trace", NULL };

    cli_parse("mach_bench serve", argc, argv, 2, known);
    int trace = (int)cli_num("--trace", "0", 0, 1, "1 prints the TRACE message's steps");
    task_t task = mach_task_self();

    if (task == TASK_NULL)
        die("open %s: %s", MACH_DEVICE, strerror(errno));
    stamps(0);
    serve_port(task, served_port(task, "bench"), trace);
    return 0;
}

/* ---- client ------------------------------------------------------------------ */
static struct bench_msg out;
static union rcv_buf in;

/* The message of a round trip: len inline bytes of a known pattern (and ool_len OOL
 * bytes from ool) to dest, the answer to come to reply. Returns its size. */
static mach_msg_size_t ping(mach_port_name_t dest, mach_port_name_t reply, mach_msg_id_t id,
                            size_t len, void *ool, size_t ool_len)
{
    for (size_t i = 0; i < len; i++)
        out.data[i] = (unsigned char)(i * 7 + id);
    return build(&out, dest, reply, id, len, ool, ool_len, 0);
}

/* One round trip of the message 'ping' built, as the paper measures it: send, then
 * receive the answer (two calls: a combined mach_msg would receive into the message
 * sent, which then has to be built again). Only these are timed, not this program's
 * checks. */
static void round_trip(mach_msg_size_t size, mach_port_name_t reply)
{
    mach_msg_return_t mr = mach_msg(&out.h, MACH_SEND_MSG, size, 0, 0, 0, 0);

    if (mr != MACH_MSG_SUCCESS)
        die("send of a %u-byte message: %s", size, mach_error_string(mr));
    mr = mach_msg(&in.m.h, MACH_RCV_MSG, 0, sizeof(in), reply, 0, 0);
    if (mr != MACH_MSG_SUCCESS)
        die("receive of the answer to a %u-byte message: %s", size, mach_error_string(mr));
}

/* The answer to ping(id, len, ool, ool_len) is the same message: check it byte for byte,
 * and unmap its OOL data. */
static void check_answer(mach_msg_id_t id, size_t len, const void *ool, size_t ool_len)
{
    if (in.m.h.msgh_id != id)
        die("answer id %d, sent %d", in.m.h.msgh_id, id);
    if (ool_len) {
        if (!(in.m.h.msgh_bits & MACH_MSGH_BITS_COMPLEX) || in.m.ool.size != ool_len)
            die("answer without its %zu OOL bytes", ool_len);
        void *back = (void *)(uintptr_t)in.m.ool.address;

        if (memcmp(back, ool, ool_len))
            die("OOL data of %zu bytes came back changed", ool_len);
        munmap(back, (ool_len + OOL_PAGE - 1) / OOL_PAGE * OOL_PAGE);
        return;
    }
    const unsigned char *d = (const unsigned char *)&in.m.h + sizeof(in.m.h);

    if (in.m.h.msgh_size != sizeof(in.m.h) + ((len + 3) & ~3ul))
        die("answer of %u bytes to %zu inline", in.m.h.msgh_size, len);
    for (size_t i = 0; i < len; i++)
        if (d[i] != (unsigned char)(i * 7 + id))
            die("inline byte %zu of %zu came back changed", i, len);
}

/* Warmup round trips are checked; the timed ones are not (the message is the same). */
/* mark: the timed round trips are an instruction profile window (rl_profile.h) */
static void latency(const char *where, mach_port_name_t dest, mach_port_name_t reply,
                    const long *sizes, int nsizes, long reps, long warmup, int mark)
{
    for (int s = 0; s < nsizes; s++) {
        size_t len = (size_t)sizes[s];
        mach_msg_size_t size = ping(dest, reply, ID_PING, len, NULL, 0);

        for (long i = 0; i < warmup; i++) {
            round_trip(size, reply);
            check_answer(ID_PING, len, NULL, 0);
        }
        double t0 = now_us();

        if (mark)
            rl_profile_mark();
        for (long i = 0; i < reps; i++)
            round_trip(size, reply);
        if (mark)
            rl_profile_mark();
        double rtt = (now_us() - t0) / reps;

        check_answer(ID_PING, len, NULL, 0);
        printf("RESULT latency where=%s size=%ld reps=%ld rtt_us=%.3f oneway_us=%.3f\n",
               where, sizes[s], reps, rtt, rtt / 2);
    }
}

static void ool_throughput(mach_port_name_t dest, mach_port_name_t reply, const long *pages,
                           int npages, long runs, long warmup)
{
    size_t most = MAX_OOL_PAGES * (size_t)OOL_PAGE;
    unsigned char *buf = mmap(NULL, most, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (buf == MAP_FAILED)
        die("mmap %zu bytes: %s", most, strerror(errno));
    for (size_t i = 0; i < most; i++)
        buf[i] = (unsigned char)(i * 13 + i / OOL_PAGE);
    for (int p = 0; p < npages; p++) {
        size_t bytes = (size_t)pages[p] * OOL_PAGE;
        double sum = 0, best = 0;

        for (long i = 0; i < warmup + runs; i++) {
            mach_msg_size_t size = ping(dest, reply, ID_PING, 4, buf, bytes);
            double t0 = now_us();

            round_trip(size, reply);
            double rtt = now_us() - t0;

            check_answer(ID_PING, 4, buf, bytes);
            if (i < warmup)
                continue;
            sum += rtt;
            if (i == warmup || rtt < best)
                best = rtt;
        }
        /* bytes per microsecond is MB/s (10^6 bytes/s) */
        printf("RESULT ool pages=%ld runs=%ld avg_MBps=%.3f max_MBps=%.3f\n", pages[p], runs,
               bytes / (sum / runs / 2), bytes / (best / 2));
    }
    munmap(buf, most);
}

static void quit(mach_port_name_t dest)
{
    static struct bench_msg m;
    mach_msg_size_t size = build(&m, dest, 0, ID_QUIT, 0, NULL, 0, 0);
    mach_msg_return_t mr = mach_msg(&m.h, MACH_SEND_MSG, size, 0, 0, 0, 0);

    if (mr != MACH_MSG_SUCCESS)
        die("quit: %s", mach_error_string(mr));
}

/* A second task on this node serving "bench-local": the local IPC comparison. */
static pid_t local_server(void)
{
    pid_t pid = fork();

    if (pid < 0)
        die("fork: %s", strerror(errno));
    if (!pid) {
        /* its own task: the parent's file is shared across fork, so open another */
        task_t task = mach_task_create();

        if (task == TASK_NULL)
            die("local server: open %s: %s", MACH_DEVICE, strerror(errno));
        serve_port(task, served_port(task, "bench-local"), 0);
        _exit(0);
    }
    return pid;
}

static int cmd_client(int argc, char **argv)
{
    static const char *const known[] = { "--server-node", "--sizes", "--reps", "--warmup",
        "--ool-pages", "--ool-runs", "--ool-warmup", "--local", "--trace", "--mark", NULL };
    long sizes[MAX_SIZES], pages[MAX_SIZES];

    cli_parse("mach_bench client", argc, argv, 2, known);
    unsigned server = (unsigned)cli_num("--server-node", NULL, 0, 255, "a node of the machine");
    int nsizes = cli_nums("--sizes", 0, MAX_INLINE, sizes, MAX_SIZES);
    long reps = cli_num("--reps", "100", 1, 1000000, "round trips per size");
    long warmup = cli_num("--warmup", "10", 0, 100000, "round trips before timing");
    int npages = cli_nums("--ool-pages", 1, MAX_OOL_PAGES, pages, MAX_SIZES);
    long runs = cli_num("--ool-runs", "20", 1, 100000, "round trips per page count");
    long ool_warmup = cli_num("--ool-warmup", "2", 0, 100000, "round trips before timing");
    int local = (int)cli_num("--local", "0", 0, 1, "1 also measures local IPC");
    int trace = (int)cli_num("--trace", "0", 0, 1, "1 prints the 4-byte message's steps");
    int mark = (int)cli_num("--mark", "0", 0, 2, "1 marks the timed remote round trips, "
                            "2 the local ones, for `retrolink run --insn-profile`");

    if (sizes[0] % 4 || sizes[nsizes - 1] % 4)
        cli_usage_error("--sizes: inline sizes are whole 4-byte words");
    if (mach_task_self() == TASK_NULL)
        die("open %s: %s", MACH_DEVICE, strerror(errno));
    stamps(0);
    mach_port_name_t reply = new_port(mach_task_self());
    mach_port_name_t remote = look_up(mach_task_self(), server, "bench");

    latency("remote", remote, reply, sizes, nsizes, reps, warmup, mark == 1);
    if (trace) {
        unsigned self, nodes;

        check(mach_host_node(&self, &nodes), "mach_host_node");
        round_trip(ping(remote, reply, ID_TRACE_ON, 4, NULL, 0), reply);
        check_answer(ID_TRACE_ON, 4, NULL, 0);
        transport_trace_on();
        round_trip(ping(remote, reply, ID_TRACE, 4, NULL, 0), reply);
        check_answer(ID_TRACE, 4, NULL, 0);
        /* the stamps of the request; the answer's come after them */
        print_send_steps();
        print_transport_steps("send", (int)self);
    }
    ool_throughput(remote, reply, pages, npages, runs, ool_warmup);
    quit(remote);
    if (local) {
        unsigned node, nodes;
        int status;

        check(mach_host_node(&node, &nodes), "mach_host_node");
        pid_t pid = local_server();
        mach_port_name_t here = look_up(mach_task_self(), node, "bench-local");

        latency("local", here, reply, sizes, nsizes, reps, warmup, mark == 2);
        quit(here);
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
            die("the local server failed (status 0x%x)", status);
    }
    return 0;
}

/* ---- many-to-one --------------------------------------------------------------- */
struct sink_data {
    uint32_t sender;
    uint32_t seq;
    unsigned char fill[];
};

static int cmd_sink(int argc, char **argv)
{
    static const char *const known[] = { "--senders", "--messages", NULL };
    static union rcv_buf in;
    static uint32_t next[MAX_SENDERS + 1];

    cli_parse("mach_bench sink", argc, argv, 2, known);
    long senders = cli_num("--senders", NULL, 1, MAX_SENDERS, "the other nodes");
    long messages = cli_num("--messages", NULL, 1, 100000, "per sender");
    task_t task = mach_task_self();

    if (task == TASK_NULL)
        die("open %s: %s", MACH_DEVICE, strerror(errno));
    mach_port_name_t port = served_port(task, "sink");
    long delivered = 0;

    for (long i = 0; i < senders * messages; i++) {
        mach_msg_return_t mr = mach_msg(&in.m.h, MACH_RCV_MSG, 0, sizeof(in), port, 0, 0);

        if (mr != MACH_MSG_SUCCESS)
            die("sink: receive %ld: %s", i, mach_error_string(mr));
        const struct sink_data *d = (const void *)((char *)&in.m.h + sizeof(in.m.h));

        if (in.m.h.msgh_id != ID_SINK || d->sender < 1 || d->sender > senders)
            die("sink: message %ld from an unknown sender", i);
        if (d->seq != next[d->sender])
            die("sink: sender %u's message %u came when %u was due", d->sender, d->seq,
                next[d->sender]);
        next[d->sender]++;
        delivered++;
    }
    printf("RESULT many_to_one senders=%ld messages=%ld delivered=%ld\n", senders,
           senders * messages, delivered);
    return 0;
}

static int cmd_source(int argc, char **argv)
{
    static const char *const known[] = { "--server-node", "--messages", "--size", NULL };
    static struct bench_msg m;
    unsigned node, nodes;

    cli_parse("mach_bench source", argc, argv, 2, known);
    unsigned server = (unsigned)cli_num("--server-node", NULL, 0, 255, "the sink's node");
    long messages = cli_num("--messages", NULL, 1, 100000, "messages to send");
    long size = cli_num("--size", "64", 8, MAX_INLINE, "inline bytes, a multiple of 4");

    if (size % 4)
        cli_usage_error("--size: inline sizes are whole 4-byte words");
    if (mach_task_self() == TASK_NULL)
        die("open %s: %s", MACH_DEVICE, strerror(errno));
    check(mach_host_node(&node, &nodes), "mach_host_node");
    mach_port_name_t sink = look_up(mach_task_self(), server, "sink");

    for (long i = 0; i < messages; i++) {
        struct sink_data *d = (struct sink_data *)m.data;

        d->sender = node;
        d->seq = (uint32_t)i;
        memset(d->fill, (int)i, (size_t)size - sizeof(*d));
        mach_msg_size_t sz = build(&m, sink, 0, ID_SINK, (size_t)size, NULL, 0, 0);
        mach_msg_return_t mr = mach_msg(&m.h, MACH_SEND_MSG, sz, 0, 0, 0, 0);

        if (mr != MACH_MSG_SUCCESS)
            die("source: message %ld: %s", i, mach_error_string(mr));
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        cli_usage_error("a mode: serve, client, sink or source");
    if (!strcmp(argv[1], "serve"))
        return cmd_serve(argc, argv);
    if (!strcmp(argv[1], "client"))
        return cmd_client(argc, argv);
    if (!strcmp(argv[1], "sink"))
        return cmd_sink(argc, argv);
    if (!strcmp(argv[1], "source"))
        return cmd_source(argc, argv);
    cli_usage_error("unknown mode '%s': serve, client, sink or source", argv[1]);
}
