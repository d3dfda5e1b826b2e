/*
 * c3_raw: message communication between two nodes with no driver, the interface driven
 * from user space (tests/boards/cenju3/test_c3_guest.py): BAR0 through sysfs, the bus
 * master bit through the config file, the rings, receive table and slots in locked
 * pages whose physical addresses /proc/self/pagemap gives (the interface takes physical
 * addresses only). A check of the device and the network in real guests, and a small
 * example of the contract (cenju3-regs.h) for drivers.
 *
 *   c3_raw --role recv --count N          take N messages; per message:
 *                                         "RESULT c3_arrive size=LEN value=T_NS"
 *   c3_raw --role send --peer P --sizes 4,508 [--wait-us 50000]
 *                                         wait, then one MSG of each size to P; per
 *                                         message: "RESULT c3_done size=LEN value=T_NS"
 * T_NS is the virtual time in the event the interface wrote: for c3_done when the packet
 * left the sender's interface, for c3_arrive when it was in the receiver's slot.
 */
#include "c3_bar.h"
#include "cli/cli.h"

#define PAGE            4096
#define RING            8               /* entries in either ring */
#define SLOTS           2               /* slots per peer */
#define MAX_PEERS       8
#define WAIT_S          20              /* bounded waits */

static volatile uint32_t *regs;

static uint32_t rd(uint32_t off)
{
    return regs[off / 4];
}

static void wr(uint32_t off, uint32_t val)
{
    regs[off / 4] = val;
}

static noreturn void die(const char *what)
{
    c3_die("c3_raw", what);
    exit(1);
}

/* ---- memory the interface reaches: locked pages and their physical addresses ---- */

static uint8_t *mem;
static uint64_t phys[8];

static void alloc_pages(int n)
{
    mem = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) {
        die("mmap pages");
    }
    memset(mem, 0, (size_t)n * PAGE);
    int pm = open("/proc/self/pagemap", O_RDONLY);
    if (pm < 0) {
        die("/proc/self/pagemap");
    }
    for (int i = 0; i < n; i++) {
        uint64_t e;
        off_t at = (off_t)((uintptr_t)(mem + i * PAGE) / PAGE) * 8;
        if (pread(pm, &e, 8, at) != 8 || !(e >> 63) || !(e & ((1ull << 55) - 1))) {
            die("pagemap: a page without a frame");
        }
        phys[i] = (e & ((1ull << 55) - 1)) * PAGE;
    }
    close(pm);
}

/* page 0: request ring at 0, event ring at 1024, receive table at 2048;
 * pages 1..4: slots (peer p, slot j) at (p * SLOTS + j) * 512; page 5: data */
#define REQ_OFF         0
#define EVQ_OFF         1024
#define RXT_OFF         2048
#define SLOT_PAGE       1
#define DATA_PAGE       5
#define NPAGES          6

static uint64_t pa(int page, uint32_t off)
{
    return phys[page] + off;
}

static uint8_t *va(int page, uint32_t off)
{
    return mem + page * PAGE + off;
}

static void *slot_va(uint32_t p, uint32_t j)
{
    uint32_t k = p * SLOTS + j;
    return va(SLOT_PAGE + k / 8, (k % 8) * 512);
}

static uint64_t slot_pa(uint32_t p, uint32_t j)
{
    uint32_t k = p * SLOTS + j;
    return pa(SLOT_PAGE + k / 8, (k % 8) * 512);
}

static void setup(void)
{
    uint32_t nodes = rd(C3_REG_NUM_NODES);

    if (nodes > MAX_PEERS) {
        errno = ERANGE;
        die("more nodes than this program has slots for");
    }
    alloc_pages(NPAGES);
    volatile uint64_t *table = (volatile uint64_t *)va(0, RXT_OFF);
    for (uint32_t p = 0; p < nodes; p++) {
        for (uint32_t j = 0; j < SLOTS; j++) {
            table[p * SLOTS + j] = slot_pa(p, j);
        }
    }
    wr(C3_REG_CTRL, 0);
    wr(C3_REG_REQ_BASE_LO, (uint32_t)pa(0, REQ_OFF));
    wr(C3_REG_REQ_BASE_HI, (uint32_t)(pa(0, REQ_OFF) >> 32));
    wr(C3_REG_REQ_SIZE, RING);
    wr(C3_REG_EVQ_BASE_LO, (uint32_t)pa(0, EVQ_OFF));
    wr(C3_REG_EVQ_BASE_HI, (uint32_t)(pa(0, EVQ_OFF) >> 32));
    wr(C3_REG_EVQ_SIZE, RING);
    wr(C3_REG_RXT_BASE_LO, (uint32_t)pa(0, RXT_OFF));
    wr(C3_REG_RXT_BASE_HI, (uint32_t)(pa(0, RXT_OFF) >> 32));
    wr(C3_REG_RXT_SLOTS, SLOTS);
    wr(C3_REG_IRQ_MASK, 0);             /* polled */
    wr(C3_REG_CTRL, C3_CTRL_ENABLE);
    if (!(rd(C3_REG_STATUS) & C3_STATUS_ENABLED)) {
        fprintf(stderr, "c3_raw: ENABLE refused, C3_ERR %u\n", rd(C3_REG_ERROR));
        exit(1);
    }
}

