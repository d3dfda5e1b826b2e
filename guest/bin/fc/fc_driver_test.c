/*
 * fc_driver_test: in-guest tests of the PUMA-III FC driver's user device, /dev/fc0
 * (retrolink/uapi/fc.h; docs/boards/fc-driver.md). Prints "PASS <name>" or
 * "FAIL <name>: reason" per case and exits 1 if any failed.
 *   fc_driver_test --role uapi --peer N    every documented error of open, ioctl and
 *                                          mmap; the DVMA window; sends to N
 *   fc_driver_test --role receiver         what the uapi role sends, in the mapped ring
 *   fc_driver_test --role unbind           the adapter is unbound with the device open
 *                                          and mapped (ENODEV, SIGBUS), then rebound
 *   fc_driver_test --role fork             the channel is the opening process's: a forked
 *                                          child inherits no mapping and gets EACCES; the
 *                                          owner killed while its child holds the file
 * Every wait is bounded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#ifndef __KLIBC__
#include <pthread.h>        /* klibc (the sparc32 nodes) has no threads */
#endif
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "retrolink/regs/fc-regs.h"
#include "retrolink/uapi/fc.h"

#define DEV "/dev/fc0"
#define MAGIC 0x46434452u           /* "FCDR": the receiver knows the test's frames */
#define SENDS 10                    /* the sender's tries, 100 ms apart */
#define WAIT_S 5                    /* the bound on any one wait, guest seconds */

/* errno of a call that must fail with want; "ok" if it succeeded */
static int fails_with(long ret, int want)
{
    return ret < 0 && errno == want;
}

static const char *err_name(long ret)
{
    return ret < 0 ? strerror(errno) : "it succeeded";
}

static void *map(int fd, size_t len, int prot, int flags, uint64_t off)
{
    return mmap(NULL, len, prot, flags, fd, (off_t)off);
}

