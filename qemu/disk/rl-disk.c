/*
 * rl-disk: a scratch hard disk held in memory, each request completed at the virtual
 * time the disk model gives (rl-disk-model.c; docs/boards/scsi-disk.md).
 *
 *   -drive if=none,id=disk0,node-name=rl-disk0,driver=rl-disk,size=32M,cylinders=1151,...
 *   -device lsi53c895a,id=scsi0 -device scsi-hd,bus=scsi0.0,drive=disk0
 *
 * (-drive, not -blockdev: QAPI's BlockdevDriver lists QEMU's own drivers only, and
 * -drive opens any registered one by name.)
 *
 * QEMU's block layer completes a request when the host does, and its throttling runs
 * on the host's clock; neither is a disk of 1991 in virtual time. This protocol driver
 * (the pattern of block/null.c) keeps the data in memory, zero at open and never
 * written back, so that no host I/O is on the data path: a request is served at
 * submission (in submission order, which is the drive's service order) and its
 * coroutine then sleeps on QEMU_CLOCK_VIRTUAL until the model's time. The sleep is
 * armed before the coroutine yields for the first time, so under -icount sleep=off
 * the idle vCPU's warp stops at the completion and the result is the same on any host.
 *
 * The model's state (the heads' cylinder, when the drive is free) is in the migration
 * stream, so a node started from a snapshot times its first request as the cold boot
 * did. The data is not: a snapshot of a disk that has been written, or with a request
 * in flight, is refused. A drain (a SCSI reset, the VM stopping) completes sleeping
 * requests at once, off the model's time; the block layer cannot wait for a virtual
 * clock that the drain itself holds still.
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/module.h"
#include "qemu/option.h"
#include "qemu/queue.h"
#include "qapi/error.h"
#include "block/block_int.h"
#include "migration/vmstate.h"
#include "system/runstate.h"
#include "hw/retrolink/disk/rl-disk-model.h"
#include "hw/retrolink/trace.h"

#define RL_DISK_MAX_SIZE (4ULL << 30)   /* held in host memory */

typedef struct RlDiskReq {
    QemuCoSleep sleep;
    uint64_t lba, done;
    QLIST_ENTRY(RlDiskReq) next;
} RlDiskReq;

typedef struct BDRVRlDiskState {
    uint8_t *data;
    uint64_t size;
    RlDiskModel model;
    QLIST_HEAD(, RlDiskReq) waiting;
    uint32_t in_flight;
    uint32_t cut_short;         /* requests a drain completed before their time */
    bool written;
} BDRVRlDiskState;

static QemuOptsList rl_disk_opts = {
    .name = "rl-disk",
    .head = QTAILQ_HEAD_INITIALIZER(rl_disk_opts.head),
    .desc = {
        { .name = BLOCK_OPT_SIZE, .type = QEMU_OPT_SIZE,
          .help = "bytes of the scratch disk (a multiple of 512, within the geometry)" },
        { .name = "cylinders", .type = QEMU_OPT_NUMBER, .help = "the drive's cylinders" },
        { .name = "heads", .type = QEMU_OPT_NUMBER, .help = "tracks per cylinder" },
        { .name = "sectors-per-track", .type = QEMU_OPT_NUMBER,
          .help = "512-byte sectors per track" },
        { .name = "sector-ns", .type = QEMU_OPT_NUMBER,
          .help = "ns for one sector to pass under the head" },
        { .name = "track-to-track-ns", .type = QEMU_OPT_NUMBER,
          .help = "ns of a one-cylinder seek" },
        { .name = "full-stroke-ns", .type = QEMU_OPT_NUMBER,
          .help = "ns of a seek across every cylinder" },
        { .name = "overhead-ns", .type = QEMU_OPT_NUMBER,
          .help = "ns of the controller's work per command" },
        { /* end of list */ }
    },
};

static int rl_disk_pre_save(void *opaque)
{
    BDRVRlDiskState *s = opaque;

    if (s->in_flight) {
        error_report("rl-disk: cannot save: %u request(s) in flight; snapshot an idle "
                     "disk", s->in_flight);
        return -EBUSY;
    }
    if (s->cut_short) {
        error_report("rl-disk: cannot save: %u request(s) were in flight when the VM "
                     "stopped, and completed early, off the model's time; snapshot an "
                     "idle disk", s->cut_short);
        return -EBUSY;
    }
    if (s->written) {
        error_report("rl-disk: cannot save: the disk has been written since QEMU "
                     "started, and its contents are not in the snapshot");
        return -EBUSY;
    }
    return 0;
}

