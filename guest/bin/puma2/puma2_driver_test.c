/*
 * puma2_driver_test: the PUMA-II driver's user interface (uapi/puma2.h) from a process,
 * for tests/boards/puma2/test_puma2_driver.py. Prints "PASS name" or "FAIL name: why".
 *
 *   --role uapi    the documented errors of /dev/puma2's mmap and ioctls
 *   --role spin    write one DSM page forever (another node doing the same makes every
 *                  write a fault that moves the page): the test kills it mid-fault
 *   --role hold    map and write a DSM page, wait for the file /tmp/unbound, touch the
 *                  page again: SIGBUS once the board is unbound
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "retrolink/regs/puma2-regs.h"
#include "retrolink/uapi/puma2.h"

#define PAGE 4096
/* DSM pages puma2ctl does not use (it takes the last ones): spin's, shared by the
 * nodes; hold's; then one a node for uapi's (another node's writes would move it) */
#define SPIN_PAGE 0
#define HOLD_PAGE 1
#define UAPI_PAGE(node) (2 + (node))

static sigjmp_buf jump;

static void on_sigbus(int sig)
{
    (void)sig;
    siglongjmp(jump, 1);
}

static int board(struct puma2_info *info)
{
    int fd = open("/dev/puma2", O_RDWR);

    if (fd < 0 || ioctl(fd, PUMA2_IOC_INFO, info)) {
        printf("FAIL open: /dev/puma2: %s\n", strerror(errno));
        return -1;
    }
    return fd;
}

/* One DSM page of the board, mapped read-write; NULL if it cannot be. */
static volatile uint32_t *map_page(int fd, unsigned page)
{
    void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)page * PAGE);

    return p == MAP_FAILED ? NULL : p;
}

static void expect_mmap(int fd, const char *name, size_t len, int prot, int flags, off_t off,
                        int err)
{
    void *p = mmap(NULL, len, prot, flags, fd, off);

    cli_result(name, p == MAP_FAILED && errno == err, "mmap gave %s (%s), expected %s",
               p == MAP_FAILED ? "MAP_FAILED" : "a mapping", strerror(errno), strerror(err));
    if (p != MAP_FAILED)
        munmap(p, len);
}

static void expect_ioctl(int fd, const char *name, unsigned long cmd, void *arg, int err)
{
    int r = ioctl(fd, cmd, arg);

    cli_result(name, r < 0 && errno == err, "ioctl returned %d (%s), expected %s", r,
               strerror(errno), strerror(err));
}

static int uapi(void)
{
    struct puma2_info info;
    int fd = board(&info);

    if (fd < 0)
        return 1;
    off_t end = (off_t)info.dsm_pages * PAGE;
    expect_mmap(fd, "mmap_private_refused", PAGE, PROT_READ, MAP_PRIVATE, 0, EINVAL);
    expect_mmap(fd, "mmap_exec_refused", PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, 0, EPERM);
    expect_mmap(fd, "mmap_past_end_refused", 2 * PAGE, PROT_READ, MAP_SHARED, end - PAGE,
                EINVAL);
    expect_mmap(fd, "mmap_offset_past_end_refused", PAGE, PROT_READ, MAP_SHARED, end + PAGE,
                EINVAL);
    expect_ioctl(fd, "ioctl_unknown_enotty", _IO('P', 99), NULL, ENOTTY);
    expect_ioctl(fd, "info_bad_pointer_efault", PUMA2_IOC_INFO, (void *)16, EFAULT);
    struct puma2_fetch f = { .first = 0, .pages = 1, .op = 7 };
    expect_ioctl(fd, "fetch_bad_op_einval", PUMA2_IOC_FETCH, &f, EINVAL);
    f = (struct puma2_fetch){ .first = info.dsm_pages - 1, .pages = 2, .op = PUMA2_OP_READ };
    expect_ioctl(fd, "fetch_past_end_einval", PUMA2_IOC_FETCH, &f, EINVAL);
    f = (struct puma2_fetch){ .first = 0, .pages = 1, .op = PUMA2_OP_READ, .reserved = 1 };
    expect_ioctl(fd, "fetch_reserved_einval", PUMA2_IOC_FETCH, &f, EINVAL);

    /* a mapped page, held here: FETCH of it is refused, the bytes are the mapping's */
    volatile uint32_t *p = map_page(fd, UAPI_PAGE(info.node));
    if (!p) {
        cli_result("mapped_page_written", 0, "mmap: %s", strerror(errno));
    } else {
        p[0] = 0x12345678;
        p[1023] = 0x9abcdef0;
        cli_result("mapped_page_written", p[0] == 0x12345678 && p[1023] == 0x9abcdef0,
                   "read back %#x %#x", p[0], p[1023]);
        f = (struct puma2_fetch){ .first = UAPI_PAGE(info.node), .pages = 1,
                                  .op = PUMA2_OP_READ };
        expect_ioctl(fd, "fetch_of_mapped_page_ebusy", PUMA2_IOC_FETCH, &f, EBUSY);
        munmap((void *)p, PAGE);
    }
    close(fd);
    return cli_failures() != 0;
}

static int spin(void)
{
    struct puma2_info info;
    int fd = board(&info);

    if (fd < 0)
        return 1;
    volatile uint32_t *p = map_page(fd, SPIN_PAGE);
    if (!p)
        return 1;
    for (uint32_t i = 0;; i++)
        __atomic_fetch_add(&p[info.node], 1, __ATOMIC_SEQ_CST);
}

static int hold(void)
{
    struct puma2_info info;
    struct stat st;
    int fd = board(&info);

    if (fd < 0)
        return 1;
    volatile uint32_t *p = map_page(fd, HOLD_PAGE);
    if (!p)
        return 1;
    p[0] = 42;
    printf("held\n");
    fflush(stdout);
    while (stat("/tmp/unbound", &st))
        usleep(10000);
    signal(SIGBUS, on_sigbus);
    if (sigsetjmp(jump, 1)) {
        cli_result("sigbus_after_unbind", 1, " ");
        return 0;
    }
    uint32_t v = p[0];
    cli_result("sigbus_after_unbind", 0, "the page read %u after the unbind", v);
    return 1;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--role", NULL };

    cli_parse("puma2_driver_test", argc, argv, 1, known);
    const char *role = cli_str("--role", NULL);
    if (!strcmp(role, "uapi"))
        return uapi();
    if (!strcmp(role, "spin"))
        return spin();
    if (!strcmp(role, "hold"))
        return hold();
    cli_usage_error("--role must be uapi, spin or hold");
}
