"""Where things live: the checkout, its build directory and the cache outside it."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
QEMU_OVERLAY = REPO / "qemu"               # linked into QEMU's tree as hw/retrolink
INCLUDE = REPO / "include" / "retrolink"  # shared headers: include/retrolink in that tree
WIRE_HEADER = INCLUDE / "wire.h"
GUEST = REPO / "guest"
MACHINES = REPO / "machines"


def build_dir() -> Path:
    """The meson build directory for what is ours (inside the checkout)."""
    return Path(os.environ.get("RETROLINK_BUILD", REPO / "build"))


def cache_dir() -> Path:
    """Downloads and the QEMU build, shared by every checkout (outside the clone)."""
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "retrolink"
    return Path(os.environ.get("RETROLINK_CACHE", default))


def fabric_binary() -> Path:
    return build_dir() / "fabric" / "retrolink-fabric"


def runs_dir() -> Path:
    """Per-run logs, sockets and results of clusters started from this checkout."""
    return Path(os.environ.get("RETROLINK_RUNS", REPO / "build" / "runs"))
