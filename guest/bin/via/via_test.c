/*
 * via_test: VIPL and the VIA kernel agent from a process, every call and error path,
 * for tests/boards/via/test_via_driver.py. Prints "PASS name" or "FAIL name: why"
 * (lib/cli), exit status 1 if any failed.
 *
 *   via_test local            one node: bad handles and arguments, tags, registration,
 *                             queue overflow, waits that time out, connection errors,
 *                             the agent's ownership of numbers between files, and every
 *                             resource free again at the end
 *   via_test server           node 1: the two-node checks' other side, in order
 *   via_test client --peer 1  node 0: messages both ways (data checked, a CQ), a
 *                             descriptor with memory of another tag, a disconnect
 *                             mid-transfer, a child killed mid-transfer with its VI open
 *   via_test hold             open, register, map a doorbell page and a CQ, then wait for
 *                             /tmp/unbound and touch the page (SIGBUS) and call (ENODEV)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "retrolink/uapi/via.h"
#include "via_conn.h"

#define MEM         (1 << 20)
#define MSG         4096
#define IN_USE      "/sys/class/misc/via0/in_use"
#define CONNECT_MS  20000

static void expect(const char *name, VIP_RETURN got, VIP_RETURN want)
{
    cli_result(name, got == want, "%s, expected %s", VipReturnName(got), VipReturnName(want));
}

static void expect_errno(const char *name, int ret, int err)
{
    cli_result(name, ret < 0 && errno == err, "returned %d (%s), expected %s", ret,
               strerror(errno), strerror(err));
}

/* what the agent has handed out, from sysfs ("" if it cannot be read) */
static void in_use(char *buf, size_t len)
{
    FILE *f = fopen(IN_USE, "r");

    buf[0] = 0;
    if (f) {
        if (!fgets(buf, len, f))
            buf[0] = 0;
        fclose(f);
    }
}

static void sleep_ms(unsigned ms)
{
    nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL);
}

/* ---- one node -------------------------------------------------------------------------- */

static void check_handles(struct via_conn *c)
{
    VIP_NIC_ATTRIBUTES a;
    VIP_NIC_HANDLE nic;
    VIP_VI_ATTRIBUTES va = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY,
                             .Ptag = c->tag };
    VIP_VI_HANDLE vi;
    VIP_CQ_HANDLE cq;
    VIP_DESCRIPTOR *d;
    VIP_BOOLEAN recv;
    uint32_t junk[64] = { 0x12345678 };

    expect("open_bad_device", VipOpenNic("/dev/nonexistent", &nic), VIP_INVALID_PARAMETER);
    expect("query_null_nic", VipQueryNic(NULL, &a), VIP_INVALID_PARAMETER);
    expect("query_junk_nic", VipQueryNic(junk, &a), VIP_INVALID_PARAMETER);
    expect("create_vi_junk_cq", VipCreateVi(c->nic, &va, junk, NULL, &vi),
           VIP_INVALID_PARAMETER);
    expect("destroy_cq_given_a_vi", VipDestroyCQ(c->vi), VIP_INVALID_PARAMETER);
    expect("destroy_vi_given_a_nic", VipDestroyVi(c->nic), VIP_INVALID_PARAMETER);
    expect("post_send_null_vi", VipPostSend(NULL, c->mem, c->mh), VIP_INVALID_PARAMETER);
    expect("recv_done_junk_vi", VipRecvDone(junk, &d), VIP_INVALID_PARAMETER);
    expect("cq_done_junk_cq", VipCQDone(junk, &vi, &recv), VIP_INVALID_PARAMETER);
    expect("create_cq_zero_entries", VipCreateCQ(c->nic, 0, &cq), VIP_INVALID_PARAMETER);
    expect("create_cq_too_many_entries",
           VipCreateCQ(c->nic, c->attrs.MaxCQEntries + 1, &cq), VIP_INVALID_PARAMETER);
}

