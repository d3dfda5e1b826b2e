"""Quantities in machine files: rates like "12.5MB/s" or "100Mb/s", sizes like "256M".
MB means 10^6 bytes, as in the papers; M in a memory size means MiB, as in QEMU."""
import math
import re

_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKMG]?)(B|b)/s\s*$")
# The largest rate any board or link takes: far above any modeled hardware, and small
# enough that a byte count times 10^9 ns over it never overflows 64 bits.
MAX_RATE = 10**12
MAX_NODE_MIB = 16384
# The least guest RAM per node. The initramfs unpacks into the root tmpfs, whose size the
# kernel sets to about half the RAM it has then (52.5 MB at 208 MiB, 77 MB at 256), so the
# floor rises with the image. Measured with the 34 MiB initramfs of November 2026 (cold
# boots of sure-sx and plain, --set cluster.memory_mib=N -- "echo hello"): at 162 MiB and
# above the guest boots; at 160 and 144 its initramfs does not unpack ("Initramfs
# unpacking failed: write error": no command, no output), at 136 and below the kernel
# panics while booting ("System is deadlocked on memory"), at 64 before it prints
# anything. With the PUMA-II disks' modules and the NFS server and client added (51 MiB,
# 52.7 MB unpacked): 216 boots, 208 does not unpack. 248 leaves 32 MiB over that floor:
# the boards' own memory (the FC driver's receive ring, 2 MiB, and DMA buffers of up to
# 4 MiB each; the Cenju-3 rings and OOL pages; docs/boards/fc-driver.md,
# cenju3-driver.md), files a command writes to the root (about 20 MB free at 248), and a
# growing initramfs.
MIN_NODE_MIB = 248
# The least guest RAM per node whose initramfs unpacks into a ramfs (cluster.root_fs =
# "ramfs", the kernel's rootfstype=ramfs): no cap but the RAM itself, so the files need
# their own size, and the archive its own until it is unpacked and freed. Measured with the
# 59 MiB initramfs of 28 November 2026 (cold boots of plain, root_fs = "ramfs", -- "echo
# hello"): 208 MiB boots (70 MiB of files and 72 free after it), 192 and 160 panic while
# booting ("System is deadlocked on memory"), 128 and 96 do not unpack ("invalid magic at
# start of compressed archive": the archive does not fit). 224 leaves 16 MiB over that
# floor: a ramfs's floor rises by the image's growth once, not twice as a tmpfs's does.
MIN_NODE_MIB_RAMFS = 224
# The least guest RAM per node whose root is the read-only image (cluster.root_fs =
# "pmem", build/pmem_root.py): its files take no RAM, only the kernel, the boot initramfs
# and what the node runs and writes do. Measured on 30 November 2026 (cold boots of
# plain, -- "echo booted; free", with 4 MiB of bounce buffers: node_command.py,
# PMEM_SWIOTLB_SLABS): 96 MiB boots (45 MiB for the kernel to use, 17 free), 88 and 80
# panic ("System is deadlocked on memory"), 72 and 64 stop before the kernel says
# anything. 112 leaves 16 MiB over that floor.
MIN_NODE_MIB_PMEM = 112
_SCALE = {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def parse_rate(value) -> int:
    """Bytes per second from 12500000, "12.5MB/s" or "100Mb/s" (bits: divided by 8)."""
    if isinstance(value, bool):
        raise ValueError("expected a rate such as \"12.5MB/s\" or \"100Mb/s\"")
    if isinstance(value, (int, float)):
        bps = float(value)
    else:
        m = _RATE.match(str(value))
        if not m:
            raise ValueError(f"{value!r} is not a rate; expected e.g. \"12.5MB/s\", \"100Mb/s\" "
                             "or a number of bytes per second")
        bps = float(m.group(1)) * _SCALE[m.group(2)] / (8 if m.group(3) == "b" else 1)
    if not math.isfinite(bps) or bps < 1 or bps != int(bps):
        raise ValueError(f"{value!r} must be a whole, positive number of bytes per second")
    if bps > MAX_RATE:
        raise ValueError(f"{value!r} is above the largest rate the models take "
                         f"({MAX_RATE:.0e} bytes/s, 1 TB/s)")
    return int(bps)


def parse_mib(value) -> int:
    """Memory size in MiB from 256, "256M" or "1G", at least the least floor of any root
    (check_root_room checks the root's own)."""
    if isinstance(value, int) and not isinstance(value, bool):
        mib = value
    else:
        m = re.match(r"^\s*(\d+)\s*([MG])i?B?\s*$", str(value))
        if not m:
            raise ValueError(f"{value!r} is not a memory size; expected e.g. \"256M\" or \"1G\"")
        mib = int(m.group(1)) * (1024 if m.group(2) == "G" else 1)
    if mib < MIN_NODE_MIB_PMEM:
        raise ValueError(f"{value!r}: the guest needs at least {MIN_NODE_MIB_PMEM} MiB with "
                         f"its root on the read-only image (root_fs = \"pmem\"), "
                         f"{MIN_NODE_MIB_RAMFS} on a ramfs and {MIN_NODE_MIB} on a tmpfs "
                         "(docs/machines.md)")
    if mib > MAX_NODE_MIB:
        raise ValueError(f"{value!r}: at most {MAX_NODE_MIB} MiB per node (every node is a "
                         "QEMU on this host, and a period machine had far less)")
    return mib


def check_root_room(mib: int, root_fs: str) -> None:
    """A node's RAM against the floor of the file system its root is on."""
    if root_fs == "tmpfs" and mib < MIN_NODE_MIB:
        raise ValueError(f"memory_mib {mib}: the guest needs at least {MIN_NODE_MIB} MiB with "
                         "its root on a tmpfs (below about 216 MiB its initramfs does not "
                         "unpack, or its kernel panics while booting; root_fs = \"ramfs\" "
                         f"needs {MIN_NODE_MIB_RAMFS}, \"pmem\" {MIN_NODE_MIB_PMEM}: "
                         "docs/machines.md)")
    if root_fs == "ramfs" and mib < MIN_NODE_MIB_RAMFS:
        raise ValueError(f"memory_mib {mib}: the guest needs at least {MIN_NODE_MIB_RAMFS} MiB "
                         "with its root on a ramfs (below 208 MiB its initramfs does not "
                         f"unpack, or its kernel runs out of memory; root_fs = \"pmem\" needs "
                         f"{MIN_NODE_MIB_PMEM}: docs/machines.md)")


# Guest CPU speed (cluster.cpu_mips). QEMU's -icount takes 0.9765625 to 1000000 MIPS
# (qemu/patches/0004-icount-mips-*); a period machine ran at 1 to a few hundred, and
# above 10000 MIPS an instruction is under 0.1 ns, far finer than any modeled latency.
MIN_CPU_MIPS = 1.0
MAX_CPU_MIPS = 10000.0
_MAX_SHIFT = 9                 # 1000/2^9 = 1.953125 MIPS, the slowest shift within the limits


def check_cpu_mips(mips) -> float:
    """A guest CPU speed in MIPS: any finite number from MIN_CPU_MIPS to MAX_CPU_MIPS."""
    if isinstance(mips, bool) or not isinstance(mips, (int, float)) or not math.isfinite(mips):
        raise ValueError(f"{mips!r} is not a finite number of MIPS")
    if not MIN_CPU_MIPS <= mips <= MAX_CPU_MIPS:
        raise ValueError(f"{mips:g} MIPS is outside {MIN_CPU_MIPS:g} to {MAX_CPU_MIPS:g} MIPS, "
                         "the guest speeds retrolink runs")
    return float(mips)


def icount_shift(mips: float) -> int | None:
    """N when the speed is exactly 1000/2^N MIPS (one instruction every 2^N ns: 1000 -> 0,
    500 -> 1, 250 -> 2, 125 -> 3, 62.5 -> 4, ...), else None."""
    mips = check_cpu_mips(mips)
    return next((n for n in range(_MAX_SHIFT + 1) if mips == 1000.0 / 2 ** n), None)


def icount_ns_mult(mips: float) -> int:
    """The ns per instruction in 32.32 fixed point, as QEMU's -icount mips=X computes it:
    floor(1000 * 2^32 / X + 1/2), in IEEE double precision like QEMU (the same value on
    every host; 2^(32+N) for 1000/2^N MIPS)."""
    return int(1000.0 * 4294967296.0 / check_cpu_mips(mips) + 0.5)


def instructions_ns(n: int, mips: float) -> int:
    """The virtual time of a node's first n instructions: floor(n * m / 2^32) ns, m being
    icount_ns_mult(mips) (n << N exactly with a shift). k instructions that start
    anywhere take floor or ceil of k * m / 2^32 ns."""
    return n * icount_ns_mult(mips) >> 32


def granularity_ns(mips: float) -> int:
    """The most time one instruction takes, ceil(m / 2^32) ns: a timer fires at the first
    instruction boundary at or after its deadline, so up to granularity_ns - 1 ns late."""
    return (icount_ns_mult(mips) + (1 << 32) - 1) >> 32


def icount_option(mips: float) -> str:
    """QEMU's -icount speed option: shift=N at exactly 1000/2^N MIPS (as before any other
    speed was possible; the same clock as mips=), else mips=X, X written so that QEMU
    reads back the very same double."""
    shift = icount_shift(mips)
    return f"shift={shift}" if shift is not None else f"mips={float(mips)!r}"