static int rl_disk_post_load(void *opaque, int version_id)
{
    BDRVRlDiskState *s = opaque;

    if (s->model.cylinder >= s->model.g.cylinders) {
        error_report("rl-disk: the stream puts the heads on cylinder %u of %u",
                     s->model.cylinder, s->model.g.cylinders);
        return -EINVAL;
    }
    return 0;
}

static const VMStateDescription vmstate_rl_disk = {
    .name = "retrolink-disk",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = rl_disk_pre_save,
    .post_load = rl_disk_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(model.cylinder, BDRVRlDiskState),
        VMSTATE_UINT64(model.free_at, BDRVRlDiskState),
        VMSTATE_END_OF_LIST()
    },
};

static bool rl_disk_opt(QemuOpts *opts, const char *name, uint64_t *out, Error **errp)
{
    if (!qemu_opt_get(opts, name)) {
        error_setg(errp, "rl-disk: option '%s' is required", name);
        return false;
    }
    *out = qemu_opt_get_number(opts, name, 0);
    return true;
}

static int rl_disk_open(BlockDriverState *bs, QDict *options, int flags, Error **errp)
{
    BDRVRlDiskState *s = bs->opaque;
    RlDiskGeometry *g = &s->model.g;
    g_autoptr(QemuOpts) opts = qemu_opts_create(&rl_disk_opts, NULL, 0, &error_abort);
    uint64_t cyl, heads, sect, capacity;
    const char *bad;

    if (!qemu_opts_absorb_qdict(opts, options, errp)) {
        return -EINVAL;
    }
    s->size = qemu_opt_get_size(opts, BLOCK_OPT_SIZE, 0);
    if (!rl_disk_opt(opts, "cylinders", &cyl, errp) ||
        !rl_disk_opt(opts, "heads", &heads, errp) ||
        !rl_disk_opt(opts, "sectors-per-track", &sect, errp) ||
        !rl_disk_opt(opts, "sector-ns", &g->sector_ns, errp) ||
        !rl_disk_opt(opts, "track-to-track-ns", &g->track_to_track_ns, errp) ||
        !rl_disk_opt(opts, "full-stroke-ns", &g->full_stroke_ns, errp) ||
        !rl_disk_opt(opts, "overhead-ns", &g->overhead_ns, errp)) {
        return -EINVAL;
    }
    g->cylinders = MIN(cyl, UINT32_MAX);
    g->heads = MIN(heads, UINT32_MAX);
    g->sectors = MIN(sect, UINT32_MAX);
    bad = rl_disk_geometry_check(g);
    if (bad) {
        error_setg(errp, "rl-disk: %s", bad);
        return -EINVAL;
    }
    capacity = (uint64_t)g->cylinders * g->heads * g->sectors * 512;
    if (!s->size || s->size % BDRV_SECTOR_SIZE || s->size > RL_DISK_MAX_SIZE ||
        s->size > capacity) {
        error_setg(errp, "rl-disk: size %" PRIu64 " must be a multiple of 512, at most "
                   "4 GiB and at most the geometry's %" PRIu64 " bytes", s->size, capacity);
        return -EINVAL;
    }
    /* zero pages the guest never writes cost no host memory */
    s->data = g_try_malloc0(s->size);
    if (!s->data) {
        error_setg(errp, "rl-disk: cannot allocate %" PRIu64 " bytes", s->size);
        return -ENOMEM;
    }
    QLIST_INIT(&s->waiting);
    bs->supported_write_flags = BDRV_REQ_FUA;
    vmstate_register_any(NULL, &vmstate_rl_disk, s);
    return 0;
}

static void rl_disk_close(BlockDriverState *bs)
{
    BDRVRlDiskState *s = bs->opaque;

    vmstate_unregister(NULL, &vmstate_rl_disk, s);
    g_free(s->data);
}

static void rl_disk_refresh_limits(BlockDriverState *bs, Error **errp)
{
    bs->bl.request_alignment = BDRV_SECTOR_SIZE;
}

static int64_t coroutine_fn rl_disk_co_getlength(BlockDriverState *bs)
{
    BDRVRlDiskState *s = bs->opaque;
    return s->size;
}

/* the data moves when the drive takes the request: in submission order */
static void rl_disk_serve(BDRVRlDiskState *s, int64_t offset, int64_t bytes,
                          QEMUIOVector *qiov, bool write)
{
    if (write) {
        qemu_iovec_to_buf(qiov, 0, s->data + offset, bytes);
        s->written = true;
    } else {
        qemu_iovec_from_buf(qiov, 0, s->data + offset, bytes);
    }
}

