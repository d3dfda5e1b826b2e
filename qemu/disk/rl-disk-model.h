/*
 * The timing of a period SCSI hard disk: what one request costs in virtual time
 * (docs/boards/scsi-disk.md). Pure integer arithmetic on the drive's geometry, so
 * that a test can compute the same numbers exactly (tests/boards/scsi_disk/).
 */
#ifndef HW_RETROLINK_DISK_MODEL_H
#define HW_RETROLINK_DISK_MODEL_H

/* the limits every parameter is checked against (src/retrolink/disks/scsi.py too) */
#define RL_DISK_MAX_CYLINDERS   65535   /* the seek law's isqrt stays in 64 bits */
#define RL_DISK_MAX_HEADS       255
#define RL_DISK_MAX_SECTORS     1024    /* per track */
#define RL_DISK_MAX_NS          3600000000000ULL    /* an hour, as every time field */

typedef struct RlDiskGeometry {
    uint32_t cylinders;         /* of the whole drive: the seek law's span */
    uint32_t heads;
    uint32_t sectors;           /* 512-byte sectors per track */
    uint64_t sector_ns;         /* one sector under the head; a rotation is sectors of them */
    uint64_t track_to_track_ns; /* a seek of one cylinder */
    uint64_t full_stroke_ns;    /* a seek across every cylinder */
    uint64_t overhead_ns;       /* the controller's time per command */
} RlDiskGeometry;

/* where the drive is: the model's whole state, saved in snapshots */
typedef struct RlDiskModel {
    RlDiskGeometry g;
    uint32_t cylinder;          /* the heads' cylinder after the last request */
    uint64_t free_at;           /* when the drive finishes its last request (ns) */
} RlDiskModel;

/* one request, each component in ns; done = start + overhead + seek + rotation + transfer */
typedef struct RlDiskTime {
    uint64_t start;             /* the drive takes it: max(submitted, free_at) */
    uint64_t overhead, seek, rotation, transfer, done;
    uint32_t from_cylinder, to_cylinder;
} RlDiskTime;

/* NULL if the geometry is usable, else what is wrong with it */
const char *rl_disk_geometry_check(const RlDiskGeometry *g);
uint64_t rl_disk_seek_ns(const RlDiskGeometry *g, uint32_t distance);
/* the time of `count` sectors from `lba`, submitted at `now`; moves the drive */
RlDiskTime rl_disk_access(RlDiskModel *m, uint64_t now, uint64_t lba, uint64_t count);

#endif
