"""A SCSI hard disk of the period on a node (docs/boards/scsi-disk.md): QEMU's own LSI
53C895A host adapter and scsi-hd, which the Debian kernel's sym53c8xx and sd_mod drive as
they are, on our rl-disk block driver (qemu/disk/), which holds a zero-filled scratch disk
in memory and completes each request at the virtual time of a disk model: the
controller's overhead, a seek, the rotation to the first sector and one sector time per
sector.

The defaults are Sun's 424 MB disk of the SPARCstation 2 (SUN0424): its geometry and
speed from Sun's disk table; its seek times, which that table does not give, are a
choice documented in docs/boards/scsi-disk.md.
"""
from typing import ClassVar, Literal, Union

from retrolink.model.schema import Ns, Strict, param

# the LSI adapter's PCI slot (q35: 00:10.0), and its targets: SCSI ids 0-6 (7 is its own)
PCI_SLOT = 0x10
MAX_DISKS = 7


class ScsiDisk(Strict):
    nodes: Union[Literal["all"], list[int]] = "all"
    size_mib: int = param(32, unit="MiB", ge=1, le=4096, qemu="size",
                          source="our choice: a scratch disk for a file system and a 1 MB "
                                 "file, the first 32 MiB of the drive (held in host memory)")
    cylinders: int = param(1151, unit="cylinders", ge=2, le=65535, qemu="cylinders",
                           source="Sun's disk table, SUN0424: 1151 data cylinders")
    heads: int = param(9, unit="heads", ge=1, le=255, qemu="heads",
                       source="Sun's disk table, SUN0424: 9 heads")
    sectors_per_track: int = param(80, unit="512-byte sectors", ge=1, le=1024,
                                   qemu="sectors-per-track",
                                   source="Sun's disk table, SUN0424: 80 sectors a track")
    # 60 s / 4400 rpm / 80 sectors = 170454.5 ns; a rotation is 80 of them, 13.6364 ms
    sector_ns: int = param(170455, unit="ns", ge=1, le=3_515_625_000, qemu="sector-ns",
                                  source="Sun's disk table, SUN0424: 4400 rpm, 80 sectors "
                                         "a track (a media rate of 3.0 MB/s)")
    track_to_track_ns: Ns = param(4_000_000, unit="ns", qemu="track-to-track-ns",
                                  source="our choice: a 3.5-inch drive of 1990-91 (its "
                                         "data sheet not found)")
    full_stroke_ns: Ns = param(22_750_000, unit="ns", qemu="full-stroke-ns",
                               source="our choice: an average seek of 14 ms over random "
                                      "cylinder pairs (8/15 of the way from track-to-track "
                                      "to full stroke, by the square-root law)")
    overhead_ns: Ns = param(1_000_000, unit="ns", qemu="overhead-ns",
                            source="our choice: an embedded SCSI controller's command "
                                   "processing, of the order Ruemmler and Wilkes (1994) "
                                   "give for drives of the time")

    # the stock drivers, in load order (init's modprobe), and the file system: ext4.ko
    # mounts ext2; the crypto modules are the generic checksums the others ask for
    # (softdeps that busybox's modprobe does not follow). sd_mod before the adapter's
    # driver: sd probes asynchronously, so loaded after the scan it probed every disk at
    # once and the last target could take sda; loaded first, each disk is probed as the
    # scan (target 0, 1, ...) finds it
    GUEST_MODULES: ClassVar[tuple[str, ...]] = (
        "crc32c_generic", "crct10dif_generic", "crc64_rocksoft_generic",
        "sd_mod", "sym53c8xx", "ext4")

    def node_ids(self, cluster_nodes: int) -> list[int]:
        return list(range(cluster_nodes)) if self.nodes == "all" else list(self.nodes)

    def guest_modules(self) -> tuple[str, ...]:
        return self.GUEST_MODULES

    def problems(self) -> list[str]:
        if self.track_to_track_ns > self.full_stroke_ns:
            return [f"track_to_track_ns = {self.track_to_track_ns} is more than "
                    f"full_stroke_ns = {self.full_stroke_ns}: a seek of one cylinder "
                    "cannot take longer than one across the disk"]
        sectors = self.cylinders * self.heads * self.sectors_per_track
        if self.size_mib * 2048 > sectors:
            return [f"size_mib = {self.size_mib} is more than the drive holds "
                    f"({self.cylinders} x {self.heads} x {self.sectors_per_track} sectors "
                    f"of 512 bytes: {sectors // 2048} MiB)"]
        return []

    def qemu_args(self, index: int) -> list[str]:
        """This disk as target `index` of the node's adapter (node_args adds the adapter):
        /dev/sd<a + index> in the guest, since one adapter's targets are scanned in order."""
        drive = f"disk{index}"
        options = {"if": "none", "id": drive, "node-name": f"rl-{drive}", "driver": "rl-disk",
                   "size": f"{self.size_mib}M",
                   **{p: str(getattr(self, f)) for f, p in _OPTIONS.items() if p != "size"}}
        # write-cache=off: the drive has no write-back cache, so the guest sends no flushes
        return ["-drive", ",".join(f"{k}={v}" for k, v in options.items()),
                "-device", f"scsi-hd,bus=scsi0.0,scsi-id={index},drive={drive},write-cache=off"]


def node_args(disks: list[ScsiDisk]) -> list[str]:
    """A node's disks on one host adapter, in the machine file's order (none: nothing).
    One adapter rather than one each: Linux scans the targets of one adapter in order,
    but several adapters at once (their disks' names would follow whichever came first)."""
    if not disks:
        return []
    if len(disks) > MAX_DISKS:
        raise ValueError(f"{len(disks)} disks on a node: its adapter takes {MAX_DISKS}")
    return ["-device", f"lsi53c895a,id=scsi0,addr={PCI_SLOT:#x}",
            *(a for i, d in enumerate(disks) for a in d.qemu_args(i))]


# field -> rl-disk option, from the declarations
_OPTIONS = {name: (f.json_schema_extra or {})["qemu"] for name, f in ScsiDisk.model_fields.items()
            if f.json_schema_extra and "qemu" in f.json_schema_extra}
