/* Fast Messages: starting and stopping, handlers, modes, buffers, errors. See fm.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fm_internal.h"

unsigned FM_nodeid = ~0u, FM_numnodes = 0;
int FM_errno;
struct fm_state fm;
FM_handler *fm_handlers[FM_MAX_HANDLERS];

int fm_err(int code)
{
    FM_errno = code;
    return code;
}

int64_t fm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int fm_check(void)
{
    if (!fm.raw) {
        return fm_err(FM_EINIT);
    }
    return fm.fatal ? fm_err(fm.fatal) : 0;
}

int fm_check_dest(unsigned dest)
{
    return dest >= FM_numnodes || dest == FM_nodeid ? fm_err(FM_EDEST) : 0;
}

/* A failed fcraw call's errno as FM's code; a refusal's status is kept. */
int fm_raw_err(void)
{
    int e = errno;
    fm.hw_status = fcraw_tx_status(fm.raw);
    switch (e) {
    case ETIMEDOUT:     return fm_err(FM_ETIMEDOUT);
    case EHOSTUNREACH:  return fm_err(FM_EUNREACH);
    case EFAULT:        return fm_err(FM_ENOTDMA);
    case ENOMEM:
    case ENOSPC:        return fm_err(FM_ENOMEM);
    case EPROTO:        return fm_err(fm.fatal = FM_EPROTO);
    default:            return fm_err(FM_EHW);
    }
}

int FM_initialize(void)
{
    if (fm.raw) {
        return fm_err(FM_EINIT);
    }
    const char *path = getenv("FM_DEVICE");
    fcraw_t *raw = fcraw_open(path && *path ? path : NULL);
    if (!raw) {
        return fm_err(FM_EDEVICE);
    }
    unsigned nodes = fcraw_num_nodes(raw), slots = fcraw_rx_slots(raw);
    /* every other node gets an equal share of the ring: C data frames + control */
    unsigned share = nodes > 1 ? slots / (nodes - 1) : slots;
    if (share < FM_CTRL_RESERVE + 2) {
        fcraw_close(raw);
        errno = ENOSPC;     /* the ring is too small for this many nodes */
        return fm_err(FM_EDEVICE);
    }
    struct fm_peer *peers = calloc(nodes, sizeof(*peers));
    if (!peers) {
        fcraw_close(raw);
        return fm_err(FM_ENOMEM);
    }
    memset(&fm, 0, sizeof(fm));
    fm.raw = raw;
    fm.peers = peers;
    fm.slots = slots;
    fm.max_payload = fcraw_max_payload(raw);
    fm.pio_max = fcraw_pio_max(raw);
    fm.credits = share - FM_CTRL_RESERVE;
    if (fm.credits > FM_MAX_TAG_CREDITS) {
        fm.credits = FM_MAX_TAG_CREDITS;
    }
    fm.threshold = (fm.credits + 1) / 2;
    fm.stats.credits_per_peer = fm.credits;
    fm.timeout_ns = 60000000000LL;
    fcraw_set_timeout(raw, fm.timeout_ns);
    fcraw_set_release_batch(raw, 0);    /* FM gives slots back with its credits */
    /* a new session per start, so that a peer tells a restart from a repeated hello */
    fm.session = (uint32_t)(fm_now_ns() ^ ((uint64_t)getpid() << 16)) | 1;
    for (unsigned i = 0; i < nodes; i++) {
        peers[i].credits = fm.credits;
    }
    fm.drops_at_start = fcraw_rx_drops(raw);
    FM_nodeid = fcraw_node_id(raw);
    FM_numnodes = nodes;
    return FM_OK;
}

int FM_finalize(void)
{
    int r = fm_check();
    if (r == FM_EINIT) {
        return r;
    }
    if (fm.split.id && fm.split.started == fm.split.len) {
        fcraw_dma_wait(fm.raw);
    }
    for (unsigned i = 0; i < FM_numnodes; i++) {
        free(fm.peers[i].bl);
    }
    free(fm.peers);
    fcraw_close(fm.raw);
    memset(&fm, 0, sizeof(fm));
    FM_nodeid = ~0u;
    FM_numnodes = 0;
    return FM_OK;
}

