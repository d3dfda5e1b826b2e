"""Clusters that start from a snapshot (docs/snapshots.md).

Every node's init stops at the boot barrier, booted, before it reads its command; the
fabric runs every node to one virtual time there, with nothing in flight (nodes without a
fabric stop where they arrive). The first boot of a node configuration saves each QEMU
there (QMP `migrate` to a file) and the fabric, if any, saves its own state; later boots
of the same configuration start from those files (`-incoming`, the fabric's
`restore_state`) and read their command after the barrier, as a cold boot does, so both
give the same output.

A snapshot is keyed by everything that shapes it: the QEMU binary, kernel and initramfs
(their contents), every node's QEMU command line and the fabric's configuration, with the
run's own paths and the command left out. It lives in the build cache, with a size cap
(least recently used go first); `--cold` (RETROLINK_COLD=1) neither uses nor makes one.
Each file's size and digest are in its manifest, checked before every use: a damaged
snapshot is removed and made again, never used.
"""
import hashlib
import json
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from retrolink import paths
from retrolink.progress import say

FORMAT = 2                      # of the manifest and the files beside it (2: xxh3)
MANIFEST = "manifest.json"
FABRIC_STATE = "fabric.state"
# RETROLINK_SNAPSHOT_CAP_MIB. A node's file is ~145 MB (256 MiB of guest RAM, the dirty
# half of it); the test suite's 26 configurations take 9.8 GiB. Under a cap below that the
# suite, which boots them in turn, evicts each before its next use: every boot cold.
DEFAULT_CAP_MIB = 24576
MIGRATE_BYTES_PER_S = 16 << 30
# how long the nodes may take to be saved once all are at the barrier, and the fabric
# to write its state
SAVE_TIMEOUT_S = 300


def cold() -> bool:
    """--cold: boot every node from its kernel, neither using nor making a snapshot."""
    return os.environ.get("RETROLINK_COLD", "") not in ("", "0")


def snapshots_dir() -> Path:
    return Path(os.environ.get("RETROLINK_SNAPSHOTS", paths.cache_dir() / "snapshots"))


def cap_bytes() -> int:
    raw = os.environ.get("RETROLINK_SNAPSHOT_CAP_MIB", str(DEFAULT_CAP_MIB))
    try:
        return int(raw) << 20
    except ValueError:
        raise ValueError(f"RETROLINK_SNAPSHOT_CAP_MIB={raw!r}: expected whole MiB") from None


def file_digest(path: Path) -> str:
    """A file's XXH3-128: damage, not an adversary, is what it guards against, and every
    run from a snapshot reads each node's file (an 8-node one, 1.2 GB): at several GB/s it
    costs what reading the pages does, where BLAKE2 took seconds."""
    import xxhash
    h = xxhash.xxh3_128()
    with open(path, "rb") as f:
        while chunk := f.read(4 << 20):
            h.update(chunk)
    return h.hexdigest()


