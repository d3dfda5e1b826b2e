"""`retrolink run --hosts H1,H2,...` (docs/fabric.md, "Shards on several hosts"): the
fabric's shard k and the QEMUs of the nodes it serves run on host k, started by Open
MPI's mpirun. On each host mpirun starts `host_shard.py`, which starts that shard's
nodes and then becomes the shard; retrolink, on the host it was typed on, reads what
they write in the run's folder, which every host must see at the same path."""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from retrolink import paths
from retrolink.run.shards import MPIRUN_ENV, mpirun_path

# where each host keeps a run's sockets and lock-step files: on its own disk (they are
# its shard's and its QEMUs' alone, and a lock-step file is shared memory), at a path
# that is the same on every host
LOCAL_ROOT = Path("/tmp/retrolink-hosts")
# written in the run's folder by a host when its shard is listening (the socket itself
# is on that host only)
UP_SUFFIX = ".up"
HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# a node's QEMU's exit status, written by host_shard.py when it ends (and what ran it)
EXIT_SUFFIX, HOST_SUFFIX = ".exit", ".host"
# what a node's status is when its host's processes ended without giving it, and how
# long after mpirun's end that is decided (host_shard.py's grace, and a margin)
LOST = -1
LAUNCHER_GRACE_S = 8.0
# the environment every host's processes get from here (mpirun -x): where the Python
# package is, and retrolink's own variables (RETROLINK_*: some are the QEMUs')
FORWARDED = ("PYTHONPATH",)
FORWARDED_PREFIX = "RETROLINK_"


def check_hosts(hosts: list[str], nodes: int) -> str:
    """What is wrong with a --hosts list for a machine of `nodes` nodes ('' if nothing):
    a host's shards are listed together, since mpirun fills a host's slots in turn."""
    if not hosts:
        return "give at least one host"
    for h in hosts:
        if not HOST_NAME.fullmatch(h):
            return f"'{h}' is not a host name"
    if len(hosts) > nodes:
        return f"{len(hosts)} shards for {nodes} nodes (one node a shard at most)"
    seen = []
    for h in hosts:
        if h in seen and seen[-1] != h:
            return (f"{h} appears apart: list a host's shards together "
                    f"({','.join(sorted(hosts, key=hosts.index))})")
        seen.append(h)
    return ""


def socket_dir(run_dir: Path) -> Path:
    return LOCAL_ROOT / run_dir.name


def shard_up(run_dir: Path, shard: int) -> Path:
    return run_dir / f"shard{shard}{UP_SUFFIX}"


def host_slots(hosts: list[str]) -> str:
    """mpirun's --host: each host with as many slots as it runs shards, in order."""
    counts: dict[str, int] = {}
    for h in hosts:
        counts[h] = counts.get(h, 0) + 1
    return ",".join(f"{h}:{k}" for h, k in counts.items())


def mpirun_command(hosts: list[str], plan: Path, node_env: dict) -> list[str]:
    """mpirun starting host_shard.py once per host slot: rank k is shard k, on hosts[k]
    (check_hosts: a host's slots are consecutive)."""
    names = {*FORWARDED, *node_env, *(v for v in os.environ if v.startswith(FORWARDED_PREFIX))}
    forward = [a for name in sorted(names) for a in ("-x", name)]
    return [mpirun_path(), "--host", host_slots(hosts), "-n", str(len(hosts)), "--map-by", "slot",
            "--oversubscribe", "--bind-to", "none", *forward,
            sys.executable, "-m", "retrolink.run.host_shard", str(plan)]


def mpirun_env(node_env: dict) -> dict:
    return dict(os.environ, **MPIRUN_ENV, **node_env, PYTHONPATH=str(paths.REPO / "src"))


class HostedNode:
    """A node's QEMU on a shard's host, as retrolink sees it from here: its exit status
    when host_shard.py has written it, and nothing of the process itself (it may be on
    another machine). Has what the run asks of a subprocess.Popen."""

    pid = None

    def __init__(self, run_dir: Path, node: int, launcher):
        self.exit_file = run_dir / f"node{node}{EXIT_SUFFIX}"
        self.host_file = run_dir / f"node{node}{HOST_SUFFIX}"
        self.launcher = launcher        # the mpirun of the shards and their nodes
        self.returncode: int | None = None
        self.gone_at: float | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.returncode = int(self.exit_file.read_text())
            except (OSError, ValueError):
                # mpirun waits for the shards only: give the launchers time to say
                if self.launcher.poll() is not None:
                    self.gone_at = self.gone_at or time.monotonic()
                    if time.monotonic() - self.gone_at > LAUNCHER_GRACE_S:
                        self.returncode = LOST
        return self.returncode

    def where(self) -> str:
        """'HOST pid PID', as host_shard.py wrote it; '' before it started the QEMU."""
        try:
            return self.host_file.read_text().strip()
        except OSError:
            return ""

    def send_signal(self, sig) -> None:
        """Not from here: stopping the run stops mpirun, which stops every host's."""

    def kill(self) -> None:
        """Ends mpirun, and with it every host's processes (and the wait for a status)."""
        if self.launcher.poll() is None:
            self.launcher.kill()

    def wait(self, timeout: float | None = None) -> int:
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("host_shard", timeout)
            time.sleep(0.05)
        return self.returncode