static void check_vi_attributes(struct via_conn *c)
{
    VIP_VI_ATTRIBUTES va = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY,
                             .Ptag = c->tag };
    VIP_VI_ATTRIBUTES bad;
    VIP_VI_HANDLE vi;

    bad = va;
    bad.ReliabilityLevel = VIP_SERVICE_RELIABLE_RECEPTION;
    expect("vi_reliability_refused", VipCreateVi(c->nic, &bad, NULL, NULL, &vi),
           VIP_INVALID_RELIABILITY_LEVEL);
    bad = va;
    bad.MaxTransferSize = c->attrs.MaxTransferSize + 1;
    expect("vi_mtu_refused", VipCreateVi(c->nic, &bad, NULL, NULL, &vi), VIP_INVALID_MTU);
    bad = va;
    bad.QoS = 1;
    expect("vi_qos_refused", VipCreateVi(c->nic, &bad, NULL, NULL, &vi), VIP_INVALID_QOS);
    bad = va;
    bad.EnableRdmaRead = VIP_TRUE;
    expect("vi_rdma_read_refused", VipCreateVi(c->nic, &bad, NULL, NULL, &vi),
           VIP_INVALID_RDMAREAD);
    bad = va;
    bad.Ptag = (VIP_PROTECTION_HANDLE)(uintptr_t)255;
    expect("vi_foreign_tag_refused", VipCreateVi(c->nic, &bad, NULL, NULL, &vi),
           VIP_INVALID_PTAG);
}

static void check_registration(struct via_conn *c)
{
    VIP_MEM_ATTRIBUTES ma = { .Ptag = c->tag };
    VIP_MEM_ATTRIBUTES foreign = { .Ptag = (VIP_PROTECTION_HANDLE)(uintptr_t)255 };
    struct via_register reg;
    VIP_MEM_HANDLE mh;
    char *buf = (char *)c->mem + MEM / 2;
    int fd = open("/dev/via0", O_RDWR);

    expect("register_foreign_tag", VipRegisterMem(c->nic, buf, 4096, &foreign, &mh),
           VIP_INVALID_PTAG);
    expect("register_zero_length", VipRegisterMem(c->nic, buf, 0, &ma, &mh),
           VIP_INVALID_PARAMETER);
    expect("register_unmapped", VipRegisterMem(c->nic, (void *)0x10000, 8192, &ma, &mh),
           VIP_INVALID_PARAMETER);
    expect("register_too_large", VipRegisterMem(c->nic, buf, 0xfffff000u, &ma, &mh),
           VIP_INVALID_PARAMETER);
    expect("deregister_unknown_handle", VipDeregisterMem(c->nic, buf, 999),
           VIP_INVALID_PARAMETER);
    /* the agent itself, below VIPL's checks */
    reg = (struct via_register){ .va = UINT64_MAX - 4095, .len = 8192,
                                 .ptag = (uintptr_t)c->tag };
    expect_errno("agent_register_wraps_einval", ioctl(c->fd_probe, VIA_IOC_REGISTER, &reg),
                 EINVAL);
    reg = (struct via_register){ .va = (uintptr_t)buf + 1, .len = 100,
                                 .ptag = (uintptr_t)c->tag };
    cli_result("register_unaligned_ok", !ioctl(c->fd_probe, VIA_IOC_REGISTER, &reg),
               "REGISTER of 100 bytes at an odd address: %s", strerror(errno));
    cli_result("deregister_unaligned_ok",
               !ioctl(c->fd_probe, VIA_IOC_DEREGISTER, &reg.handle), "%s", strerror(errno));
    expect_errno("agent_bad_pointer_efault", ioctl(c->fd_probe, VIA_IOC_REGISTER, (void *)16),
                 EFAULT);
    expect_errno("agent_unknown_ioctl_enotty", ioctl(c->fd_probe, _IO('V', 99)), ENOTTY);

    /* another file's numbers name nothing here */
    if (fd < 0) {
        cli_result("second_file_open", 0, "%s", strerror(errno));
        return;
    }
    struct via_ptag t;
    cli_result("second_file_tag", !ioctl(fd, VIA_IOC_CREATE_PTAG, &t), "%s", strerror(errno));
    reg = (struct via_register){ .va = (uintptr_t)buf, .len = 4096, .ptag = t.ptag };
    cli_result("second_file_register", !ioctl(fd, VIA_IOC_REGISTER, &reg), "%s",
               strerror(errno));
    expect_errno("other_files_handle_enoent",
                 ioctl(c->fd_probe, VIA_IOC_DEREGISTER, &reg.handle), ENOENT);
    expect_errno("other_files_tag_enoent", ioctl(c->fd_probe, VIA_IOC_DESTROY_PTAG, &t),
                 ENOENT);
    struct via_vi_create vc = { .ptag = t.ptag, .send_cq = VIA_NO_CQ_HANDLE,
                                .recv_cq = VIA_NO_CQ_HANDLE };
    expect_errno("other_files_tag_vi_enoent", ioctl(c->fd_probe, VIA_IOC_CREATE_VI, &vc),
                 ENOENT);
    cli_result("second_file_vi", !ioctl(fd, VIA_IOC_CREATE_VI, &vc), "%s", strerror(errno));
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd_probe,
                   VIA_MMAP_DOORBELL(vc.vi));
    expect_errno("other_files_doorbell_mmap_refused", p == MAP_FAILED ? -1 : 0, ENOENT);
    if (p != MAP_FAILED)
        munmap(p, 4096);
    p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, VIA_MMAP_DOORBELL(vc.vi));
    expect_errno("doorbell_mmap_private_refused", p == MAP_FAILED ? -1 : 0, EINVAL);
    if (p != MAP_FAILED)
        munmap(p, 4096);
    p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, VIA_MMAP_DOORBELL(vc.vi));
    expect_errno("doorbell_mmap_exec_refused", p == MAP_FAILED ? -1 : 0, EPERM);
    if (p != MAP_FAILED)
        munmap(p, 4096);
    expect_errno("tag_in_use_ebusy", ioctl(fd, VIA_IOC_DESTROY_PTAG, &t), EBUSY);
    expect_errno("other_files_vi_destroy_enoent", ioctl(c->fd_probe, VIA_IOC_DESTROY_VI, &vc.vi),
                 ENOENT);
    struct via_wait w = { .kind = VIA_WAIT_RECV, .id = vc.vi, .timeout_ms = 10 };
    expect_errno("other_files_vi_wait_enoent", ioctl(c->fd_probe, VIA_IOC_WAIT, &w), ENOENT);
    w = (struct via_wait){ .kind = 7, .id = 0, .timeout_ms = 10 };
    expect_errno("agent_wait_bad_kind_einval", ioctl(fd, VIA_IOC_WAIT, &w), EINVAL);
    w = (struct via_wait){ .kind = VIA_WAIT_CQ, .id = 1u << 31, .timeout_ms = 10 };
    expect_errno("agent_wait_huge_cq_enoent", ioctl(fd, VIA_IOC_WAIT, &w), ENOENT);
    struct via_connect cr = { .vi = vc.vi, .node = 0, .timeout_ms = 10, .disc_len = 17 };
    expect_errno("agent_long_discriminator_einval",
                 ioctl(fd, VIA_IOC_CONNECT_REQUEST, &cr), EINVAL);
    cr.disc_len = 0;
    cr.node = UINT32_MAX;
    expect_errno("agent_connect_no_node_ehostunreach",
                 ioctl(fd, VIA_IOC_CONNECT_REQUEST, &cr), EHOSTUNREACH);
    cr.conn = 12345;
    expect_errno("agent_accept_unknown_conn_enoent", ioctl(fd, VIA_IOC_CONNECT_ACCEPT, &cr),
                 ENOENT);
    struct via_cq_create cqc = { .entries = UINT32_MAX };
    expect_errno("agent_cq_huge_einval", ioctl(fd, VIA_IOC_CREATE_CQ, &cqc), EINVAL);
    uint32_t bad = UINT32_MAX;
    expect_errno("agent_deregister_huge_handle_enoent", ioctl(fd, VIA_IOC_DEREGISTER, &bad),
                 ENOENT);
    expect_errno("agent_disconnect_huge_vi_enoent", ioctl(fd, VIA_IOC_DISCONNECT, &bad),
                 ENOENT);
    close(fd);      /* its VI, region and tag go with it */
}