def _without(argv: list[str], option: str) -> list[str]:
    """argv without every 'option VALUE' pair."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == option:
            skip = True
        else:
            out.append(a)
    return out


def files_named(argvs: list[list[str]], run_paths: list[Path]) -> list[Path]:
    """The regular files the nodes' QEMU arguments name as a property's value
    (`prom=...`, `file=...`), outside the run's own folders: what a device loads at boot
    (an SBus card's FCode PROM, which OpenBIOS turns into the device tree the kernel
    keeps), whose contents shape the snapshot as the kernel's do. The run's files (the
    node's command) are left out: they are read after the barrier."""
    found: list[Path] = []
    for argv in argvs:
        for arg in argv:
            for part in arg.split(","):
                value = Path(part.split("=", 1)[1]) if "=" in part else None
                if (value and value.is_absolute() and value.is_file() and value not in found
                        and not any(value.is_relative_to(r) for r in run_paths)):
                    found.append(value)
    return found


def snapshot_key(binaries: list[Path], node_argvs: list[list[str]], fabric_conf: str,
                 run_paths: list[Path], end_markers: list[str]) -> str:
    """What shapes a snapshot, as one digest. Left out: the run's own paths (its
    directory and socket folder), each node's end marker, tracing, the instruction
    profile's plugin, a gdbstub (docs/debugging.md), and where the
    binaries are (their contents are in it: the initramfs of another clone of the same
    commit is the same file, in another place)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"retrolink-snapshot {FORMAT}\n".encode())
    for b in binaries:
        h.update(f"{b.name} {file_digest(b)}\n".encode())

    def plain(text: str) -> str:
        for i, p in enumerate(run_paths):
            text = text.replace(str(p), f"<run{i}>")
        for b in binaries:
            text = text.replace(str(b), f"<{b.name}>")
        for m in end_markers:
            text = text.replace(m, "<end>")
        return text
    for argv in node_argvs:
        kept = _without(_without(_without(argv, "-trace"), "-plugin"), "-gdb")
        h.update(plain("\0".join(kept)).encode() + b"\n")
    conf = [l for l in fabric_conf.splitlines() if not l.startswith("trace ")]
    h.update(plain("\n".join(conf)).encode())
    return h.hexdigest()


@dataclass
class Snapshot:
    """One snapshot's folder: node{N}.mig per node, fabric.state (when the machine has a
    fabric), manifest.json."""
    dir: Path
    nodes: int
    fabric: bool = True

    def node_file(self, n: int) -> Path:
        return self.dir / f"node{n}.mig"

    @property
    def fabric_state(self) -> Path:
        return self.dir / FABRIC_STATE

    def files(self) -> list[Path]:
        nodes = [self.node_file(n) for n in range(self.nodes)]
        return nodes + [self.fabric_state] if self.fabric else nodes


def find(key: str, nodes: int, fabric: bool = True) -> Snapshot | None:
    """The snapshot for key if it is whole and undamaged; a damaged one is removed."""
    d = snapshots_dir() / key
    if not d.is_dir():
        return None
    snap = Snapshot(d, nodes, fabric)
    problem = _check(snap, key)
    if problem:
        say(f"the snapshot {d} is unusable ({problem}): removing it; this boot is cold "
            "and makes it again")
        shutil.rmtree(d, ignore_errors=True)
        return None
    os.utime(d / MANIFEST)          # recently used: the cap removes others first
    return snap


def _check(snap: Snapshot, key: str) -> str:
    try:
        manifest = json.loads((snap.dir / MANIFEST).read_text())
    except (OSError, ValueError) as e:
        return f"no readable manifest: {e}"
    if manifest.get("format") != FORMAT or manifest.get("key") != key:
        return "made by another version of retrolink"
    want = manifest.get("files", {})
    for f in snap.files():
        entry = want.get(f.name)
        if not entry:
            return f"the manifest does not list {f.name}"
        try:
            size = f.stat().st_size
        except OSError:
            return f"{f.name} is missing"
        if size != entry.get("size") or file_digest(f) != entry.get("xxh3_128"):
            return f"{f.name} is damaged (its size or digest is not the manifest's)"
    return ""


def new_build_dir(key: str) -> Path:
    d = snapshots_dir() / f"{key}.new-{os.getpid()}-{time.monotonic_ns()}"
    d.mkdir(parents=True)
    return d


def publish(build: Path, key: str, nodes: int, fabric: bool = True) -> Path | None:
    """Write the manifest and move the folder into place (atomically; if another run
    made the same snapshot meanwhile, ours goes). Then keep the cache under its cap."""
    snap = Snapshot(build, nodes, fabric)
    files = {f.name: {"size": f.stat().st_size, "xxh3_128": file_digest(f)}
             for f in snap.files()}
    (build / MANIFEST).write_text(json.dumps({"format": FORMAT, "key": key, "nodes": nodes,
                                              "files": files}, indent=1) + "\n")
    final = snapshots_dir() / key
    try:
        build.rename(final)
    except OSError:
        shutil.rmtree(build, ignore_errors=True)
        return None
    enforce_cap(keep=final)
    return final


def enforce_cap(keep: Path | None = None) -> None:
    """Remove the least recently used snapshots until the cache is under its cap, and
    leftovers of makers that died (folders '*.new-*' older than an hour)."""
    root = snapshots_dir()
    if not root.is_dir():
        return
    now = time.time()
    entries = []
    for d in root.iterdir():
        if ".new-" in d.name:
            if now - d.stat().st_mtime > 3600:
                shutil.rmtree(d, ignore_errors=True)
            continue
        try:
            used = (d / MANIFEST).stat().st_mtime
        except OSError:
            used = 0
        size = sum(f.stat().st_size for f in d.iterdir() if f.is_file())
        entries.append((used, d, size))
    total = sum(size for _, _, size in entries)
    for used, d, size in sorted(entries, key=lambda e: e[0]):
        if total <= cap_bytes():
            break
        if d != keep:
            shutil.rmtree(d, ignore_errors=True)
            total -= size


class _ClusterGone(Exception):
    """The cluster stopped before the snapshot was made: its run says why."""


# how long a lost monitor connection waits for the run to see its QEMU gone (a QEMU that
# exits closes its socket a moment before its process ends)
GONE_GRACE_S = 2.0


def _connection_lost(e: BaseException) -> bool:
    """The QMP library's ways of saying that QEMU closed the connection (its words, e.g.
    'QMPClient is disconnecting. Call disconnect() to return to IDLE state.', are not
    for the user)."""
    from qemu.qmp import ConnectError, ExecInterruptedError, StateError
    return isinstance(e, (StateError, ExecInterruptedError, ConnectError, EOFError,
                          ConnectionError))


class SnapshotMaker(threading.Thread):
    """During a cold boot that makes a snapshot: wait until every node has stopped at
    the barrier (the fabric asked them to, or, without a fabric, their barrier device's
    stop-at-arrival), save each (QMP migrate to a file), resume them, and publish the
    snapshot once the fabric's state is there too. Any failure resumes the nodes all the
    same: the run goes on cold, without a snapshot."""

    def __init__(self, qmp_paths: list[Path], build: Path, key: str, alive,
                 fabric: bool = True):
        super().__init__(daemon=True, name="snapshot-maker")
        self.qmp_paths, self.build, self.key, self.alive = qmp_paths, build, key, alive
        self.fabric = fabric
        self.stopping = threading.Event()
        self.problem = ""
        self.made: Path | None = None
        self.saved_s: float | None = None
        # the node and the step under way, for a failure's message
        self.node, self.doing = 0, "connecting to it"

    def run(self) -> None:
        import asyncio
        try:
            asyncio.run(self._make())
        except _ClusterGone as e:
            self.problem = str(e)           # the run says what happened to the cluster
        except Exception as e:       # noqa: BLE001 - any failure: the run goes on cold
            self.problem = str(e) or type(e).__name__
            if _connection_lost(e):
                self.problem = (f"node{self.node}'s QEMU closed its monitor connection while "
                                f"retrolink was {self.doing} (the QEMU ended, or the run "
                                "was interrupted)")
                # the run names what happened to a QEMU that is gone: wait to know
                deadline = time.monotonic() + GONE_GRACE_S
                while self.alive() and not self.stopping.is_set() and \
                        time.monotonic() < deadline:
                    time.sleep(0.05)
            if not (self.stopping.is_set() or not self.alive()):
                say(f"no snapshot made: {self.problem}")
        if self.problem:
            shutil.rmtree(self.build, ignore_errors=True)
            return
        self.made = publish(self.build, self.key, len(self.qmp_paths), self.fabric)

    async def _make(self) -> None:
        import asyncio
        nodes = []
        try:
            # no wall-clock bound on the boot: a busy host makes it slower, and a node that
            # stopped making progress is the fabric's stall to name; giving up here would
            # leave the nodes that reach the barrier later stopped there for ever
            for n, p in enumerate(self.qmp_paths):
                nodes.append(await self._wait(lambda: self._connect(n, p),
                                              f"node{n}'s QMP socket {p}", n, bounded=False))
            for n, c in enumerate(nodes):
                await self._wait(lambda: self._status(c, "paused"),
                                 f"node{n} to stop at the barrier", n, bounded=False)
            started = time.monotonic()
            for n, c in enumerate(nodes):
                # a stopped VM to a local file: no reason for QEMU's default 128 MiB/s cap
                self.node, self.doing = n, "starting to save it"
                await c.execute("migrate-set-parameters", {"max-bandwidth": MIGRATE_BYTES_PER_S})
                await c.execute("migrate", {"uri": f"file:{Snapshot(self.build, 0).node_file(n)}"})
            for n, c in enumerate(nodes):
                await self._wait(lambda: self._migrated(c, n), f"node{n}'s snapshot", n)
            self.saved_s = time.monotonic() - started
            if self.fabric:
                state = self.build / FABRIC_STATE
                await self._wait(lambda: state.exists(), "the fabric's state")
        finally:
            # all at once: a node resumed waits for the others, holding up its monitor
            await asyncio.gather(*(self._resume(c) for c in nodes), return_exceptions=True)

    @staticmethod
    async def _connect(n: int, path: Path):
        """A client connected to node n's QMP; None to try again:
        - while QEMU has yet to listen: its socket file appears at bind(), a moment
          before listen(), and a connect in between is refused;
        - when an event came before the greeting: a node that stops at the barrier as we
          connect sends STOP, and QEMU may write it first (seen under load); qemu.qmp
          then refuses the session ("Did not understand Greeting"). A new connection
          gets its greeting first."""
        from qemu.qmp import ConnectError, QMPClient
        from qemu.qmp.qmp_client import GreetingError
        if not path.exists():
            return None
        c = QMPClient(f"node{n}")
        try:
            await c.connect(str(path))
        except ConnectError as e:
            if isinstance(e.exc, (ConnectionRefusedError, FileNotFoundError, GreetingError)):
                return None
            raise
        return c

    @staticmethod
    async def _status(c, want: str) -> bool:
        return (await c.execute("query-status"))["status"] == want

    @staticmethod
    async def _resume(c) -> None:
        """cont, once QEMU can take it: just after a save its state is 'finish-migrate'
        for a while, and cont is refused ("Migration is not finalized yet")."""
        import asyncio
        from qemu.qmp import ExecuteError
        try:
            for _ in range(1500):
                status = (await c.execute("query-status"))["status"]
                if status == "running":
                    return
                if status in ("paused", "postmigrate"):
                    try:
                        await c.execute("cont")
                        return
                    except ExecuteError:
                        pass         # refused for now
                await asyncio.sleep(0.02)
        finally:
            await c.disconnect()

    @staticmethod
    async def _migrated(c, n: int) -> bool:
        info = await c.execute("query-migrate")
        status = info.get("status")
        if status == "failed":
            raise RuntimeError(f"node{n}'s QEMU could not save its state: "
                               f"{info.get('error-desc', 'no reason given')}")
        return status == "completed"

    async def _wait(self, ready, what: str, node: int = None, bounded: bool = True):
        """Until ready() (a function, or one returning an awaitable) is true (bounded: for
        at most SAVE_TIMEOUT_S); returns what it returned then."""
        import asyncio
        import inspect
        if node is not None:
            self.node, self.doing = node, f"waiting for {what}"
        deadline = time.monotonic() + SAVE_TIMEOUT_S
        while True:
            r = ready()
            if inspect.isawaitable(r):
                r = await r
            if r:
                return r
            if self.stopping.is_set() or not self.alive():
                raise _ClusterGone(f"the cluster stopped while waiting for {what}")
            if bounded and time.monotonic() > deadline:
                raise RuntimeError(f"waited {SAVE_TIMEOUT_S} s for {what}")
            await asyncio.sleep(0.02)
