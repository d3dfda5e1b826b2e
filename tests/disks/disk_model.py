"""The disk model of docs/boards/scsi-disk.md, written again from the doc (not from
qemu/disk/rl-disk-model.c), to check the driver's every request against."""
import math
from dataclasses import dataclass


@dataclass
class Geometry:
    cylinders: int
    heads: int
    sectors: int             # per track
    sector_ns: int
    track_to_track_ns: int
    full_stroke_ns: int
    overhead_ns: int

    @classmethod
    def of(cls, disk) -> "Geometry":
        """From a machine's disk (retrolink.disks.scsi.ScsiDisk)."""
        return cls(disk.cylinders, disk.heads, disk.sectors_per_track, disk.sector_ns,
                   disk.track_to_track_ns, disk.full_stroke_ns, disk.overhead_ns)

    @property
    def rotation_ns(self) -> int:
        return self.sectors * self.sector_ns

    def cylinder(self, lba: int) -> int:
        return lba // (self.heads * self.sectors)

    def seek_ns(self, distance: int) -> int:
        """0; one cylinder: track-to-track; cylinders - 1: full stroke; between, by the
        square root of the share of the span beyond one cylinder (16-bit fixed point)."""
        if distance == 0:
            return 0
        if self.cylinders <= 2:
            return self.track_to_track_ns
        share = math.isqrt(((distance - 1) << 32) // (self.cylinders - 2))
        return self.track_to_track_ns + (
            (self.full_stroke_ns - self.track_to_track_ns) * share >> 16)

    def rotation_wait_ns(self, at: int, lba: int) -> int:
        """From `at` until sector lba's slot starts under the head: slot s of every track
        starts at k * rotation + s * sector_ns."""
        return (lba % self.sectors * self.sector_ns - at) % self.rotation_ns


@dataclass
class Access:
    start: int
    overhead: int
    seek: int
    rotation: int
    transfer: int
    done: int
    from_cylinder: int
    to_cylinder: int


class Drive:
    def __init__(self, g: Geometry, cylinder: int = 0, free_at: int = 0):
        self.g, self.cylinder, self.free_at = g, cylinder, free_at

    def access(self, now: int, lba: int, count: int) -> Access:
        g = self.g
        start = max(now, self.free_at)
        target = g.cylinder(lba)
        seek = g.seek_ns(abs(target - self.cylinder))
        under = start + g.overhead_ns + seek
        rotation = g.rotation_wait_ns(under, lba)
        transfer = count * g.sector_ns
        a = Access(start, g.overhead_ns, seek, rotation, transfer,
                   under + rotation + transfer, self.cylinder, g.cylinder(lba + count - 1))
        self.cylinder, self.free_at = a.to_cylinder, a.done
        return a
