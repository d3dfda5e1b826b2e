"""Whether the last build is still current, decided from stamps of its inputs alone.

A build that finds nothing to do still costs seconds in its tools (apt's package
queries, QEMU's ninja graph, meson install, the initramfs's cpio). Instead, build_all
takes a stamp of everything the build reads: the sources of every layer (names, sizes,
change and modification times: an edit, a new or a deleted file changes it), the small
files whose content decides it (package lists, the pin, the patches: hashed, whatever
their times say), the host's package state and index (an apt install or update), the
paths of the checkout and cache, and what the build made (so that another checkout
relinking the shared QEMU, or a deleted file, is seen). When that equals the stamp
written after the last successful build, its artifacts are taken as they are.
"""
import hashlib
import json
import os
from pathlib import Path

from retrolink import paths

# every source tree the build reads (QEMU's overlay with its patches and pin, the shared
# headers, the fabric, the guest with the init script, the build code itself)
TREES = ("qemu", "include", "fabric", "guest", "deps", "src/retrolink/build")
# single files at the top of the checkout
FILES = ("meson.build", "meson_options.txt", "requirements.txt", "retrolink")
# small files whose content decides the build: hashed, not trusted by their times
HASHED_SUFFIXES = (".txt", ".toml", ".mak", ".patch", ".def")
# the host: installed packages (dpkg's database) and the package index (the guest
# kernel's ABI is resolved from it)
HOST = ("/var/lib/dpkg/status", "/var/lib/apt/lists")
SKIP_DIRS = {"__pycache__", ".git"}


def _stat_line(path: Path, st) -> str:
    return f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"


def _walk(root: Path, h) -> None:
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except FileNotFoundError:
        h.update(f"{root}\0missing\n".encode())
        return
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            if e.name not in SKIP_DIRS:
                _walk(Path(e.path), h)
            continue
        st = e.stat(follow_symlinks=False)
        h.update(_stat_line(Path(e.path), st).encode() + b"\n")
        if e.name.endswith(HASHED_SUFFIXES) and e.is_file() and st.st_size < 1 << 20:
            h.update(hashlib.sha256(Path(e.path).read_bytes()).digest())


def inputs_stamp() -> str:
    """One digest over everything the build reads (see the module's text)."""
    h = hashlib.sha256()
    h.update(f"{paths.REPO}\0{paths.build_dir()}\0{paths.cache_dir()}\n".encode())
    for rel in TREES:
        _walk(paths.REPO / rel, h)
    for rel in FILES:
        p = paths.REPO / rel
        try:
            h.update(_stat_line(p, p.stat()).encode() + hashlib.sha256(p.read_bytes()).digest())
        except FileNotFoundError:
            h.update(f"{p}\0missing\n".encode())
    for p in HOST:
        try:
            st = os.stat(p)
            h.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        except FileNotFoundError:
            h.update(f"{p}\0missing\n".encode())
    return h.hexdigest()


def outputs_stamp(artifacts: dict) -> dict:
    """Each artifact's size and modification time (None when it is gone)."""
    out = {}
    for name, path in artifacts.items():
        try:
            st = os.stat(path)
            out[name] = [st.st_size, st.st_mtime_ns]
        except FileNotFoundError:
            out[name] = None
    return out


def record_path() -> Path:
    return paths.build_dir() / "build-stamp.json"


def write(inputs: str, artifacts: dict) -> None:
    """After a successful build: the inputs' stamp taken before it, what it made."""
    record = {"inputs": inputs, "artifacts": {k: str(v) for k, v in artifacts.items()},
              "outputs": outputs_stamp(artifacts)}
    path = record_path()
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record) + "\n")
    tmp.replace(path)


def current(inputs: str) -> dict | None:
    """The last build's artifacts (name -> path) if its stamp still holds, else None."""
    try:
        record = json.loads(record_path().read_text())
        if record["inputs"] != inputs:
            return None
        artifacts = {k: Path(v) for k, v in record["artifacts"].items()}
        if outputs_stamp(artifacts) != record["outputs"]:
            return None
        return artifacts
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def forget() -> None:
    """Before a build: a build that fails part-way leaves no stamp saying it is current."""
    try:
        record_path().unlink()
    except FileNotFoundError:
        pass
