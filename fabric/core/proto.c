/*
 * Structural checks of node->fabric messages: every length, the magic, the
 * version, the type and the sender. Semantic checks (times, destinations)
 * need the fabric's state and are in main.c.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "retrolink/wire.h"

#define FAIL(...) do { snprintf(why, whylen, __VA_ARGS__); return -1; } while (0)
#define TIME_CHECK(what, t) do { \
        if ((t) >= TIME_LIMIT) { \
            FAIL("%s %llu ns is beyond the fabric's limit of 2^63 ns", what, \
                 (unsigned long long)(t)); \
        } \
    } while (0)

int proto_check(const uint8_t *buf, size_t n, int64_t id, char *why, size_t whylen)
{
    struct rl_msg_hdr h;

    if (n < sizeof(h)) {
        FAIL("message of %zu bytes is shorter than a header", n);
    }
    memcpy(&h, buf, sizeof(h));
    if (h.magic != RL_WIRE_MAGIC) {
        FAIL("bad magic 0x%08x", h.magic);
    }
    if (h.version != RL_WIRE_VERSION) {
        FAIL("protocol version %u, expected %u", h.version, RL_WIRE_VERSION);
    }
    if (h.length != n) {
        FAIL("length field %u but %zu bytes received", h.length, n);
    }
    if (id >= 0 && h.node != id) {
        FAIL("node field %u on node %lld's connection", h.node, (long long)id);
    }
    switch (h.type) {
    case RL_MSG_HELLO: {
        struct rl_hello hello;
        if (n != sizeof(hello)) {
            FAIL("HELLO of %zu bytes, expected %zu", n, sizeof(hello));
        }
        memcpy(&hello, buf, sizeof(hello));
        if (hello.ports > RL_MAX_NETWORKS) {
            FAIL("HELLO announces %u ports, at most %d", hello.ports, RL_MAX_NETWORKS);
        }
        if (hello.granularity_ns > (1u << 20)) {
            FAIL("HELLO granularity %u ns is beyond any icount shift", hello.granularity_ns);
        }
        TIME_CHECK("HELLO time", h.time_ns);
        TIME_CHECK("HELLO reaction time", hello.reaction_ns);
        return 0;
    }
    case RL_MSG_SYNC: {
        struct rl_sync sync;
        if (n != sizeof(sync)) {
            FAIL("SYNC of %zu bytes, expected %zu", n, sizeof(sync));
        }
        memcpy(&sync, buf, sizeof(sync));
        TIME_CHECK("SYNC time", h.time_ns);
        if (sync.promise_ns != RL_TIME_NEVER) {
            TIME_CHECK("SYNC promise", sync.promise_ns);
        }
        return 0;
    }
    case RL_MSG_ATTACH: {
        struct rl_attach a;
        if (n != sizeof(a)) {
            FAIL("ATTACH of %zu bytes, expected %zu", n, sizeof(a));
        }
        memcpy(&a, buf, sizeof(a));
        if (a.net >= RL_MAX_NETWORKS) {
            FAIL("ATTACH to network %u, ids are below %d", a.net, RL_MAX_NETWORKS);
        }
        TIME_CHECK("ATTACH time", h.time_ns);
        return 0;
    }
    case RL_MSG_BYE:
        if (n != sizeof(struct rl_msg_hdr)) {
            FAIL("BYE of %zu bytes, expected %zu", n, sizeof(struct rl_msg_hdr));
        }
        TIME_CHECK("BYE time", h.time_ns);
        return 0;
    case RL_MSG_PROGRESS:
        if (n != sizeof(struct rl_msg_hdr)) {
            FAIL("PROGRESS of %zu bytes, expected %zu", n, sizeof(struct rl_msg_hdr));
        }
        TIME_CHECK("PROGRESS time", h.time_ns);
        return 0;
    case RL_MSG_BARRIER: {
        struct rl_barrier b;
        if (n != sizeof(b)) {
            FAIL("BARRIER of %zu bytes, expected %zu", n, sizeof(b));
        }
        memcpy(&b, buf, sizeof(b));
        if (b.flags != RL_BARRIER_HELD && b.flags != RL_BARRIER_STOPPED) {
            FAIL("BARRIER flags %#x: neither held nor stopped", b.flags);
        }
        TIME_CHECK("BARRIER time", h.time_ns);
        return 0;
    }
    case RL_MSG_FRAME: {
        struct rl_frame f;
        if (n < sizeof(f)) {
            FAIL("FRAME of %zu bytes is shorter than its header", n);
        }
        memcpy(&f, buf, sizeof(f));
        if (f.len > RL_MAX_PAYLOAD || f.len != n - sizeof(f)) {
            FAIL("FRAME payload length %u does not match %zu bytes", f.len, n - sizeof(f));
        }
        if (f.src != h.node) {
            FAIL("FRAME src %u from node %u", f.src, h.node);
        }
        TIME_CHECK("FRAME ready time", h.time_ns);
        return 0;
    }
    default:
        FAIL("message type %u is not one a node may send", h.type);
    }
}
