/* fcraw: see fcraw.h and docs/boards/fm.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fcraw.h"
#include "retrolink/regs/fc-regs.h"
#include "retrolink/uapi/fc.h"

#define FCRAW_MAX_BUFS 64
#define PAGE 4096u

/* Registers the library writes and remembers (they keep their value): a send
 * writes only those that changed, each write being ~200 ns of SBus time. */
enum { R_TX_ADDR, R_TX_LEN, R_TX_DEST, R_TX_TAG, R_PIO_TAG, R_CACHED };
static const unsigned cached_offset[R_CACHED] = {
    FC_U_TX_ADDR, FC_U_TX_LEN, FC_U_TX_DEST, FC_U_TX_TAG, FC_U_PIO_TAG,
};

struct fcraw_buf {
    unsigned char *p;
    size_t size;            /* whole pages */
    uint32_t dvma;
};

struct fcraw {
    int fd;
    struct fc_info info;
    volatile unsigned char *regs;
    unsigned char *ring;
    size_t ring_bytes;
    unsigned head;          /* the next slot to read */
    unsigned unreleased;    /* consumed, not yet given back */
    unsigned batch;
    int dma_maybe_busy;     /* a DMA started since FC_U_TX_BUSY last read 0 */
    int tx_status;
    uint32_t txq_empty;     /* FC_U_TXQ_FREE with nothing queued (read at open) */
    int64_t timeout_ns;
    uint32_t cache[R_CACHED];
    unsigned cache_valid;   /* bit per R_* */
    struct fcraw_buf bufs[FCRAW_MAX_BUFS];
    int last_buf;           /* where fcraw_dvma found the last address: tried first */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint32_t rd(fcraw_t *raw, unsigned off)
{
    return *(volatile uint32_t *)(raw->regs + off);
}

static void wr(fcraw_t *raw, unsigned off, uint32_t v)
{
    *(volatile uint32_t *)(raw->regs + off) = v;
}

static void wr_cached(fcraw_t *raw, int r, uint32_t v)
{
    if ((raw->cache_valid & (1u << r)) && raw->cache[r] == v) {
        return;
    }
    wr(raw, cached_offset[r], v);
    raw->cache[r] = v;
    raw->cache_valid |= 1u << r;
}

static int fail(int e)
{
    errno = e;
    return -1;
}

/* What a refused send's FC_ERR_* means as an errno (docs/boards/fm.md). */
static int status_errno(int status)
{
    switch (status) {
    case FC_ERR_WINDOW:     return EFAULT;
    case FC_ERR_LENGTH:     return EMSGSIZE;
    case FC_ERR_DEST:       return EINVAL;
    case FC_ERR_BUSY:       return ETIMEDOUT;   /* still busy when the wait ran out */
    case FC_ERR_DISABLED:   return ENODEV;
    case FC_ERR_LINK_DOWN:  return EHOSTUNREACH;
    default:                return EIO;
    }
}

fcraw_t *fcraw_open(const char *path)
{
    fcraw_t *raw = calloc(1, sizeof(*raw));
    if (!raw) {
        return NULL;
    }
    raw->timeout_ns = 10000000000LL;
    raw->fd = open(path ? path : "/dev/fc0", O_RDWR | O_CLOEXEC);
    if (raw->fd < 0 || ioctl(raw->fd, FC_IOC_INFO, &raw->info) < 0) {
        goto fail;
    }
    if (raw->info.rx_slots < 1 || raw->info.rx_slots > FC_RX_MAX_SLOTS ||
        raw->info.rx_slot_size != FC_RX_SLOT_SIZE || raw->info.nodes < 1 ||
        raw->info.pio_max > FC_PIO_MAX || raw->info.max_payload > FC_MAX_PAYLOAD ||
        raw->info.max_payload == 0) {
        errno = EPROTO;     /* a driver this library does not understand */
        goto fail;
    }
    void *regs = mmap(NULL, FC_CHAN_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, raw->fd,
                      FC_MMAP_REGS);
    if (regs == MAP_FAILED) {
        goto fail;
    }
    raw->regs = regs;
    raw->txq_empty = rd(raw, FC_U_TXQ_FREE);
    raw->ring_bytes = (size_t)raw->info.rx_slots * FC_RX_SLOT_SIZE;
    void *ring = mmap(NULL, raw->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, raw->fd,
                      FC_MMAP_DVMA + 0);
    if (ring == MAP_FAILED) {
        goto fail;
    }
    raw->ring = ring;
    raw->batch = raw->info.rx_slots / 8 ? raw->info.rx_slots / 8 : 1;
    raw->dma_maybe_busy = 1;
    return raw;

fail:;
    int e = errno;
    if (raw->regs) {
        munmap((void *)raw->regs, FC_CHAN_PAGE_SIZE);
    }
    if (raw->fd >= 0) {
        close(raw->fd);
    }
    free(raw);
    errno = e;
    return NULL;
}

int fcraw_close(fcraw_t *raw)
{
    if (!raw) {
        return fail(EINVAL);
    }
    /* closing disables the channel, which drops what it has not sent yet: let the
       frames already queued leave first (bounded: a peer may be gone) */
    int64_t deadline = now_ns() + 1000000000LL;
    while ((raw->dma_maybe_busy && fcraw_dma_busy(raw)) ||
           rd(raw, FC_U_TXQ_FREE) < raw->txq_empty) {
        if (now_ns() > deadline) {
            break;
        }
    }
    for (int i = 0; i < FCRAW_MAX_BUFS; i++) {
        if (raw->bufs[i].p) {
            munmap(raw->bufs[i].p, raw->bufs[i].size);
        }
    }
    munmap(raw->ring, raw->ring_bytes);
    munmap((void *)raw->regs, FC_CHAN_PAGE_SIZE);
    int r = close(raw->fd);     /* the driver disables the channel and frees the memory */
    free(raw);
    return r;
}

int fcraw_node_id(const fcraw_t *raw) { return raw ? (int)raw->info.node : fail(EINVAL); }
int fcraw_num_nodes(const fcraw_t *raw) { return raw ? (int)raw->info.nodes : fail(EINVAL); }
int fcraw_rx_slots(const fcraw_t *raw) { return raw ? (int)raw->info.rx_slots : fail(EINVAL); }
int fcraw_pio_max(const fcraw_t *raw) { return raw ? (int)raw->info.pio_max : fail(EINVAL); }
int fcraw_tx_status(const fcraw_t *raw) { return raw ? raw->tx_status : fail(EINVAL); }
int fcraw_unreleased(const fcraw_t *raw) { return raw ? (int)raw->unreleased : fail(EINVAL); }

int fcraw_max_payload(const fcraw_t *raw)
{
    return raw ? (int)raw->info.max_payload : fail(EINVAL);
}

int fcraw_peer_up(fcraw_t *raw, int node)
{
    if (!raw) {
        return fail(EINVAL);
    }
    if (ioctl(raw->fd, FC_IOC_INFO, &raw->info) < 0) {
        return -1;
    }
    if (node < 0 || node >= (int)raw->info.nodes) {
        return fail(EINVAL);
    }
    return node < 32 ? (int)((raw->info.peers_up >> node) & 1) : 1;
}

int fcraw_set_timeout(fcraw_t *raw, int64_t ns)
{
    if (!raw || ns <= 0) {
        return fail(EINVAL);
    }
    raw->timeout_ns = ns;
    return 0;
}

/* ---- DMA memory ---------------------------------------------------------- */

void *fcraw_alloc(fcraw_t *raw, size_t size)
{
    if (!raw || size == 0 || size > FC_MAX_SEND) {
        errno = EINVAL;
        return NULL;
    }
    int slot = 0;
    while (slot < FCRAW_MAX_BUFS && raw->bufs[slot].p) {
        slot++;
    }
    if (slot == FCRAW_MAX_BUFS) {
        errno = ENOSPC;     /* the library's table of buffers is full: free one */
        return NULL;
    }
    size = (size + PAGE - 1) & ~(size_t)(PAGE - 1);
    struct fc_alloc a = { .size = size };
    if (ioctl(raw->fd, FC_IOC_ALLOC, &a) < 0) {
        return NULL;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, raw->fd,
                   FC_MMAP_DVMA + a.dvma);
    if (p == MAP_FAILED) {
        int e = errno;
        struct fc_free f = { .dvma = a.dvma };
        ioctl(raw->fd, FC_IOC_FREE, &f);
        errno = e;
        return NULL;
    }
    raw->bufs[slot] = (struct fcraw_buf){ .p = p, .size = size, .dvma = (uint32_t)a.dvma };
    return p;
}

int fcraw_free(fcraw_t *raw, void *buf)
{
    if (!raw || !buf) {
        return fail(EINVAL);
    }
    for (int i = 0; i < FCRAW_MAX_BUFS; i++) {
        struct fcraw_buf *b = &raw->bufs[i];
        if (b->p == buf) {
            /* a DMA may still read it: the adapter must be done before it goes */
            if (raw->dma_maybe_busy && fcraw_dma_wait(raw) < 0) {
                return -1;
            }
            munmap(b->p, b->size);
            struct fc_free f = { .dvma = b->dvma };
            int r = ioctl(raw->fd, FC_IOC_FREE, &f);
            *b = (struct fcraw_buf){ 0 };
            return r;
        }
    }
    return fail(EINVAL);    /* not a buffer fcraw_alloc gave */
}

static int inside(const struct fcraw_buf *b, const unsigned char *c, size_t len)
{
    return b->p && c >= b->p && c < b->p + b->size && len <= (size_t)(b->p + b->size - c);
}

int fcraw_dvma(const fcraw_t *raw, const void *p, size_t len, uint32_t *dvma)
{
    if (!raw || !p || !dvma) {
        return fail(EINVAL);
    }
    const unsigned char *c = p;
    /* sends mostly come from the buffer of the last one: a scan of the table costs
       hundreds of instructions, which is modelled time */
    int i = raw->last_buf;
    if (!inside(&raw->bufs[i], c, len)) {
        for (i = 0; i < FCRAW_MAX_BUFS && !inside(&raw->bufs[i], c, len); i++) {
        }
        if (i == FCRAW_MAX_BUFS) {
            return fail(EFAULT);    /* not (wholly) inside DMA memory from fcraw_alloc */
        }
        ((fcraw_t *)raw)->last_buf = i;
    }
    *dvma = raw->bufs[i].dvma + (uint32_t)(c - raw->bufs[i].p);
    return 0;
}

/* ---- sends --------------------------------------------------------------- */

static int check_dest(const fcraw_t *raw, int dest)
{
    return dest < 0 || dest >= (int)raw->info.nodes || dest == (int)raw->info.node ? -1 : 0;
}

int fcraw_dma_busy(fcraw_t *raw)
{
    if (!raw) {
        return fail(EINVAL);
    }
    if (!raw->dma_maybe_busy) {
        return 0;
    }
    raw->dma_maybe_busy = rd(raw, FC_U_TX_BUSY) != 0;
    return raw->dma_maybe_busy;
}

/* Busy-wait while cond(raw) holds; every 64 reads, look at the clock. */
static int spin(fcraw_t *raw, int (*cond)(fcraw_t *))
{
    if (!cond(raw)) {
        return 0;
    }
    int64_t deadline = now_ns() + raw->timeout_ns;
    for (unsigned i = 1;; i++) {
        if (!cond(raw)) {
            return 0;
        }
        if (!(i & 63) && now_ns() > deadline) {
            return fail(ETIMEDOUT);
        }
    }
}

static int dma_reading(fcraw_t *raw) { return fcraw_dma_busy(raw); }
static int txq_full(fcraw_t *raw) { return rd(raw, FC_U_TXQ_FREE) == 0; }

int fcraw_dma_wait(fcraw_t *raw)
{
    if (!raw) {
        return fail(EINVAL);
    }
    return spin(raw, dma_reading);
}

/*
 * Start a send with the registers already set: write 'go' (TX_GO, or PIO_SEND's
 * value), read the status; while the adapter says busy (a DMA still reading, or the
 * transmit queue full), wait for it and try again.
 */
static int go(fcraw_t *raw, unsigned go_reg, uint32_t go_val)
{
    int64_t deadline = 0;
    for (;;) {
        wr(raw, go_reg, go_val);
        raw->tx_status = rd(raw, FC_U_TX_STATUS);
        if (raw->tx_status == FC_ERR_NONE) {
            return 0;
        }
        if (raw->tx_status != FC_ERR_BUSY) {
            return fail(status_errno(raw->tx_status));
        }
        if (!deadline) {
            deadline = now_ns() + raw->timeout_ns;
        } else if (now_ns() > deadline) {
            return fail(ETIMEDOUT);
        }
        raw->dma_maybe_busy = 1;
        if (spin(raw, dma_reading) < 0 || spin(raw, txq_full) < 0) {
            return -1;
        }
    }
}

int fcraw_dma_start_dvma(fcraw_t *raw, uint32_t dvma, size_t len, int dest, uint32_t tag)
{
    if (!raw || check_dest(raw, dest) < 0) {
        return fail(EINVAL);
    }
    if (len == 0 || len > FC_MAX_SEND) {
        return fail(EMSGSIZE);
    }
    /* one DMA engine: the next send may start once the last no longer reads memory */
    if (spin(raw, dma_reading) < 0) {
        return -1;
    }
    wr_cached(raw, R_TX_ADDR, dvma);
    wr_cached(raw, R_TX_LEN, (uint32_t)len);
    wr_cached(raw, R_TX_DEST, (uint32_t)dest);
    wr_cached(raw, R_TX_TAG, tag);
    if (go(raw, FC_U_TX_GO, 1) < 0) {
        return -1;
    }
    raw->dma_maybe_busy = 1;
    return 0;
}

int fcraw_dma_start(fcraw_t *raw, const void *buf, size_t len, int dest, uint32_t tag)
{
    uint32_t dvma;
    if (!raw || check_dest(raw, dest) < 0) {
        return fail(EINVAL);
    }
    if (len == 0 || len > FC_MAX_SEND) {
        return fail(EMSGSIZE);
    }
    if (fcraw_dvma(raw, buf, len, &dvma) < 0) {
        return -1;
    }
    return fcraw_dma_start_dvma(raw, dvma, len, dest, tag);
}

int fcraw_send_dma(fcraw_t *raw, const void *buf, size_t len, int dest, uint32_t tag)
{
    if (fcraw_dma_start(raw, buf, len, dest, tag) < 0) {
        return -1;
    }
    return fcraw_dma_wait(raw);
}

int fcraw_send_pio(fcraw_t *raw, const void *buf, size_t len, int dest, uint32_t tag)
{
    if (!raw || check_dest(raw, dest) < 0 || (!buf && len)) {
        return fail(EINVAL);
    }
    if (len > raw->info.pio_max) {
        return fail(EMSGSIZE);
    }
    /* 64-bit stores (the widest the PIO buffer takes); the last one padded */
    const unsigned char *b = buf;
    volatile uint64_t *pio = (volatile uint64_t *)(raw->regs + FC_U_PIO_BUF);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        pio[i / 8] = w;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, b + i, len - i);
        pio[i / 8] = w;
    }
    wr_cached(raw, R_PIO_TAG, tag);
    return go(raw, FC_U_PIO_SEND, FC_PIO_SEND(len, dest));
}