int FM_register_handler(unsigned id, FM_handler *handler)
{
    if (!handler) {
        return fm_err(FM_EINVAL);
    }
    if (id == FM_ANY_ID) {
        for (id = 0; id < FM_MAX_HANDLERS && fm_handlers[id]; id++) {
        }
    }
    if (id >= FM_MAX_HANDLERS) {
        return fm_err(FM_EHANDLER);
    }
    fm_handlers[id] = handler;
    return (int)id;
}

int FM_set_send_mode(int mode)
{
    if (mode != FM_SEND_AUTO && mode != FM_SEND_PIO && mode != FM_SEND_DMA) {
        return fm_err(FM_EINVAL);
    }
    int r = fm_check();
    if (r) {
        return r;
    }
    if (fm.tx.dir == FM_DIR_SEND || fm.sending) {
        return fm_err(FM_EBUSY);    /* not in the middle of a message */
    }
    fm.mode = mode;
    return FM_OK;
}

int FM_set_timeout(unsigned ms)
{
    if (ms == 0) {
        return fm_err(FM_EINVAL);
    }
    int r = fm_check();
    if (r) {
        return r;
    }
    fm.timeout_ns = ms * 1000000LL;
    fcraw_set_timeout(fm.raw, fm.timeout_ns);
    return FM_OK;
}

void *FM_alloc_buffer(size_t size)
{
    if (fm_check()) {
        return NULL;
    }
    if (size == 0 || size > FC_MAX_SEND) {
        fm_err(FM_EINVAL);
        return NULL;
    }
    void *p = fcraw_alloc(fm.raw, size);
    if (!p) {
        fm_err(FM_ENOMEM);
    }
    return p;
}

int FM_free_buffer(void *buf)
{
    int r = fm_check();
    if (r) {
        return r;
    }
    if (!buf) {
        return fm_err(FM_EINVAL);
    }
    /* fcraw_free waits for a DMA still reading; the split API's request must also
       have started all its sends from it (or have failed) */
    if (fm.split.id && fm.split.started < fm.split.len && (r = fm_split_drain()) < 0 &&
        r != fm.split.failed_err) {
        return r;
    }
    if (fcraw_free(fm.raw, buf) < 0) {
        return errno == EINVAL ? fm_err(FM_EINVAL) : fm_raw_err();
    }
    return FM_OK;
}

int FM_hw_status(void)
{
    return fm.hw_status;
}

int FM_get_stats(struct FM_stats *stats)
{
    int r = fm_check();
    if (r) {
        return r;
    }
    if (!stats) {
        return fm_err(FM_EINVAL);
    }
    long drops = fcraw_rx_drops(fm.raw) - fm.drops_at_start;
    fm.stats.rx_drops = drops < 0 ? 0 : (uint64_t)drops;
    *stats = fm.stats;
    return FM_OK;
}

const char *FM_strerror(int err)
{
    switch (err) {
    case FM_OK:         return "success";
    case FM_EINIT:      return "FM is not initialized (FM_initialize), or is already";
    case FM_EDEVICE:    return "the FC adapter could not be opened or mapped";
    case FM_EINVAL:     return "invalid argument";
    case FM_EDEST:      return "the destination is not another node";
    case FM_EHANDLER:   return "handler id out of range or not registered";
    case FM_ENOTDMA:    return "DMA send from memory not given by FM_alloc_buffer";
    case FM_EBUSY:      return "a message is already being sent, or called in a handler";
    case FM_ELENGTH:    return "more bytes than FM_begin_message declared";
    case FM_ENOMEM:     return "out of DMA or host memory";
    case FM_ETIMEDOUT:  return "waited longer than the timeout (credits, peer or DMA)";
    case FM_EUNREACH:   return "the destination is unreachable";
    case FM_EHW:        return "the adapter refused the send (see FM_hw_status)";
    case FM_EPROTO:     return "a frame out of sequence: FM stopped";
    case FM_ENOENT:     return "no such send request";
    default:            return "unknown FM error";
    }
}
