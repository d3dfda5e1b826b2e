"""Quantities in machine files: rates like "12.5MB/s" or "100Mb/s", sizes like "256M".
MB means 10^6 bytes, as in the papers; M in a memory size means MiB, as in QEMU."""
import math
import re

_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKMG]?)(B|b)/s\s*$")
# The largest rate any board or link takes: far above any modeled hardware, and small
# enough that a byte count times 10^9 ns over it never overflows 64 bits.
MAX_RATE = 10**12
MAX_NODE_MIB = 16384
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
    """Memory size in MiB from 256, "256M" or "1G"."""
    if isinstance(value, int) and not isinstance(value, bool):
        mib = value
    else:
        m = re.match(r"^\s*(\d+)\s*([MG])i?B?\s*$", str(value))
        if not m:
            raise ValueError(f"{value!r} is not a memory size; expected e.g. \"256M\" or \"1G\"")
        mib = int(m.group(1)) * (1024 if m.group(2) == "G" else 1)
    if mib < 64:
        raise ValueError(f"{value!r}: at least 64 MiB are needed to boot the guest")
    if mib > MAX_NODE_MIB:
        raise ValueError(f"{value!r}: at most {MAX_NODE_MIB} MiB per node (every node is a "
                         "QEMU on this host, and a period machine had far less)")
    return mib


def icount_shift(mips: float) -> int:
    """QEMU runs one guest instruction per 2^shift ns of virtual time, so a CPU of
    1000/2^shift MIPS: 1000 -> 0, 500 -> 1, 250 -> 2, 125 -> 3, 62.5 -> 4, ..."""
    if not math.isfinite(mips) or mips <= 0:
        raise ValueError(f"cpu_mips={mips!r} must be a positive, finite number of MIPS")
    shift = math.log2(1000.0 / mips)
    if shift < 0 or abs(shift - round(shift)) > 1e-9 or round(shift) > 10:
        options = ", ".join(f"{1000 / 2 ** s:g} (shift {s})" for s in range(0, 8))
        raise ValueError(f"cpu_mips={mips:g} is not 1000/2^N MIPS, which is what QEMU's icount "
                         f"can model; choose one of {options}")
    return int(round(shift))