/* The next event (polling its phase bit, WAIT_S at most); consumes it. */
static struct c3_event next_event(void)
{
    static uint32_t consumed;
    volatile struct c3_event *ev =
        (volatile struct c3_event *)va(0, EVQ_OFF) + consumed % RING;
    uint8_t phase = (consumed / RING) & 1 ? 0 : C3_EVF_PHASE;
    long spins = 0;

    while ((ev->flags & C3_EVF_PHASE) != phase) {
        if (++spins % 1000 == 0) {
            usleep(10);
        }
        if (spins > (long)WAIT_S * 100000) {
            errno = ETIMEDOUT;
            die("waiting for an event");
        }
    }
    struct c3_event copy = *(struct c3_event *)ev;
    wr(C3_REG_EVQ_TAIL, ++consumed);
    return copy;
}

static void cache_op(uint32_t op, uint64_t addr, uint32_t len)
{
    wr(C3_REG_CACHE_ADDR_LO, (uint32_t)addr);
    wr(C3_REG_CACHE_ADDR_HI, (uint32_t)(addr >> 32));
    wr(C3_REG_CACHE_LEN, len);
    wr(C3_REG_CACHE_OP, op);
}

/* ---- the two roles ------------------------------------------------------------- */

static int receive(long count)
{
    for (long i = 0; i < count; i++) {
        struct c3_event ev = next_event();
        if (ev.kind != C3_EV_MSG) {
            fprintf(stderr, "c3_raw: event kind %u (status %u) where a message was due\n",
                    ev.kind, ev.status);
            return 1;
        }
        if (ev.src >= MAX_PEERS || ev.info >= SLOTS) {
            fprintf(stderr, "c3_raw: message from node %u in slot %u\n", ev.src, ev.info);
            return 1;
        }
        /* what the interface wrote, out of the CPU's cache before it is read */
        cache_op(C3_CACHE_INVAL, slot_pa(ev.src, ev.info), C3_SLOT_SIZE);
        volatile uint32_t *hdr = slot_va(ev.src, ev.info);
        uint32_t len = C3_SLOT_LEN(*hdr);
        const uint8_t *data = (const uint8_t *)hdr + C3_SLOT_PAYLOAD;
        int ok = len == ev.len && (*hdr & C3_SLOT_FULL);
        for (uint32_t k = 0; ok && k < len; k++) {
            ok = data[k] == (uint8_t)(k * 7 + len);
        }
        if (!ok) {
            fprintf(stderr, "c3_raw: message %ld from node %u in slot %u is wrong\n", i,
                    ev.src, ev.info);
            return 1;
        }
        *hdr = 0;                           /* the slot is free again */
        printf("RESULT c3_arrive size=%u value=%llu\n", len, (unsigned long long)ev.t_ns);
        fflush(stdout);
    }
    return 0;
}

static int send(uint32_t peer, const long *sizes, int n, long wait_us)
{
    usleep(wait_us);                        /* both interfaces on the network */
    for (int i = 0; i < n; i++) {
        uint32_t len = (uint32_t)sizes[i];
        uint8_t *data = va(DATA_PAGE, 0);
        for (uint32_t k = 0; k < len; k++) {
            data[k] = (uint8_t)(k * 7 + len);
        }
        cache_op(C3_CACHE_FLUSH, pa(DATA_PAGE, 0), len);
        struct c3_req *r = (struct c3_req *)va(0, REQ_OFF) + i % RING;
        *r = (struct c3_req) { .op = C3_OP_MSG, .dest = peer, .len = len,
                               .src = pa(DATA_PAGE, 0), .tag = i, .flags = C3_REQF_EVENT };
        wr(C3_REG_REQ_TAIL, i + 1);
        struct c3_event ev = next_event();
        if (ev.kind != C3_EV_DONE || ev.status != C3_ERR_NONE || ev.tag != (uint32_t)i) {
            fprintf(stderr, "c3_raw: request %d: event kind %u status %u\n", i, ev.kind,
                    ev.status);
            return 1;
        }
        printf("RESULT c3_done size=%u value=%llu\n", len, (unsigned long long)ev.t_ns);
        fflush(stdout);
        usleep(1000);                       /* the network idle again */
    }
    if (rd(C3_REG_CACHE_MISSES) != 0) {
        fprintf(stderr, "c3_raw: %u requests went without a flush\n",
                rd(C3_REG_CACHE_MISSES));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const known[] = { "--role", "--count", "--peer", "--sizes",
                                         "--wait-us", NULL };
    long sizes[64];

    cli_parse("c3_raw", argc, argv, 1, known);
    const char *role = cli_str("--role", NULL);
    if (strcmp(role, "send") && strcmp(role, "recv")) {
        cli_usage_error("--role is send or recv, not %s", role);
    }
    regs = c3_map_bar0("c3_raw");
    setup();
    if (!strcmp(role, "recv")) {
        return receive(cli_num("--count", NULL, 1, 1000000, "messages to take"));
    }
    long peer = cli_num("--peer", NULL, 0, MAX_PEERS - 1, "a node");
    int n = cli_nums("--sizes", 1, C3_MSG_MAX, sizes, 64);
    return send((uint32_t)peer, sizes, n, cli_num("--wait-us", "50000", 0, 10000000,
                                                  "time for both to be on the network"));
}
