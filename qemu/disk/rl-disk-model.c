/*
 * The timing of a period SCSI hard disk (docs/boards/scsi-disk.md, "The model").
 *
 * A request waits for the drive (one request at a time, in the order submitted), then
 * costs the controller's overhead, a seek from the heads' cylinder to the first
 * sector's, the rotation until that sector comes under the head, and one sector time
 * per sector. The platter turns from angle 0 at virtual time 0: sector s of every track
 * starts under the head at k * rotation + s * sector_ns. Track and head switches inside
 * a transfer are free (the sustained rate is the media rate), and there is no read-ahead
 * or write-back cache.
 */
#include "qemu/osdep.h"
#include "rl-disk-model.h"

const char *rl_disk_geometry_check(const RlDiskGeometry *g)
{
    if (g->cylinders < 2 || g->cylinders > RL_DISK_MAX_CYLINDERS) {
        return "cylinders must be 2 to 65535";
    }
    if (g->heads < 1 || g->heads > RL_DISK_MAX_HEADS) {
        return "heads must be 1 to 255";
    }
    if (g->sectors < 1 || g->sectors > RL_DISK_MAX_SECTORS) {
        return "sectors-per-track must be 1 to 1024";
    }
    if (g->sector_ns < 1 || g->sector_ns > RL_DISK_MAX_NS / RL_DISK_MAX_SECTORS) {
        return "sector-ns must be 1 ns to 3.5 s";
    }
    if (g->track_to_track_ns > g->full_stroke_ns || g->full_stroke_ns > RL_DISK_MAX_NS) {
        return "track-to-track-ns must be at most full-stroke-ns, which is at most an hour";
    }
    if (g->overhead_ns > RL_DISK_MAX_NS) {
        return "overhead-ns must be at most an hour";
    }
    return NULL;
}

/* floor(sqrt(x)) */
static uint64_t isqrt64(uint64_t x)
{
    uint64_t r = 0, bit = 1ULL << 62;

    while (bit > x) {
        bit >>= 2;
    }
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return r;
}

/*
 * 0 for no move; else track-to-track plus the rest of a full stroke times the square
 * root of the share of the span beyond one cylinder (the square-root law of short
 * seeks, Ruemmler and Wilkes 1994), in 16-bit fixed point:
 *   t2t + ((full - t2t) * isqrt(((d - 1) << 32) / (cylinders - 2))) >> 16
 * One cylinder costs t2t, cylinders - 1 cost the full stroke.
 */
uint64_t rl_disk_seek_ns(const RlDiskGeometry *g, uint32_t distance)
{
    uint64_t share;

    if (distance == 0) {
        return 0;
    }
    if (g->cylinders <= 2) {
        return g->track_to_track_ns;
    }
    share = isqrt64(((uint64_t)(distance - 1) << 32) / (g->cylinders - 2));
    return g->track_to_track_ns +
           (((g->full_stroke_ns - g->track_to_track_ns) * share) >> 16);
}

RlDiskTime rl_disk_access(RlDiskModel *m, uint64_t now, uint64_t lba, uint64_t count)
{
    const RlDiskGeometry *g = &m->g;
    uint64_t per_cylinder = (uint64_t)g->heads * g->sectors;
    uint64_t rotation_ns = g->sectors * g->sector_ns;
    uint64_t target = lba / per_cylinder, slot = lba % g->sectors, under;
    RlDiskTime t = { .from_cylinder = m->cylinder };

    t.start = MAX(now, m->free_at);
    t.overhead = g->overhead_ns;
    t.seek = rl_disk_seek_ns(g, target > m->cylinder ? target - m->cylinder
                                                     : m->cylinder - target);
    under = t.start + t.overhead + t.seek;
    t.rotation = (slot * g->sector_ns + rotation_ns - under % rotation_ns) % rotation_ns;
    t.transfer = count * g->sector_ns;
    t.done = under + t.rotation + t.transfer;
    t.to_cylinder = count ? (lba + count - 1) / per_cylinder : target;
    m->cylinder = t.to_cylinder;
    m->free_at = t.done;
    return t;
}
