/*
 * c3_nic_test: in-guest tests of the Cenju-3 interface driver through its test device
 * /dev/cenju3 (retrolink/uapi/cenju3.h; docs/boards/cenju3-driver.md). Prints
 * "PASS <name>" or "FAIL <name>: reason" per case and exits 1 if any failed.
 *   c3_nic_test --peer N [--burst M]    run on two nodes, each naming the other: the
 *       documented errors; messages both ways; remote DMA to the address the other node
 *       gave, with its notification; a burst of M messages (default 300) into a node that
 *       lets at most 4 wait, so the interface stalls and resumes, and every message
 *       arrives, in order, intact; no cache miss (the driver flushed every source).
 * The lower node leads. Messages to a node whose device is not open are dropped by its
 * driver, so the two first meet: the higher node says READY until the lower says GO.
 * Every wait is bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "retrolink/uapi/cenju3.h"

#define DEV "/dev/cenju3"
#define SYSFS "/sys/class/misc/cenju3/"
#define WAIT_MS 10000               /* the bound on any one wait, guest time */

enum { T_READY = 1, T_GO, T_DATA, T_ADDR, T_OK };

static int fd;
static struct c3_info info;
static uint32_t peer;

static int fails_with(long ret, int want)
{
    return ret < 0 && errno == want;
}

static const char *err_name(long ret)
{
    return ret < 0 ? strerror(errno) : "it succeeded";
}

static uint8_t pattern(uint32_t seq, uint32_t i)
{
    return (uint8_t)(seq * 7 + i * 13 + 1);
}

static unsigned long sysfs_num(const char *name)
{
    char path[128];
    unsigned long v = ~0ul;
    FILE *f;

    snprintf(path, sizeof(path), SYSFS "%s", name);
    f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lu", &v) != 1)
            v = ~0ul;
        fclose(f);
    }
    return v;
}

/* a message of type t, sequence seq, len bytes (the rest patterned) */
static int send_msg(uint32_t t, uint32_t seq, uint32_t len, uint32_t flags)
{
    struct c3_msg m = { .node = peer, .len = len, .flags = flags };

    m.data[0] = (uint8_t)t;
    for (uint32_t i = 1; i < len; i++)
        m.data[i] = pattern(seq, i);
    if (len >= 5)
        memcpy(&m.data[1], &seq, 4);
    return ioctl(fd, C3_IOC_SEND, &m);
}

/* the next message of type t (others, stray READYs, are skipped) */
static int recv_type(uint32_t t, struct c3_msg *m)
{
    for (;;) {
        memset(m, 0, sizeof(*m));
        m->timeout_ms = WAIT_MS;
        if (ioctl(fd, C3_IOC_RECV, m))
            return -1;
        if (m->data[0] == t)
            return 0;
    }
}

/* the message is seq's, len bytes, from the peer */
static int msg_ok(const struct c3_msg *m, uint32_t seq, uint32_t len)
{
    uint32_t got;

    if (m->node != peer || m->len != len)
        return 0;
    if (len >= 5) {
        memcpy(&got, &m->data[1], 4);
        if (got != seq)
            return 0;
    }
    for (uint32_t i = 5; i < len; i++)
        if (m->data[i] != pattern(seq, i))
            return 0;
    return 1;
}

/* ---- the cases -------------------------------------------------------------------------- */