/* ---- receiving ----------------------------------------------------------- */

static struct fc_rx_slot *slot(fcraw_t *raw, unsigned i)
{
    return (struct fc_rx_slot *)(raw->ring + (size_t)i * FC_RX_SLOT_SIZE);
}

int fcraw_poll(fcraw_t *raw, struct fcraw_frame *frame)
{
    if (!raw || !frame) {
        return fail(EINVAL);
    }
    struct fc_rx_slot *s = slot(raw, raw->head);
    /* the adapter writes 'flags' last: what it guards is complete once it is seen */
    if (!(__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & FC_RXS_VALID)) {
        return 0;
    }
    if (s->len > FC_MAX_PAYLOAD || s->offset > s->msg_len || s->len > s->msg_len - s->offset) {
        return fail(EPROTO);    /* a slot the adapter cannot have written */
    }
    *frame = (struct fcraw_frame){
        .data = (const unsigned char *)s + FC_RX_PAYLOAD, .len = s->len, .src = s->src,
        .tag = s->tag, .offset = s->offset, .msg_len = s->msg_len,
    };
    return 1;
}

int fcraw_release(fcraw_t *raw)
{
    if (!raw) {
        return fail(EINVAL);
    }
    if (raw->unreleased) {
        wr(raw, FC_U_RX_RELEASE, raw->unreleased);
        raw->unreleased = 0;
    }
    return 0;
}