static volatile uint32_t *reg(void *page, unsigned off)
{
    return (volatile uint32_t *)((char *)page + off);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* a DMA send of len bytes at DVMA addr to dest; the adapter's FC_ERR_* for it */
static uint32_t dma_send(void *regs, uint32_t addr, uint32_t len, uint32_t dest)
{
    int64_t end = now_ms() + WAIT_S * 1000;

    while (*reg(regs, FC_U_TX_BUSY) && now_ms() < end)
        ;
    *reg(regs, FC_U_TX_ADDR) = addr;
    *reg(regs, FC_U_TX_LEN) = len;
    *reg(regs, FC_U_TX_DEST) = dest;
    *reg(regs, FC_U_TX_TAG) = MAGIC;
    *reg(regs, FC_U_TX_GO) = 1;
    return *reg(regs, FC_U_TX_STATUS);
}

/* ---- the uapi role ---------------------------------------------------------------- */

static void test_open(void)
{
    int a = open(DEV, O_RDWR), b = open(DEV, O_RDWR);

    cli_result("open_twice_ebusy", a >= 0 && fails_with(b, EBUSY), "first %d, second: %s",
               a, err_name(b));
    if (b >= 0)
        close(b);
    if (a >= 0)
        close(a);
    a = open(DEV, O_RDWR);
    cli_result("reopen_after_close", a >= 0, "%s", strerror(errno));
    if (a >= 0)
        close(a);
}

static void test_ioctls(int fd, struct fc_info *info)
{
    struct fc_alloc al;
    struct fc_free fr;
    long r;

    r = ioctl(fd, FC_IOC_INFO, info);
    cli_result("info", r == 0 && info->nodes >= 2 && info->node < info->nodes &&
               info->rx_slots >= 16 && info->rx_slot_size == FC_RX_SLOT_SIZE &&
               info->pio_max == FC_PIO_MAX && info->max_payload == FC_MAX_PAYLOAD &&
               info->dvma_pages == FC_DVMA_MAX_PAGES &&
               info->dvma_free == info->dvma_pages - info->rx_slots,
               "ret %ld: node %u of %u, %u slots, %u of %u DVMA pages free", r, info->node,
               info->nodes, info->rx_slots, info->dvma_free, info->dvma_pages);
    cli_result("info_bad_pointer_efault", fails_with(ioctl(fd, FC_IOC_INFO, (void *)8), EFAULT),
               "%s", err_name(-1));
    cli_result("unknown_ioctl_enotty", fails_with(ioctl(fd, _IO(FC_IOC_MAGIC, 99), NULL), ENOTTY),
               "%s", err_name(-1));

    al = (struct fc_alloc){ .size = 0 };
    r = ioctl(fd, FC_IOC_ALLOC, &al);
    cli_result("alloc_zero_einval", fails_with(r, EINVAL), "%s", err_name(r));
    al = (struct fc_alloc){ .size = FC_MAX_SEND + 1ull };
    r = ioctl(fd, FC_IOC_ALLOC, &al);
    cli_result("alloc_too_big_einval", fails_with(r, EINVAL), "%s", err_name(r));
    al = (struct fc_alloc){ .size = 1ull << 40 };
    r = ioctl(fd, FC_IOC_ALLOC, &al);
    cli_result("alloc_huge_einval", fails_with(r, EINVAL), "%s", err_name(r));
    /* 8 MiB is within FC_MAX_SEND but not one contiguous block of the page allocator */
    al = (struct fc_alloc){ .size = 8u << 20 };
    r = ioctl(fd, FC_IOC_ALLOC, &al);
    cli_result("alloc_8mib_enomem", fails_with(r, ENOMEM), "%s", err_name(r));
    cli_result("alloc_bad_pointer_efault",
               fails_with(ioctl(fd, FC_IOC_ALLOC, (void *)8), EFAULT), "%s", err_name(-1));

    fr = (struct fc_free){ .dvma = 12345 };
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_unallocated_enoent", fails_with(r, ENOENT), "%s", err_name(r));
    fr = (struct fc_free){ .dvma = 0 };
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_ring_einval", fails_with(r, EINVAL), "%s", err_name(r));
    fr = (struct fc_free){ .dvma = ~0ull };
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_far_enoent", fails_with(r, ENOENT), "%s", err_name(r));

    /* the DVMA space fills up and empties again */
    uint64_t got[8];
    int n = 0;
    for (; n < 8; n++) {
        al = (struct fc_alloc){ .size = 4u << 20 };
        if (ioctl(fd, FC_IOC_ALLOC, &al))
            break;
        got[n] = al.dvma;
    }
    int full_errno = errno;
    struct fc_info mid;
    ioctl(fd, FC_IOC_INFO, &mid);
    int freed = 0;
    for (int i = 0; i < n; i++) {
        fr = (struct fc_free){ .dvma = got[i] };
        freed += ioctl(fd, FC_IOC_FREE, &fr) == 0;
    }
    struct fc_info after;
    ioctl(fd, FC_IOC_INFO, &after);
    cli_result("dvma_space_fills_and_empties",
               n >= 1 && n < 8 && full_errno == ENOMEM && freed == n &&
               mid.dvma_free == info->dvma_free - n * 1024u && after.dvma_free == info->dvma_free,
               "%d x 4 MiB then %s; %d freed; free pages %u -> %u -> %u", n,
               strerror(full_errno), freed, info->dvma_free, mid.dvma_free, after.dvma_free);
}

static void test_mmap(int fd, const struct fc_info *info)
{
    size_t ring = (size_t)info->rx_slots * FC_RX_SLOT_SIZE;
    int rw = PROT_READ | PROT_WRITE;
    struct fc_alloc al = { .size = 3 * 4096 };
    struct fc_free fr;
    void *p;
    long r;

    p = map(fd, 4096, rw, MAP_SHARED, FC_MMAP_REGS);
    cli_result("mmap_regs", p != MAP_FAILED && *reg(p, FC_U_NODE_ID) == info->node &&
               *reg(p, FC_U_NUM_NODES) == info->nodes, "%s",
               p == MAP_FAILED ? strerror(errno) : "wrong node id");
    if (p != MAP_FAILED) {
        r = mprotect(p, 4096, PROT_READ | PROT_EXEC);
        cli_result("mprotect_exec_refused", r < 0, "mprotect(PROT_EXEC) succeeded");
        munmap(p, 4096);
    }
    p = map(fd, 8192, rw, MAP_SHARED, FC_MMAP_REGS);
    cli_result("mmap_regs_two_pages_einval", p == MAP_FAILED && errno == EINVAL, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    p = map(fd, 4096, rw | PROT_EXEC, MAP_SHARED, FC_MMAP_REGS);
    cli_result("mmap_exec_eperm", p == MAP_FAILED && errno == EPERM, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    p = map(fd, 4096, rw, MAP_PRIVATE, FC_MMAP_REGS);
    cli_result("mmap_private_einval", p == MAP_FAILED && errno == EINVAL, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    p = map(fd, 4096, rw, MAP_SHARED, 4096);
    cli_result("mmap_between_einval", p == MAP_FAILED && errno == EINVAL, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");

    p = map(fd, ring, rw, MAP_SHARED, FC_MMAP_DVMA);
    cli_result("mmap_ring", p != MAP_FAILED, "%s", strerror(errno));
    if (p != MAP_FAILED)
        munmap(p, ring);
    p = map(fd, 4096, rw, MAP_SHARED, FC_MMAP_DVMA);
    cli_result("mmap_part_of_ring_einval", p == MAP_FAILED && errno == EINVAL, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    p = map(fd, 4096, rw, MAP_SHARED, FC_MMAP_DVMA + ring);
    cli_result("mmap_unallocated_einval", p == MAP_FAILED && errno == EINVAL, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");

    r = ioctl(fd, FC_IOC_ALLOC, &al);
    cli_result("alloc", r == 0 && al.dvma >= ring && al.dvma % 4096 == 0, "%s dvma %#llx",
               err_name(r), (unsigned long long)al.dvma);
    if (r)
        return;
    p = map(fd, 4 * 4096, rw, MAP_SHARED, FC_MMAP_DVMA + al.dvma);
    cli_result("mmap_beyond_buffer_einval", p == MAP_FAILED && errno == EINVAL, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    p = map(fd, 2 * 4096, rw, MAP_SHARED, FC_MMAP_DVMA + al.dvma + 4096);
    cli_result("mmap_inside_buffer_einval", p == MAP_FAILED && errno == EINVAL, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    p = map(fd, 3 * 4096, rw, MAP_SHARED, FC_MMAP_DVMA + al.dvma);
    cli_result("mmap_buffer", p != MAP_FAILED, "%s", strerror(errno));
    if (p == MAP_FAILED)
        return;
    memset(p, 0x5a, 3 * 4096);
    fr = (struct fc_free){ .dvma = al.dvma };
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_mapped_ebusy", fails_with(r, EBUSY), "%s", err_name(r));
    /* a split mapping still counts: unmap the middle page, then the rest */
    munmap((char *)p + 4096, 4096);
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_partly_mapped_ebusy", fails_with(r, EBUSY), "%s", err_name(r));
    munmap(p, 4096);
    munmap((char *)p + 2 * 4096, 4096);
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_after_munmap", r == 0, "%s", err_name(r));
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_twice_enoent", fails_with(r, ENOENT), "%s", err_name(r));
}

/* The adapter sends from the file's own DMA memory only. */
static void test_window(int fd, const struct fc_info *info, uint32_t peer)
{
    size_t ring = (size_t)info->rx_slots * FC_RX_SLOT_SIZE;
    struct fc_alloc al = { .size = 4096 };
    void *regs, *buf;
    uint32_t st;

    regs = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_REGS);
    if (regs == MAP_FAILED || ioctl(fd, FC_IOC_ALLOC, &al)) {
        cli_result("window", 0, "setup: %s", strerror(errno));
        return;
    }
    buf = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_DVMA + al.dvma);
    if (buf == MAP_FAILED) {
        cli_result("window", 0, "mmap: %s", strerror(errno));
        return;
    }
    st = dma_send(regs, (uint32_t)(al.dvma + 4096), 64, peer);
    cli_result("send_past_buffer_refused", st == FC_ERR_WINDOW, "status %u", st);
    st = dma_send(regs, (uint32_t)al.dvma + 4000, 200, peer);
    cli_result("send_straddling_end_refused", st == FC_ERR_WINDOW, "status %u", st);
    st = dma_send(regs, (uint32_t)(ring + (8u << 20)), 64, peer);
    cli_result("send_unallocated_refused", st == FC_ERR_WINDOW, "status %u", st);
    st = dma_send(regs, 0xfffff000u, 64, peer);
    cli_result("send_beyond_table_refused", st == FC_ERR_WINDOW, "status %u", st);

    uint32_t *words = buf;
    uint32_t ok = 0;
    for (int i = 0; i < 1024; i++)
        words[i] = MAGIC ^ i;
    for (int i = 0; i < SENDS; i++) {
        st = dma_send(regs, (uint32_t)al.dvma, 4096, peer);
        ok += st == FC_ERR_NONE;
        usleep(100000);
    }
    cli_result("send_from_buffer", ok == SENDS, "%u of %u accepted (last status %u)", ok,
               SENDS, st);
    /* freeing it right after a send: the driver waits for the DMA to be done */
    dma_send(regs, (uint32_t)al.dvma, 4096, peer);
    munmap(buf, 4096);
    struct fc_free fr = { .dvma = al.dvma };
    long r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("free_after_send", r == 0, "%s", err_name(r));
    st = dma_send(regs, (uint32_t)al.dvma, 64, peer);
    cli_result("send_from_freed_refused", st == FC_ERR_WINDOW, "status %u", st);
    munmap(regs, 4096);
}

static int role_uapi(uint32_t peer)
{
    struct fc_info info;
    int fd;

    test_open();
    fd = open(DEV, O_RDWR);
    if (fd < 0) {
        cli_result("open", 0, "%s", strerror(errno));
        return 1;
    }
    test_ioctls(fd, &info);
    test_mmap(fd, &info);
    test_window(fd, &info, peer);
    close(fd);
    return cli_failures() != 0;
}

/* ---- the receiver role -------------------------------------------------------------- */

static int role_receiver(void)
{
    struct fc_info info;
    int fd = open(DEV, O_RDWR);

    if (fd < 0 || ioctl(fd, FC_IOC_INFO, &info)) {
        cli_result("receiver_open", 0, "%s", strerror(errno));
        return 1;
    }
    size_t size = (size_t)info.rx_slots * FC_RX_SLOT_SIZE;
    char *ring = map(fd, size, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_DVMA);
    void *regs = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_REGS);
    if (ring == MAP_FAILED || regs == MAP_FAILED) {
        cli_result("receiver_mmap", 0, "%s", strerror(errno));
        return 1;
    }
    /* the first frame in slot 0: the sender's 4 KiB send, cut into two frames */
    volatile struct fc_rx_slot *s = (volatile struct fc_rx_slot *)ring;
    int64_t end = now_ms() + (WAIT_S + SENDS / 10) * 1000;
    while (!(s->flags & FC_RXS_VALID) && now_ms() < end)
        ;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const uint32_t *words = (const uint32_t *)(ring + FC_RX_PAYLOAD);
    int intact = (s->flags & FC_RXS_VALID) && s->tag == MAGIC && s->offset == 0 &&
                 s->msg_len == 4096 && s->len > 0 && s->len <= FC_MAX_PAYLOAD;
    for (uint32_t i = 0; intact && i < s->len / 4; i++)
        intact = words[i] == (MAGIC ^ i);
    cli_result("receive_into_ring", intact, "flags %#x tag %#x len %u offset %u msg_len %u",
               s->flags, s->tag, s->len, s->offset, s->msg_len);
    s->flags = 0;
    *reg(regs, FC_U_RX_RELEASE) = 1;
    close(fd);
    return cli_failures() != 0;
}

/* ---- the unbind role ------------------------------------------------------------------ */

static sigjmp_buf on_bus;
static void bus_error(int sig) { (void)sig; siglongjmp(on_bus, 1); }

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

/* The last component of a sysfs link of the adapter's device (its name, its bus). */
static int device_link(const char *what, char *out, size_t size)
{
    char path[64], link[PATH_MAX];
    snprintf(path, sizeof(path), "/sys/class/misc/fc0/device%s", what);
    ssize_t n = readlink(path, link, sizeof(link) - 1);
    if (n < 0)
        return -1;
    link[n] = 0;
    const char *name = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
    if (strlen(name) >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(out, name);
    return 0;
}

static int role_unbind(void)
{
    char slot[NAME_MAX + 1], bus_name[NAME_MAX + 1];
    char unbind[NAME_MAX + 32], bind[NAME_MAX + 32];
    struct fc_alloc al = { .size = 4096 };
    struct fc_info info;

    /* the PCI card's driver is on the pci bus, the SBus card's on the platform bus */
    if (device_link("", slot, sizeof(slot)) || device_link("/subsystem", bus_name, sizeof(bus_name))) {
        cli_result("unbind_find_device", 0, "%s", strerror(errno));
        return 1;
    }
    snprintf(unbind, sizeof(unbind), "/sys/bus/%s/drivers/fc/unbind", bus_name);
    snprintf(bind, sizeof(bind), "/sys/bus/%s/drivers/fc/bind", bus_name);
    int fd = open(DEV, O_RDWR);
    void *regs = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_REGS);
    int alloc = ioctl(fd, FC_IOC_ALLOC, &al);
    volatile uint32_t *buf = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                                 FC_MMAP_DVMA + al.dvma);
    if (fd < 0 || regs == MAP_FAILED || alloc || buf == MAP_FAILED) {
        cli_result("unbind_setup", 0, "%s", strerror(errno));
        return 1;
    }
    buf[0] = 1;
    (void)*reg(regs, FC_U_NODE_ID);     /* both mapped and touched */

    if (write_file(unbind, slot)) {
        cli_result("unbind", 0, "unbind %s: %s", slot, strerror(errno));
        return 1;
    }
    long r = ioctl(fd, FC_IOC_INFO, &info);
    cli_result("ioctl_after_unbind_enodev", fails_with(r, ENODEV), "%s", err_name(r));
    void *p = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_REGS);
    cli_result("mmap_after_unbind_enodev", p == MAP_FAILED && errno == ENODEV, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");

    struct sigaction sa = { .sa_handler = bus_error };
    sigaction(SIGBUS, &sa, NULL);
    volatile int bus = 0;
    if (sigsetjmp(on_bus, 1) == 0)
        (void)*reg(regs, FC_U_NODE_ID);
    else
        bus = 1;
    cli_result("regs_sigbus_after_unbind", bus, "the register page was still readable");
    bus = 0;
    if (sigsetjmp(on_bus, 1) == 0)
        (void)buf[0];
    else
        bus = 1;
    cli_result("dma_sigbus_after_unbind", bus, "the DMA buffer was still readable");
    munmap(regs, 4096);
    munmap((void *)buf, 4096);
    close(fd);

    if (write_file(bind, slot)) {
        cli_result("rebind", 0, "bind %s: %s", slot, strerror(errno));
        return 1;
    }
    fd = open(DEV, O_RDWR);
    cli_result("open_after_rebind", fd >= 0 && ioctl(fd, FC_IOC_INFO, &info) == 0, "%s",
               strerror(errno));
    if (fd >= 0)
        close(fd);
    return cli_failures() != 0;
}

/* ---- the fork role ------------------------------------------------------------------ */

/* whether [p, p + len) is mapped in this process (msync: ENOMEM where it is not) */
static int mapped(void *p, size_t len)
{
    return msync(p, len, MS_ASYNC) == 0 || errno != ENOMEM;
}

/* a child's exit: 0 if it reported no FAIL */
static noreturn void child_exit(void)
{
    fflush(stdout);
    _exit(cli_failures() != 0);
}

/* waitpid, bounded; the child's exit status, or -1 */
static int reap(pid_t pid)
{
    int st;

    if (CLI_BOUNDED(WAIT_S, waitpid(pid, &st, 0)) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A child of the owner: every ioctl and mmap of the inherited file is EACCES, and
 * none of the owner's mappings came with the fork. */
static noreturn void forked_child(int fd, void *regs, void *ring, size_t ring_len, void *buf,
                                  uint64_t spare)
{
    struct fc_info info;
    struct fc_alloc al = { .size = 4096 };
    struct fc_free fr = { .dvma = spare };
    long r;
    void *p;

    cli_result("fork_child_inherits_no_mapping",
               !mapped(regs, 4096) && !mapped(ring, ring_len) && !mapped(buf, 4096),
               "regs %d, ring %d, buffer %d still mapped", mapped(regs, 4096),
               mapped(ring, ring_len), mapped(buf, 4096));
    r = ioctl(fd, FC_IOC_INFO, &info);
    cli_result("fork_child_info_eacces", fails_with(r, EACCES), "%s", err_name(r));
    r = ioctl(fd, FC_IOC_ALLOC, &al);
    cli_result("fork_child_alloc_eacces", fails_with(r, EACCES), "%s", err_name(r));
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("fork_child_free_eacces", fails_with(r, EACCES), "%s", err_name(r));
    p = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_REGS);
    cli_result("fork_child_mmap_regs_eacces", p == MAP_FAILED && errno == EACCES, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    p = map(fd, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_DVMA);
    cli_result("fork_child_mmap_ring_eacces", p == MAP_FAILED && errno == EACCES, "%s",
               p == MAP_FAILED ? strerror(errno) : "mapped");
    child_exit();   /* its copy of the file goes with it; the owner's stays */
}

#ifndef __KLIBC__
static void *thread_info(void *arg)
{
    struct fc_info info;

    return (void *)(intptr_t)(ioctl(*(int *)arg, FC_IOC_INFO, &info) ? errno : 0);
}

/* A thread of the owner (the same mm) may use the channel. */
static void test_owner_thread(int fd)
{
    pthread_t t;
    void *terr = (void *)(intptr_t)-1;
    if (pthread_create(&t, NULL, thread_info, &fd) == 0)
        pthread_join(t, &terr);
    cli_result("fork_owner_thread_may_call", terr == NULL, "INFO from a thread: %s",
               (intptr_t)terr < 0 ? "no thread" : strerror((int)(intptr_t)terr));
}
#else
static void test_owner_thread(int fd)
{
    (void)fd;
    printf("SKIP fork_owner_thread_may_call: klibc has no threads\n");
}
#endif

/* The owner forks a child that tries the file; the owner's own use goes on. */
static void test_forked_child(void)
{
    int fd = open(DEV, O_RDWR);
    struct fc_info info, after;
    struct fc_alloc al = { .size = 4096 }, spare = { .size = 4096 };

    if (fd < 0 || ioctl(fd, FC_IOC_INFO, &info)) {
        cli_result("fork_setup", 0, "open: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t ring_len = (size_t)info.rx_slots * FC_RX_SLOT_SIZE;
    void *regs = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_REGS);
    void *ring = map(fd, ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_DVMA);
    int allocs = ioctl(fd, FC_IOC_ALLOC, &al) || ioctl(fd, FC_IOC_ALLOC, &spare);
    volatile uint32_t *buf = allocs ? MAP_FAILED :
        map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_DVMA + al.dvma);
    if (regs == MAP_FAILED || ring == MAP_FAILED || buf == MAP_FAILED) {
        /* the owner-killed case needs the channel back: every mapping holds the file */
        cli_result("fork_setup", 0, "%s", strerror(errno));
        if (regs != MAP_FAILED)
            munmap(regs, 4096);
        if (ring != MAP_FAILED)
            munmap(ring, ring_len);
        if (buf != MAP_FAILED)
            munmap((void *)buf, 4096);
        close(fd);
        return;
    }
    buf[0] = MAGIC;
    (void)*reg(regs, FC_U_NODE_ID);
    /* the mappings cannot be made inheritable */
    cli_result("madvise_dofork_refused",
               fails_with(madvise(regs, 4096, MADV_DOFORK), EINVAL) &&
               fails_with(madvise(ring, ring_len, MADV_DOFORK), EINVAL) &&
               fails_with(madvise((void *)buf, 4096, MADV_DOFORK), EINVAL),
               "MADV_DOFORK accepted on a mapping of the channel");

    pid_t pid = fork();
    if (pid == 0)
        forked_child(fd, regs, ring, ring_len, (void *)buf, spare.dvma);
    int st = pid < 0 ? -1 : reap(pid);
    cli_result("fork_child_exited", st == 0, "fork %s, exit status %d",
               pid < 0 ? strerror(errno) : "ok", st);

    /* the owner: its mappings and its DVMA space as they were, its threads may call */
    long r = ioctl(fd, FC_IOC_INFO, &after);
    cli_result("fork_owner_still_works",
               r == 0 && after.dvma_free == info.dvma_free - 2 && buf[0] == MAGIC &&
               *reg(regs, FC_U_NODE_ID) == info.node,
               "INFO %s, %u DVMA pages free (%u expected), buffer %#x", err_name(r),
               after.dvma_free, info.dvma_free - 2, buf[0]);
    test_owner_thread(fd);
    struct fc_free fr = { .dvma = spare.dvma };
    r = ioctl(fd, FC_IOC_FREE, &fr);
    cli_result("fork_owner_frees_its_buffer", r == 0, "%s", err_name(r));
    munmap(regs, 4096);
    munmap(ring, ring_len);
    munmap((void *)buf, 4096);
    close(fd);
    fd = open(DEV, O_RDWR);
    cli_result("fork_reopen_after_close", fd >= 0, "%s", strerror(errno));
    if (fd >= 0)
        close(fd);
}

/*
 * The owner is killed while its child holds the file: the channel stays taken (EBUSY)
 * and unusable (EACCES) until the child's close, the last, frees it.
 */
static void test_owner_killed(void)
{
    int to_test[2], to_child[2];
    pid_t owner, child = -1;
    char c;

    prctl(PR_SET_CHILD_SUBREAPER, 1);   /* the orphaned child is reaped here */
    if (pipe(to_test) || pipe(to_child)) {
        cli_result("owner_killed_setup", 0, "pipe: %s", strerror(errno));
        return;
    }
    owner = fork();
    if (owner == 0) {
        /* the owner: opens and maps the channel, forks, then waits to be killed */
        struct fc_info info;
        int fd = open(DEV, O_RDWR);
        void *regs = map(fd, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, FC_MMAP_REGS);
        if (fd < 0 || ioctl(fd, FC_IOC_INFO, &info) || regs == MAP_FAILED ||
            map(fd, (size_t)info.rx_slots * FC_RX_SLOT_SIZE, PROT_READ | PROT_WRITE,
                MAP_SHARED, FC_MMAP_DVMA) == MAP_FAILED)
            _exit(1);
        pid_t pid = fork();
        if (pid == 0) {
            /* the child: waits until the owner is gone, tries the file, closes it */
            long r = -1;
            close(to_child[1]);     /* the test's end going away is EOF */
            if (CLI_BOUNDED(WAIT_S, read(to_child[0], &c, 1)) == 1)
                r = ioctl(fd, FC_IOC_INFO, &info);
            cli_result("orphan_child_info_eacces", fails_with(r, EACCES), "%s",
                       err_name(r));
            close(fd);      /* the last close */
            (void)!write(to_test[1], "c", 1);
            child_exit();
        }
        (void)!write(to_test[1], &pid, sizeof(pid));
        pause();
        _exit(1);
    }
    close(to_test[1]);      /* an owner or child gone early is EOF, not a timeout */
    close(to_child[0]);
    if (owner < 0 || CLI_BOUNDED(WAIT_S, read(to_test[0], &child, sizeof(child))) !=
        sizeof(child) || child <= 0) {
        cli_result("owner_killed_setup", 0, "the owner did not start: %s", strerror(errno));
        if (owner > 0) {
            kill(owner, SIGKILL);
            reap(owner);
        }
        return;
    }
    kill(owner, SIGKILL);
    int st = reap(owner);
    int fd = open(DEV, O_RDWR);
    cli_result("owner_killed_child_holds_ebusy",
               st == 128 + SIGKILL && fails_with(fd, EBUSY), "owner's status %d, open: %s",
               st, fd < 0 ? strerror(errno) : "opened");
    if (fd >= 0)
        close(fd);
    (void)!write(to_child[1], "g", 1);
    long r = CLI_BOUNDED(WAIT_S, read(to_test[0], &c, 1));
    fd = open(DEV, O_RDWR);
    struct fc_info info;
    cli_result("open_after_orphan_closed",
               r == 1 && fd >= 0 && ioctl(fd, FC_IOC_INFO, &info) == 0 &&
               info.dvma_free == info.dvma_pages - info.rx_slots,
               "the child %s; open: %s", r == 1 ? "closed" : "did not close",
               fd < 0 ? strerror(errno) : "ok");
    if (fd >= 0)
        close(fd);
    st = reap(child);
    cli_result("orphan_child_exited", st == 0, "exit status %d", st);
    close(to_test[0]);
    close(to_child[1]);
}

static int role_fork(void)
{
    test_forked_child();
    test_owner_killed();
    return cli_failures() != 0;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--role", "--peer", NULL };

    setvbuf(stdout, NULL, _IOLBF, 0);
    cli_parse("fc_driver_test", argc, argv, 1, known);
    const char *role = cli_str("--role", NULL);
    if (!strcmp(role, "uapi"))
        return role_uapi((uint32_t)cli_num("--peer", NULL, 0, 255, "a port id"));
    if (!strcmp(role, "receiver"))
        return role_receiver();
    if (!strcmp(role, "unbind"))
        return role_unbind();
    if (!strcmp(role, "fork"))
        return role_fork();
    cli_usage_error("--role %s: uapi, receiver, unbind or fork", role);
}
