"""The SCSI hard disk of machines/scsi-disk.toml (docs/boards/scsi-disk.md) in the guest,
through the stock sym53c8xx and sd_mod: every request the driver times takes exactly the
model's time (disk_model.py, written from the doc), N sectors in one request take
overhead + seek + rotation + N sector times, what is written reads back, and a run from
the boot barrier's snapshot prints what a cold boot prints, byte for byte; a second disk
on the node is sdb. One script, run twice (once from the snapshot, once cold), for all
of it."""
import re
from pathlib import Path

import pytest

from disk_model import Drive, Geometry
from helpers import run_retrolink
from retrolink.model import units
from retrolink.model.machine import load_machine

MACHINE = load_machine("scsi-disk")
DISK = MACHINE.disks["hd"]
G = Geometry.of(DISK)
# a timer fires at the first instruction boundary at or after its deadline
LATE_NS = units.granularity_ns(MACHINE.cluster.cpu_mips)

# one 64 KiB request (128 sectors, across a track boundary: 80 a track) at sector 12800
# (cylinder 17); 256 KiB written at 12.5 MiB and read back, direct; then ext2 with a 1 MB
# file, unmounted, caches dropped, mounted again and read cold
SCRIPT = r"""set -e
echo "sizes $(cat /sys/block/sda/size) $(cat /sys/block/sdb/size)"
dd if=/dev/sda of=/dev/null bs=64k count=1 skip=100 iflag=direct 2>/dev/null
seq 1 400000 | head -c 262144 > /tmp/p
dd if=/tmp/p of=/dev/sda bs=64k seek=200 oflag=direct 2>/dev/null
echo "direct $(dd if=/dev/sda bs=64k skip=200 count=4 iflag=direct 2>/dev/null | md5sum | cut -c1-32) $(md5sum < /tmp/p | cut -c1-32)"
mke2fs -q -b 4096 /dev/sda >/dev/null
mkdir -p /mnt && mount -t ext2 /dev/sda /mnt
seq 1 400000 | head -c 1048576 > /mnt/f
echo "wrote $(md5sum < /mnt/f | cut -c1-32)"
umount /mnt && echo 3 > /proc/sys/vm/drop_caches
mount -t ext2 -o ro /dev/sda /mnt
echo cold-read-begin > /dev/kmsg
cat /mnt/f > /dev/null
echo cold-read-end > /dev/kmsg
echo "read $(md5sum < /mnt/f | cut -c1-32)"
dmesg | grep -E 'cold-read-(begin|end)' | sed 's/^\[ *\([0-9.]*\)\] /\1 /'
"""


# a second, smaller disk on the node: the file's first disk is sda (docs/machines.md)
SECOND = ("--set", "disks.second.nodes=[0]", "--set", "disks.second.size_mib=8")


def run(*extra) -> tuple[list[str], Path]:
    r = run_retrolink("run", "scsi-disk", *SECOND, *extra, "--qemu-trace", "retrolink_disk_*",
                      "--", SCRIPT)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.splitlines(), Path(re.search(r"logs: (\S+)\)", r.stderr).group(1))


@pytest.fixture(scope="module")
def runs(artifacts):
    """(output, run directory) from the snapshot (made first if there is none), then cold."""
    return run(), run("--cold")


REQUEST = re.compile(r"retrolink_disk_request rl-disk0: write=(\d) sector (\d+) count (\d+) "
                     r"submitted at (\d+) ns, started at (\d+)")
TIME = re.compile(r"retrolink_disk_time rl-disk0: sector (\d+) cylinder (\d+) to (\d+) overhead "
                  r"(\d+) seek (\d+) rotation (\d+) transfer (\d+) done at (\d+)")
DONE = re.compile(r"retrolink_disk_done rl-disk0: sector (\d+) completed at (\d+) ns")


def requests(run_dir: Path) -> list[dict]:
    """Every timed request of the run's first disk, in submission order, with its
    completion."""
    out, pending = [], {}
    for line in (run_dir / "node0-trace.txt").read_text().splitlines():
        assert "cut_short" not in line, line
        if m := REQUEST.search(line):
            write, lba, count, now, start = map(int, m.groups())
            out.append(dict(write=write, lba=lba, count=count, now=now, start=start))
        elif m := TIME.search(line):
            lba, *rest = map(int, m.groups())
            assert out[-1]["lba"] == lba, line
            out[-1].update(zip(("from_cylinder", "to_cylinder", "overhead", "seek",
                                "rotation", "transfer", "done"), rest))
            pending.setdefault(lba, []).append(out[-1])
        elif m := DONE.search(line):
            lba, at = map(int, m.groups())
            pending[lba].pop(0)["completed"] = at
    return out


@pytest.mark.parametrize("which", ["snapshot", "cold"])
def test_every_request_takes_the_models_time_exactly(runs, which):
    reqs = requests(runs[which == "cold"][1])
    assert len(reqs) > 50, len(reqs)
    # the drive's state before the first: where the trace says its heads were (a run from
    # the snapshot starts with the boot's requests long done)
    drive = Drive(G, cylinder=reqs[0]["from_cylinder"])
    for r in reqs:
        a = drive.access(r["now"], r["lba"], r["count"])
        got = {k: r[k] for k in ("start", "overhead", "seek", "rotation", "transfer", "done",
                                 "from_cylinder", "to_cylinder")}
        assert got == vars(a), r
        assert r["done"] <= r["completed"] < r["done"] + LATE_NS, r


def test_n_sequential_sectors_take_seek_rotation_and_n_sector_times(runs):
    """The 64 KiB direct read: 128 sectors from sector 12800, one request, exactly
    overhead + seek + rotation + 128 x sector_ns from the moment the drive takes it."""
    reqs = requests(runs[0][1])
    r = next(r for r in reqs if r["lba"] == 12800 and not r["write"])
    assert r["count"] == 128
    seek = G.seek_ns(abs(17 - r["from_cylinder"]))
    under = r["start"] + DISK.overhead_ns + seek
    rotation = (12800 % 80 * DISK.sector_ns - under) % (80 * DISK.sector_ns)
    assert r["done"] - r["start"] == DISK.overhead_ns + seek + rotation + 128 * DISK.sector_ns
    assert r["rotation"] == rotation and 0 <= rotation < 80 * DISK.sector_ns
    # the seek law at its ends: one cylinder, and across the drive
    assert G.seek_ns(1) == DISK.track_to_track_ns
    assert G.seek_ns(DISK.cylinders - 1) == DISK.full_stroke_ns


def test_what_is_written_reads_back(runs):
    out = runs[0][0]
    assert "[node0] sizes 65536 16384" in out       # sda: the file's disk, sdb: the second
    direct = next(line.split()[2:] for line in out if line.startswith("[node0] direct "))
    assert direct[0] == direct[1], direct
    wrote = next(line.split()[2] for line in out if line.startswith("[node0] wrote "))
    read = next(line.split()[2] for line in out if line.startswith("[node0] read "))
    assert wrote == read


def test_the_snapshot_run_prints_what_the_cold_boot_prints(runs):
    (snap, _), (cold, _) = runs
    assert snap == cold
    # and the cold read of 1 MB took disk time: at 3 MB/s, at least a third of a second
    begin, end = (float(line.split()[1]) for line in snap if "cold-read-" in line)
    assert end - begin > 1048576 / (1e9 * 512 / DISK.sector_ns), (begin, end)