static void test_errors(void)
{
    struct c3_msg m = { .node = info.node, .len = 4 };
    struct c3_rdma r;
    struct c3_config cfg = { 0 };
    char b[16];

    cli_result("send_to_self_einval", fails_with(ioctl(fd, C3_IOC_SEND, &m), EINVAL), "%s",
               err_name(-1));
    m.node = info.nodes;
    cli_result("send_to_no_node_einval", fails_with(ioctl(fd, C3_IOC_SEND, &m), EINVAL), "%s",
               err_name(-1));
    m = (struct c3_msg){ .node = peer, .len = 0 };
    cli_result("send_empty_einval", fails_with(ioctl(fd, C3_IOC_SEND, &m), EINVAL), "%s",
               err_name(-1));
    m.len = C3_UAPI_MSG_MAX + 1;
    cli_result("send_509_einval", fails_with(ioctl(fd, C3_IOC_SEND, &m), EINVAL), "%s",
               err_name(-1));
    m = (struct c3_msg){ .node = peer, .len = 4, .flags = 0x80 };
    cli_result("send_bad_flags_einval", fails_with(ioctl(fd, C3_IOC_SEND, &m), EINVAL), "%s",
               err_name(-1));
    r = (struct c3_rdma){ .dest = peer, .len = 0 };
    cli_result("rdma_empty_einval", fails_with(ioctl(fd, C3_IOC_RDMA, &r), EINVAL), "%s",
               err_name(-1));
    r.len = C3_UAPI_RDMA_MAX + 1;
    cli_result("rdma_too_long_einval", fails_with(ioctl(fd, C3_IOC_RDMA, &r), EINVAL), "%s",
               err_name(-1));
    r = (struct c3_rdma){ .dest = peer, .len = 4096, .offset = C3_BUF_SIZE - 4095 };
    cli_result("rdma_past_buffer_einval", fails_with(ioctl(fd, C3_IOC_RDMA, &r), EINVAL), "%s",
               err_name(-1));
    r = (struct c3_rdma){ .dest = info.node, .len = 4 };
    cli_result("rdma_to_self_einval", fails_with(ioctl(fd, C3_IOC_RDMA, &r), EINVAL), "%s",
               err_name(-1));
    cli_result("config_zero_einval", fails_with(ioctl(fd, C3_IOC_CONFIG, &cfg), EINVAL), "%s",
               err_name(-1));
    cli_result("unknown_ioctl_enotty", fails_with(ioctl(fd, _IO(C3_IOC_MAGIC, 99)), ENOTTY),
               "%s", err_name(-1));
    cli_result("info_bad_pointer_efault", fails_with(ioctl(fd, C3_IOC_INFO, (void *)8), EFAULT),
               "%s", err_name(-1));
    cli_result("pread_past_buffer_einval",
               fails_with(pread(fd, b, sizeof(b), C3_BUF_SIZE - 8), EINVAL), "%s", err_name(-1));
    m = (struct c3_msg){ .timeout_ms = 0 };
    cli_result("recv_nothing_etimedout", fails_with(ioctl(fd, C3_IOC_RECV, &m), ETIMEDOUT),
               "%s", err_name(-1));
    int fd2 = open(DEV, O_RDWR);
    cli_result("second_open_ebusy", fails_with(fd2, EBUSY), "%s", err_name(fd2));
    if (fd2 >= 0)
        close(fd2);
}

static void meet(int lead)
{
    struct c3_msg m;
    int ok = 0;

    if (lead) {
        ok = recv_type(T_READY, &m) == 0 && send_msg(T_GO, 0, 8, C3_SENDF_WAIT) == 0;
    } else {
        /* READY every 20 ms until GO */
        for (int i = 0; i < WAIT_MS / 20 && !ok; i++) {
            send_msg(T_READY, 0, 8, 0);
            m = (struct c3_msg){ .timeout_ms = 20 };
            while (!ok && ioctl(fd, C3_IOC_RECV, &m) == 0) {
                ok = m.data[0] == T_GO;     /* what follows GO is the lead's next */
                m = (struct c3_msg){ .timeout_ms = 20 };
            }
        }
    }
    cli_result("meet", ok, "%s", strerror(errno));
}