static void check_posting(struct via_conn *c)
{
    VIP_DESCRIPTOR *d = c->mem, *got;
    VIP_DESCRIPTOR *unreg = aligned_alloc(64, 64);
    char *buf = (char *)c->mem + MEM / 2;
    VIP_RETURN r = VIP_SUCCESS;
    int i, posted = 0;

    via_conn_desc(c, d, buf, MSG);
    expect("post_send_idle_vi", VipPostSend(c->vi, d, c->mh), VIP_INVALID_STATE);
    if (unreg) {
        via_conn_desc(c, unreg, buf, MSG);
        expect("post_unregistered_descriptor", VipPostRecv(c->vi, unreg, c->mh),
               VIP_INVALID_PARAMETER);
        free(unreg);
    }
    expect("post_misaligned_descriptor",
           VipPostRecv(c->vi, (VIP_DESCRIPTOR *)((char *)d + 32), c->mh),
           VIP_INVALID_PARAMETER);
    expect("post_wrong_memory_handle", VipPostRecv(c->vi, d, c->mh + 1),
           VIP_INVALID_PARAMETER);
    d->CS.SegCount = VIA_MAX_SEGS + 1;
    expect("post_too_many_segments", VipPostRecv(c->vi, d, c->mh), VIP_DESCRIPTOR_ERROR);
    expect("recv_done_nothing_posted", VipRecvDone(c->vi, &got), VIP_NOT_DONE);

    /* a full queue: VIA_WQ_DEPTH receives go, the next is refused before the doorbell */
    for (i = 0; i < VIA_WQ_DEPTH && r == VIP_SUCCESS; i++) {
        via_conn_desc(c, &d[i], buf, MSG);
        r = VipPostRecv(c->vi, &d[i], c->mh);
        posted += r == VIP_SUCCESS;
    }
    cli_result("post_recv_queue_depth", posted == VIA_WQ_DEPTH, "%d posted, then %s", posted,
               VipReturnName(r));
    via_conn_desc(c, &d[VIA_WQ_DEPTH], buf, MSG);
    expect("post_recv_queue_full", VipPostRecv(c->vi, &d[VIA_WQ_DEPTH], c->mh),
           VIP_ERROR_RESOURCE);
    expect("recv_done_not_done", VipRecvDone(c->vi, &got), VIP_NOT_DONE);
    expect("recv_wait_times_out", VipRecvWait(c->vi, 50, &got), VIP_TIMEOUT);
    expect("destroy_ptag_in_use", VipDestroyPtag(c->nic, c->tag), VIP_INVALID_STATE);
}