static int coroutine_fn rl_disk_co_rw(BlockDriverState *bs, int64_t offset, int64_t bytes,
                                      QEMUIOVector *qiov, bool write)
{
    BDRVRlDiskState *s = bs->opaque;
    uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    RlDiskReq req = { .lba = offset / BDRV_SECTOR_SIZE };
    uint64_t count = bytes / BDRV_SECTOR_SIZE;
    RlDiskTime t;

    if (offset < 0 || bytes <= 0 || offset + bytes > s->size) {
        return bytes == 0 ? 0 : -EIO;
    }
    if (!runstate_is_running()) {
        /*
         * Not the guest's: scsi-hd's realize reads sector 0 to guess a geometry while
         * the virtual clock stands still. Served at once; the drive does not move.
         */
        trace_retrolink_disk_untimed(bs->node_name, write, req.lba, count);
        rl_disk_serve(s, offset, bytes, qiov, write);
        return 0;
    }
    t = rl_disk_access(&s->model, now, req.lba, count);
    req.done = t.done;
    trace_retrolink_disk_request(bs->node_name, write, req.lba, count, now, t.start);
    trace_retrolink_disk_time(bs->node_name, req.lba, t.from_cylinder, t.to_cylinder,
                              t.overhead, t.seek, t.rotation, t.transfer, t.done);
    rl_disk_serve(s, offset, bytes, qiov, write);
    /* armed before the first yield: the idle vCPU's warp stops at t.done */
    s->in_flight++;
    QLIST_INSERT_HEAD(&s->waiting, &req, next);
    qemu_co_sleep_ns_wakeable(&req.sleep, QEMU_CLOCK_VIRTUAL, t.done - now);
    QLIST_REMOVE(&req, next);
    s->in_flight--;
    trace_retrolink_disk_done(bs->node_name, req.lba, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    return 0;
}

static int coroutine_fn rl_disk_co_preadv(BlockDriverState *bs, int64_t offset,
                                          int64_t bytes, QEMUIOVector *qiov,
                                          BdrvRequestFlags flags)
{
    return rl_disk_co_rw(bs, offset, bytes, qiov, false);
}

static int coroutine_fn rl_disk_co_pwritev(BlockDriverState *bs, int64_t offset,
                                           int64_t bytes, QEMUIOVector *qiov,
                                           BdrvRequestFlags flags)
{
    return rl_disk_co_rw(bs, offset, bytes, qiov, true);
}

/* the drive has no write-back cache: every write is on the platter when it completes */
static int coroutine_fn rl_disk_co_flush(BlockDriverState *bs)
{
    return 0;
}

static void rl_disk_drain_begin(BlockDriverState *bs)
{
    BDRVRlDiskState *s = bs->opaque;
    RlDiskReq *req, *next;
    uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    QLIST_FOREACH_SAFE(req, &s->waiting, next, next) {
        trace_retrolink_disk_cut_short(bs->node_name, req->lba, now, req->done);
        if (!s->cut_short++) {
            warn_report("rl-disk %s: drained with a request in flight (sector %" PRIu64
                        ", due at %" PRIu64 " ns, now %" PRIu64 " ns); it completes "
                        "early, off the disk model's time", bs->node_name, req->lba,
                        req->done, now);
        }
        qemu_co_sleep_wake(&req->sleep);
    }
}

static int rl_disk_reopen_prepare(BDRVReopenState *state, BlockReopenQueue *queue,
                                  Error **errp)
{
    return 0;
}

static void rl_disk_refresh_filename(BlockDriverState *bs)
{
    snprintf(bs->exact_filename, sizeof(bs->exact_filename), "rl-disk://");
}

static const char *const rl_disk_strong_opts[] = {
    BLOCK_OPT_SIZE, "cylinders", "heads", "sectors-per-track", "sector-ns",
    "track-to-track-ns", "full-stroke-ns", "overhead-ns", NULL
};

static BlockDriver bdrv_rl_disk = {
    .format_name            = "rl-disk",
    .protocol_name          = "rl-disk",
    .instance_size          = sizeof(BDRVRlDiskState),

    .bdrv_open              = rl_disk_open,
    .bdrv_close             = rl_disk_close,
    .bdrv_refresh_limits    = rl_disk_refresh_limits,
    .bdrv_co_getlength      = rl_disk_co_getlength,
    .bdrv_co_preadv         = rl_disk_co_preadv,
    .bdrv_co_pwritev        = rl_disk_co_pwritev,
    .bdrv_co_flush_to_disk  = rl_disk_co_flush,
    .bdrv_drain_begin       = rl_disk_drain_begin,
    .bdrv_reopen_prepare    = rl_disk_reopen_prepare,
    .bdrv_refresh_filename  = rl_disk_refresh_filename,
    .strong_runtime_opts    = rl_disk_strong_opts,
};

static void bdrv_rl_disk_init(void)
{
    bdrv_register(&bdrv_rl_disk);
}

block_init(bdrv_rl_disk_init);