static const uint32_t sizes[] = { 1, 5, 200, 507, C3_UAPI_MSG_MAX };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* the lead sends, the other echoes each back; both check what they get */
static void test_messages(int lead)
{
    struct c3_msg m;
    int ok = 1;

    for (uint32_t i = 0; i < NSIZES && ok; i++) {
        if (lead) {
            ok = send_msg(T_DATA, 100 + i, sizes[i], 0) == 0 && recv_type(T_DATA, &m) == 0 &&
                 msg_ok(&m, 200 + i, sizes[i]);
        } else {
            ok = recv_type(T_DATA, &m) == 0 && msg_ok(&m, 100 + i, sizes[i]) &&
                 send_msg(T_DATA, 200 + i, sizes[i], 0) == 0;
        }
        if (!ok)
            printf("  size %u: node %u, %u bytes: %s\n", sizes[i], m.node, m.len,
                   strerror(errno));
    }
    cli_result(lead ? "messages_both_ways" : "messages_echoed", ok, "see above");
}

#define RDMA_BIG    C3_UAPI_RDMA_MAX
#define RDMA_SMALL_AT 200003u           /* unaligned, past the big one */
#define RDMA_SMALL  100u
#define RDMA_TAG    0x1234abcdu

/* the other node gives its buffer's physical address; the lead writes 128 KiB there
 * and then 100 bytes further on with a notification; the other checks its buffer */
static void test_rdma(int lead)
{
    static uint8_t buf[C3_BUF_SIZE];
    struct c3_msg m;
    uint64_t raddr;

    if (lead) {
        int ok = recv_type(T_ADDR, &m) == 0;
        memcpy(&raddr, &m.data[8], 8);
        for (uint32_t i = 0; i < C3_BUF_SIZE; i++)
            buf[i] = pattern(9, i);
        ok = ok && pwrite(fd, buf, C3_BUF_SIZE, 0) == C3_BUF_SIZE;
        struct c3_rdma big = { .dest = peer, .len = RDMA_BIG, .offset = 0, .raddr = raddr };
        struct c3_rdma small = { .dest = peer, .len = RDMA_SMALL, .offset = RDMA_SMALL_AT,
                                 .raddr = raddr + RDMA_SMALL_AT, .tag = RDMA_TAG,
                                 .flags = C3_RDMAF_NOTIFY };
        ok = ok && ioctl(fd, C3_IOC_RDMA, &big) == 0 && ioctl(fd, C3_IOC_RDMA, &small) == 0;
        cli_result("rdma_sent", ok, "%s", strerror(errno));
        cli_result("rdma_checked_there", recv_type(T_OK, &m) == 0 && m.data[5] == 1,
                   "the other node found %s", m.data[5] == 1 ? "?" : "other bytes");
        return;
    }
    m = (struct c3_msg){ .node = peer, .len = 16 };
    m.data[0] = T_ADDR;
    memcpy(&m.data[8], &info.buf_phys, 8);
    int ok = ioctl(fd, C3_IOC_SEND, &m) == 0;
    struct c3_rdma_note n = { .timeout_ms = WAIT_MS };
    ok = ok && ioctl(fd, C3_IOC_WAIT_RDMA, &n) == 0;
    cli_result("rdma_notified", ok && n.src == peer && n.tag == RDMA_TAG && n.len == RDMA_SMALL,
               "%s: from %u, tag %#x, %u bytes", strerror(errno), n.src, n.tag, n.len);
    ok = pread(fd, buf, C3_BUF_SIZE, 0) == C3_BUF_SIZE;
    uint32_t bad = 0;
    for (uint32_t i = 0; i < C3_BUF_SIZE && ok; i++) {
        int in = i < RDMA_BIG || (i >= RDMA_SMALL_AT && i < RDMA_SMALL_AT + RDMA_SMALL);
        if (buf[i] != (in ? pattern(9, i) : 0))
            bad++;
    }
    cli_result("rdma_content", ok && !bad, "%u bytes differ from what was sent (or 0 outside)",
               bad);
    m = (struct c3_msg){ .node = peer, .len = 8 };
    m.data[0] = T_OK;
    m.data[5] = ok && !bad;
    ioctl(fd, C3_IOC_SEND, &m);
}