static void check_connection_errors(struct via_conn *c)
{
    unsigned char abuf[VIP_NET_ADDRESS_BYTES], rbuf[VIP_NET_ADDRESS_BYTES];
    VIP_NET_ADDRESS *local = (void *)abuf, *remote = (void *)rbuf;
    VIP_CONN_HANDLE conn;
    VIP_VI_ATTRIBUTES ra;
    unsigned node = c->attrs.LocalNicAddress[0] | c->attrs.LocalNicAddress[1] << 8;

    VipMakeAddress(local, node, "nobody", 6);
    expect("connect_wait_times_out", VipConnectWait(c->nic, local, 100, remote, &ra, &conn),
           VIP_TIMEOUT);
    VipMakeAddress(remote, node, "self", 4);
    expect("connect_to_self_unreachable", VipConnectRequest(c->vi, local, remote, 100, &ra),
           VIP_NOT_REACHABLE);
    VipMakeAddress(remote, 999, "far", 3);
    expect("connect_to_no_node_unreachable",
           VipConnectRequest(c->vi, local, remote, 100, &ra), VIP_NOT_REACHABLE);
    expect("disconnect_idle_vi", VipDisconnect(c->vi), VIP_INVALID_STATE);
    expect("accept_bad_conn", VipConnectAccept(NULL, c->vi), VIP_INVALID_PARAMETER);
    expect("ns_unknown_name", VipNSGetHostByName(c->nic, "elsewhere", remote, 0),
           VIP_ERROR_NAMESERVICE);
    expect("ns_node_name", VipNSGetHostByName(c->nic, "node0", remote, 0), VIP_SUCCESS);
}