int fcraw_consume(fcraw_t *raw)
{
    if (!raw) {
        return fail(EINVAL);
    }
    struct fc_rx_slot *s = slot(raw, raw->head);
    if (!(__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & FC_RXS_VALID)) {
        return fail(ENOMSG);    /* no frame at the head: nothing to consume */
    }
    __atomic_store_n(&s->flags, 0, __ATOMIC_RELEASE);
    raw->head = raw->head + 1 == raw->info.rx_slots ? 0 : raw->head + 1;
    raw->unreleased++;
    if (raw->batch && raw->unreleased >= raw->batch) {
        return fcraw_release(raw);
    }
    return 0;
}

int fcraw_set_release_batch(fcraw_t *raw, unsigned batch)
{
    if (!raw || batch > raw->info.rx_slots) {
        return fail(EINVAL);
    }
    raw->batch = batch;
    return 0;
}

long fcraw_rx_drops(fcraw_t *raw)
{
    return raw ? (long)rd(raw, FC_U_RX_DROPS) : fail(EINVAL);
}

int fcraw_reg_read(fcraw_t *raw, unsigned offset, uint32_t *value)
{
    static const unsigned readable[] = {
        FC_U_NODE_ID, FC_U_NUM_NODES, FC_U_TX_ADDR, FC_U_TX_LEN, FC_U_TX_DEST, FC_U_TX_TAG,
        FC_U_TX_BUSY, FC_U_TX_STATUS, FC_U_TX_DONE, FC_U_PIO_TAG, FC_U_TXQ_FREE,
        FC_U_RX_DROPS,
    };
    if (!raw || !value) {
        return fail(EINVAL);
    }
    for (size_t i = 0; i < sizeof(readable) / sizeof(readable[0]); i++) {
        if (readable[i] == offset) {
            *value = rd(raw, offset);
            return 0;
        }
    }
    return fail(EINVAL);    /* not a readable register of the channel page */
}