/* the lead sends a burst at once; the other lets 4 wait and starts reading late */
static void test_burst(int lead, uint32_t count)
{
    struct c3_msg m;

    if (lead) {
        int ok = 1;
        for (uint32_t i = 0; i < count && ok; i++)
            ok = send_msg(T_DATA, 1000 + i, 5 + (i * 37) % (C3_UAPI_MSG_MAX - 4), 0) == 0;
        /* the last waits until the interface sent it: the others are all out then */
        ok = ok && send_msg(T_DATA, 1000 + count, 8, C3_SENDF_WAIT) == 0;
        cli_result("burst_sent", ok, "%s", strerror(errno));
        cli_result("burst_received_there", recv_type(T_OK, &m) == 0 && m.data[5] == 1,
                   "the other node counted otherwise");
        return;
    }
    struct c3_config cfg = { .queue_max = 4 };
    unsigned long held0 = sysfs_num("rx_held"), stalls0 = sysfs_num("stalls");
    int ok = ioctl(fd, C3_IOC_CONFIG, &cfg) == 0;
    send_msg(T_GO, 2, 8, 0);
    usleep(200 * 1000);     /* idle: the burst piles up in the slots and the interface */
    uint32_t got = 0;
    for (uint32_t i = 0; i <= count && ok; i++) {
        uint32_t len = i == count ? 8 : 5 + (i * 37) % (C3_UAPI_MSG_MAX - 4);
        ok = recv_type(T_DATA, &m) == 0 && msg_ok(&m, 1000 + i, len);
        got += ok;
    }
    cli_result("burst_in_order_intact", ok, "%u of %u, then %s", got, count + 1,
               strerror(errno));
    unsigned long held = sysfs_num("rx_held") - held0, stalls = sysfs_num("stalls") - stalls0;
    cli_result("burst_held_and_stalled", held > 0 && stalls > 0,
               "driver held %lu times, interface stalled %lu times", held, stalls);
    m = (struct c3_msg){ .node = peer, .len = 8 };
    m.data[0] = T_OK;
    m.data[5] = ok;
    ioctl(fd, C3_IOC_SEND, &m);
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--peer", "--burst", NULL };

    setvbuf(stdout, NULL, _IOLBF, 0);
    cli_parse("c3_nic_test", argc, argv, 1, known);
    peer = (uint32_t)cli_num("--peer", NULL, 0, 255, "a node id");
    uint32_t burst = (uint32_t)cli_num("--burst", "300", 1, 100000, "a message count");

    fd = open(DEV, O_RDWR);
    if (fd < 0) {
        cli_result("open", 0, "%s", strerror(errno));
        return 1;
    }
    int r = ioctl(fd, C3_IOC_INFO, &info);
    cli_result("info", r == 0 && info.nodes >= 2 && info.node < info.nodes &&
               peer < info.nodes && peer != info.node && info.slots >= 1 &&
               info.msg_max == C3_UAPI_MSG_MAX && info.rdma_max == C3_UAPI_RDMA_MAX &&
               info.buf_size == C3_BUF_SIZE && info.buf_phys && !(info.buf_phys & 4095),
               "ret %d: node %u of %u, %u slots, buffer at %#llx", r, info.node, info.nodes,
               info.slots, (unsigned long long)info.buf_phys);
    if (r)
        return 1;
    int lead = info.node < peer;
    test_errors();
    meet(lead);
    test_messages(lead);
    test_rdma(lead);
    if (lead) {
        struct c3_msg m;
        recv_type(T_GO, &m);    /* the other is set for the burst */
    }
    test_burst(lead, burst);
    unsigned long misses = sysfs_num("cache_misses");
    cli_result("no_cache_misses", misses == 0, "C3_REG_CACHE_MISSES is %lu", misses);
    close(fd);
    return cli_failures() != 0;
}