static int role_local(void)
{
    char before[128], after[128];
    struct via_conn c;
    VIP_CQ_HANDLE cq, cq2;
    VIP_VI_HANDLE vi;
    VIP_BOOLEAN recv;
    const char *err;

    in_use(before, sizeof(before));
    cli_result("in_use_readable", before[0] != 0, "%s unreadable", IN_USE);
    if (VipCreateCQ(NULL, 16, &cq) != VIP_INVALID_PARAMETER)
        cli_result("create_cq_null_nic", 0, "accepted");
    err = via_conn_open(&c, MEM, NULL, NULL);
    cli_result("open_register_create_vi", !err, "%s failed", err);
    if (err)
        return 1;
    cli_result("query_nic", c.attrs.MaxVI == VIA_MAX_VIS - 1 &&
               c.attrs.MaxDescriptorsPerQueue == VIA_WQ_DEPTH &&
               c.attrs.MaxTransferSize == VIA_MAX_MSG,
               "MaxVI %u, depth %u, MTU %u", c.attrs.MaxVI, c.attrs.MaxDescriptorsPerQueue,
               c.attrs.MaxTransferSize);
    check_handles(&c);
    check_vi_attributes(&c);
    check_registration(&c);
    check_posting(&c);
    check_connection_errors(&c);

    /* a CQ: nothing in it; a VI using it keeps it */
    expect("create_cq", VipCreateCQ(c.nic, 100, &cq), VIP_SUCCESS);
    expect("cq_done_empty", VipCQDone(cq, &vi, &recv), VIP_NOT_DONE);
    expect("cq_wait_times_out", VipCQWait(cq, 50, &vi, &recv), VIP_TIMEOUT);
    VIP_VI_ATTRIBUTES va = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY, .Ptag = c.tag };
    expect("create_vi_with_cq", VipCreateVi(c.nic, &va, cq, cq, &vi), VIP_SUCCESS);
    expect("destroy_cq_in_use", VipDestroyCQ(cq), VIP_INVALID_STATE);
    expect("destroy_vi", VipDestroyVi(vi), VIP_SUCCESS);
    expect("destroy_cq", VipDestroyCQ(cq), VIP_SUCCESS);
    expect("create_cq_again", VipCreateCQ(c.nic, 1, &cq2), VIP_SUCCESS);
    expect("destroy_cq_again", VipDestroyCQ(cq2), VIP_SUCCESS);

    /* everything back: the VI first (its 256 receives are flushed into the region) */
    expect("destroy_vi_with_receives_posted", VipDestroyVi(c.vi), VIP_SUCCESS);
    c.vi = NULL;
    expect("deregister", VipDeregisterMem(c.nic, c.mem, c.mh), VIP_SUCCESS);
    expect("deregister_twice", VipDeregisterMem(c.nic, c.mem, c.mh), VIP_INVALID_PARAMETER);
    expect("close_nic", VipCloseNic(c.nic), VIP_SUCCESS);
    c.nic = NULL;
    via_conn_close(&c);
    in_use(after, sizeof(after));
    cli_result("resources_free_after_close", !strcmp(before, after), "before: %s after: %s",
               before, after);
    return cli_failures() != 0;
}

/* ---- two nodes -------------------------------------------------------------------------- */

static int connect_or_fail(struct via_conn *c, const char *phase, int server, int peer)
{
    VIP_RETURN r = via_conn_connect(c, server, peer, phase, CONNECT_MS);
    char name[64];

    snprintf(name, sizeof(name), "%s_connect", phase);
    expect(name, r, VIP_SUCCESS);
    return r == VIP_SUCCESS ? 0 : -1;
}

static void fill(char *buf, unsigned len, unsigned seed)
{
    unsigned i;

    for (i = 0; i < len; i++)
        buf[i] = (char)(i * 7 + seed);
}

static int check_fill(const char *buf, unsigned len, unsigned seed)
{
    unsigned i;

    for (i = 0; i < len; i++)
        if (buf[i] != (char)(i * 7 + seed))
            return 0;
    return 1;
}

#define ECHO_MSGS   4

/* messages both ways: the server's receives complete into a CQ */
static void echo_server(void)
{
    struct via_conn c;
    VIP_CQ_HANDLE cq = NULL;
    VIP_DESCRIPTOR *rd, *sd, *got;
    VIP_VI_HANDLE vi;
    VIP_BOOLEAN recv;
    char *buf;
    int i, ok = 1;

    /* the receives complete into a CQ: the VI is made again with it */
    if (via_conn_open(&c, MEM, NULL, NULL) || VipCreateCQ(c.nic, 16, &cq) != VIP_SUCCESS) {
        cli_result("echo_open", 0, "open failed");
        return;
    }
    VIP_VI_ATTRIBUTES va = { .ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY, .Ptag = c.tag };
    expect("echo_destroy_plain_vi", VipDestroyVi(c.vi), VIP_SUCCESS);
    expect("echo_vi_with_cq", VipCreateVi(c.nic, &va, NULL, cq, &c.vi), VIP_SUCCESS);
    rd = c.mem;
    sd = rd + ECHO_MSGS;
    buf = (char *)c.mem + 64 * 1024;
    for (i = 0; i < ECHO_MSGS; i++) {
        via_conn_desc(&c, &rd[i], buf + i * MSG, MSG);
        VipPostRecv(c.vi, &rd[i], c.mh);
    }
    if (connect_or_fail(&c, "echo", 1, -1))
        goto out;
    for (i = 0; i < ECHO_MSGS; i++) {
        VIP_RETURN r = VipCQWait(cq, 5000, &vi, &recv);

        if (r != VIP_SUCCESS || vi != c.vi || !recv) {
            cli_result("echo_server_cq", 0, "%s, vi %p, recv %d", VipReturnName(r), vi, recv);
            ok = 0;
            break;
        }
        if (VipRecvDone(c.vi, &got) != VIP_SUCCESS || got != &rd[i] ||
            got->CS.Length != MSG || !check_fill(buf + i * MSG, MSG, i) ||
            !(got->CS.Status & VIP_STATUS_IMMEDIATE) || got->CS.ImmediateData != 100u + i)
            ok = 0;
        via_conn_desc(&c, &sd[i], buf + i * MSG, MSG);
        VipPostSend(c.vi, &sd[i], c.mh);
        if (VipSendWait(c.vi, 5000, &got) != VIP_SUCCESS || got->CS.Status != VIP_STATUS_DONE)
            ok = 0;
    }
    cli_result("echo_server_data", ok, "a message, its length or immediate data was wrong");
    /* the client disconnects: wait for it, then ours */
    sleep_ms(500);
    VipDisconnect(c.vi);
out:
    VipDestroyVi(c.vi);
    c.vi = NULL;
    VipDestroyCQ(cq);
    via_conn_close(&c);
}

static void echo_client(int peer)
{
    struct via_conn c;
    VIP_DESCRIPTOR *rd, *sd, *got;
    char *sbuf, *rbuf;
    int i, ok = 1;

    if (via_conn_open(&c, MEM, NULL, NULL)) {
        cli_result("echo_open", 0, "open failed");
        return;
    }
    rd = c.mem;
    sd = rd + ECHO_MSGS;
    sbuf = (char *)c.mem + 64 * 1024;
    rbuf = sbuf + 64 * 1024;
    for (i = 0; i < ECHO_MSGS; i++) {
        via_conn_desc(&c, &rd[i], rbuf + i * MSG, MSG);
        VipPostRecv(c.vi, &rd[i], c.mh);
    }
    if (connect_or_fail(&c, "echo", 0, peer))
        goto out;
    for (i = 0; i < ECHO_MSGS; i++) {
        fill(sbuf, MSG, i);
        via_conn_desc(&c, &sd[i], sbuf, MSG);
        sd[i].CS.Control = VIP_CONTROL_IMMEDIATE;
        sd[i].CS.ImmediateData = 100 + i;
        expect(i ? "echo_post_send_again" : "echo_post_send", VipPostSend(c.vi, &sd[i], c.mh),
               VIP_SUCCESS);
        if (VipSendWait(c.vi, 5000, &got) != VIP_SUCCESS || got != &sd[i] ||
            got->CS.Status != VIP_STATUS_DONE)
            ok = 0;
        if (VipRecvWait(c.vi, 5000, &got) != VIP_SUCCESS || got != &rd[i] ||
            got->CS.Length != MSG || !check_fill(rbuf + i * MSG, MSG, i))
            ok = 0;
    }
    cli_result("echo_client_data", ok, "a send or an echoed message was wrong");
    expect("echo_disconnect", VipDisconnect(c.vi), VIP_SUCCESS);
    expect("echo_send_after_disconnect", VipPostSend(c.vi, &sd[0], c.mh), VIP_INVALID_STATE);
out:
    via_conn_close(&c);
}

/* a send whose data is registered under another tag: the NIC refuses it */
static void prot_server(void)
{
    struct via_conn c;
    VIP_DESCRIPTOR *got;

    if (via_conn_open(&c, MEM, NULL, NULL)) {
        cli_result("prot_open", 0, "open failed");
        return;
    }
    via_conn_desc(&c, c.mem, (char *)c.mem + 4096, MSG);
    VipPostRecv(c.vi, c.mem, c.mh);
    if (!connect_or_fail(&c, "prot", 1, -1)) {
        /* our receive: flushed when the connection breaks, or never used */
        VipRecvWait(c.vi, 2000, &got);
        sleep_ms(200);
        VipDisconnect(c.vi);
    }
    via_conn_close(&c);
}

static void prot_client(int peer)
{
    VIP_MEM_ATTRIBUTES ma = { 0 };
    VIP_PROTECTION_HANDLE other;
    VIP_MEM_HANDLE omh;
    struct via_conn c;
    VIP_DESCRIPTOR *d, *got;
    char *obuf = NULL;

    if (via_conn_open(&c, MEM, NULL, NULL)) {
        cli_result("prot_open", 0, "open failed");
        return;
    }
    obuf = aligned_alloc(4096, MSG);
    VipCreatePtag(c.nic, &other);
    ma.Ptag = other;
    expect("prot_register_other_tag", VipRegisterMem(c.nic, obuf, MSG, &ma, &omh),
           VIP_SUCCESS);
    if (connect_or_fail(&c, "prot", 0, peer))
        goto out;
    d = c.mem;
    via_conn_desc(&c, d, obuf, MSG);
    d->DS[0].Local.Handle = omh;
    expect("prot_post_send", VipPostSend(c.vi, d, c.mh), VIP_SUCCESS);
    VIP_RETURN r = VipSendWait(c.vi, 5000, &got);
    cli_result("prot_send_protection_error",
               r == VIP_SUCCESS && (got->CS.Status & VIP_STATUS_PROTECTION_ERROR),
               "%s, status %#x", VipReturnName(r), r == VIP_SUCCESS ? got->CS.Status : 0);
    VIP_VI_STATE st;
    VipQueryVi(c.vi, &st, NULL, NULL, NULL);
    cli_result("prot_vi_broken", st == VIP_STATE_ERROR, "state %d", st);
    expect("prot_post_on_broken_vi", VipPostSend(c.vi, d, c.mh), VIP_INVALID_STATE);
    expect("prot_disconnect_broken_vi", VipDisconnect(c.vi), VIP_SUCCESS);
out:
    via_conn_close(&c);
    free(obuf);
}

#define STREAM  64

/* the server takes one message and disconnects while the client still sends */
static void disc_server(void)
{
    struct via_conn c;
    VIP_DESCRIPTOR *got;

    if (via_conn_open(&c, MEM, NULL, NULL)) {
        cli_result("disc_open", 0, "open failed");
        return;
    }
    /* receives enough for half the stream: the disconnect, not a missing receive,
     * is what ends it */
    for (int i = 0; i < STREAM / 2; i++) {
        via_conn_desc(&c, &((VIP_DESCRIPTOR *)c.mem)[i], (char *)c.mem + 65536, 16384);
        VipPostRecv(c.vi, &((VIP_DESCRIPTOR *)c.mem)[i], c.mh);
    }
    if (!connect_or_fail(&c, "disc", 1, -1)) {
        expect("disc_first_message", VipRecvWait(c.vi, 5000, &got), VIP_SUCCESS);
        expect("disc_disconnect_mid_transfer", VipDisconnect(c.vi), VIP_SUCCESS);
    }
    via_conn_close(&c);
}

static void disc_client(int peer)
{
    struct via_conn c;
    VIP_DESCRIPTOR *d, *got;
    int i, posted = 0, done = 0, errors = 0;

    if (via_conn_open(&c, MEM, NULL, NULL)) {
        cli_result("disc_open", 0, "open failed");
        return;
    }
    d = c.mem;
    if (connect_or_fail(&c, "disc", 0, peer))
        goto out;
    for (i = 0; i < STREAM; i++) {
        via_conn_desc(&c, &d[i], (char *)c.mem + 65536, 16384);
        if (VipPostSend(c.vi, &d[i], c.mh) == VIP_SUCCESS)
            posted++;
    }
    while (done < posted && VipSendWait(c.vi, 5000, &got) == VIP_SUCCESS) {
        done++;
        errors += (got->CS.Status & VIP_STATUS_ERROR_MASK) != 0;
    }
    cli_result("disc_every_send_completes", done == posted, "%d of %d completed", done, posted);
    cli_result("disc_sends_after_disconnect_fail", errors > 0 && errors < posted,
               "%d of %d completed with an error", errors, posted);
    VipDisconnect(c.vi);
out:
    via_conn_close(&c);
}

/* a child connects and streams, and is killed mid-transfer: nothing of it is left */
static void kill_server(void)
{
    struct via_conn c;
    VIP_DESCRIPTOR *d, *got;
    int i;

    if (via_conn_open(&c, MEM, NULL, NULL)) {
        cli_result("kill_open", 0, "open failed");
        return;
    }
    d = c.mem;
    for (i = 0; i < 8; i++) {
        via_conn_desc(&c, &d[i], (char *)c.mem + 65536, 65536);
        VipPostRecv(c.vi, &d[i], c.mh);
    }
    if (!connect_or_fail(&c, "kill", 1, -1)) {
        /* take messages until the peer is gone (its VI closed: ours is disconnected) */
        for (i = 0; i < 1000; i++) {
            VIP_RETURN r = VipRecvWait(c.vi, 2000, &got);

            if (r != VIP_SUCCESS || (got->CS.Status & VIP_STATUS_ERROR_MASK))
                break;
            VipPostRecv(c.vi, got, c.mh);
        }
        VipDisconnect(c.vi);
    }
    via_conn_close(&c);
}

static void kill_child(int peer, int ready)
{
    struct via_conn c;
    VIP_DESCRIPTOR *d = NULL, *got;
    int i = 0;

    if (via_conn_open(&c, MEM, NULL, NULL) || connect_or_fail(&c, "kill", 0, peer))
        _exit(1);
    d = c.mem;
    for (;;) {
        via_conn_desc(&c, &d[i % 4], (char *)c.mem + 65536, 65536);
        VipPostSend(c.vi, &d[i % 4], c.mh);
        if (i == 4 && write(ready, "x", 1) != 1)
            _exit(1);
        if (i >= 3)
            VipSendWait(c.vi, 5000, &got);
        i++;
    }
}

static void kill_client(int peer)
{
    char before[128], after[128];
    int pipefd[2], status;
    char x;
    pid_t pid;

    in_use(before, sizeof(before));
    if (pipe(pipefd)) {
        cli_result("kill_pipe", 0, "%s", strerror(errno));
        return;
    }
    pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        kill_child(peer, pipefd[1]);
    }
    close(pipefd[1]);
    cli_result("kill_child_streaming", CLI_BOUNDED(30, read(pipefd[0], &x, 1)) == 1,
               "the child did not connect and send");
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    cli_result("kill_child_killed", WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
               "status %#x", status);
    in_use(after, sizeof(after));
    cli_result("kill_resources_free", !strcmp(before, after), "before: %s after: %s", before,
               after);
    close(pipefd[0]);
}

static int role_server(void)
{
    echo_server();
    prot_server();
    disc_server();
    kill_server();
    return cli_failures() != 0;
}

static int role_client(int peer)
{
    echo_client(peer);
    prot_client(peer);
    disc_client(peer);
    kill_client(peer);
    return cli_failures() != 0;
}

/* ---- unbind with a file open ---------------------------------------------------------- */

static sigjmp_buf jump;

static void on_sigbus(int sig)
{
    (void)sig;
    siglongjmp(jump, 1);
}

static int role_hold(void)
{
    struct via_conn c;
    struct stat st;
    volatile uint32_t *db;
    volatile int bus = 0;
    VIP_CQ_HANDLE cq;
    VIP_PROTECTION_HANDLE tag;
    int i;

    if (via_conn_open(&c, MEM, NULL, NULL) || VipCreateCQ(c.nic, 16, &cq) != VIP_SUCCESS) {
        cli_result("hold_open", 0, "open failed");
        return 1;
    }
    /* the VI's doorbell page, as VIPL mapped it: read its state */
    db = (volatile uint32_t *)mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                                   c.fd_probe, VIA_MMAP_DOORBELL(c.vi_number));
    cli_result("hold_doorbell_mapped", db != MAP_FAILED && db[VIA_DB_STATE / 4] == VIA_VI_IDLE,
               "mmap or state");
    printf("READY hold\n");
    fflush(stdout);
    for (i = 0; i < 600 && stat("/tmp/unbound", &st); i++)
        sleep_ms(100);
    signal(SIGBUS, on_sigbus);
    if (!sigsetjmp(jump, 1))
        (void)db[VIA_DB_STATE / 4];
    else
        bus = 1;
    cli_result("hold_sigbus_after_unbind", bus, "the doorbell page could still be read");
    expect("hold_call_after_unbind", VipCreatePtag(c.nic, &tag), VIP_ERROR_RESOURCE);
    expect_errno("hold_ioctl_enodev", ioctl(c.fd_probe, VIA_IOC_QUERY, &(struct via_nic_info){0}),
                 ENODEV);
    via_conn_close(&c);     /* the close after unbind frees what is left */
    cli_result("hold_closed", 1, "closed");
    return cli_failures() != 0;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--peer", NULL };

    if (argc < 2)
        cli_usage_error("a role: local, server, client, hold");
    cli_parse("via_test", argc, argv, 2, known);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(argv[1], "local"))
        return role_local();
    if (!strcmp(argv[1], "server"))
        return role_server();
    if (!strcmp(argv[1], "client"))
        return role_client((int)cli_num("--peer", NULL, 0, 65535, "a node number"));
    if (!strcmp(argv[1], "hold"))
        return role_hold();
    cli_usage_error("unknown role %s", argv[1]);
}
