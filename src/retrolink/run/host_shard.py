"""One host's part of `retrolink run --hosts` (hosts.py), started by mpirun once per
shard: `python -m retrolink.run.host_shard PLAN`, PLAN the run's hosts.json.

It forks the nodes' launcher, then becomes its shard (exec of the fabric, so that the
process mpirun started is the MPI rank). The launcher waits for the shard's socket,
starts each of the shard's nodes' QEMUs as retrolink would (the command line and log
retrolink wrote in the run's folder), writes where each runs (nodeN.host) and, as each
ends, its exit status (nodeN.exit), which retrolink reads in place of the process's.
When the shard ends (the run's end, or mpirun stopping it) the launcher gives its QEMUs
FABRIC_GONE_GRACE_S to end on their own, as QEMUs do that lose their fabric, then
stops them.
"""
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from retrolink.run.hosts import EXIT_SUFFIX, HOST_SUFFIX, LOST, shard_up
from retrolink.run.processes import die_with_parent

SOCKET_WAIT_S = 60.0
FABRIC_GONE_GRACE_S = 5.0


def _write(path: Path, text: str) -> None:
    """Whole or not at all, for a reader on another host."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.rename(path)


def launch(run_dir: Path, shard: int, nodes: list[dict], env: dict) -> int:
    """Start the nodes' QEMUs once their shard's socket is there; wait for them."""
    fabric_gone = []
    signal.signal(signal.SIGUSR1, lambda *_: fabric_gone.append(time.monotonic()))
    signal.signal(signal.SIGTERM, lambda *_: fabric_gone.append(time.monotonic()))
    die_with_parent(signal.SIGUSR1)       # the parent becomes the shard
    deadline = time.monotonic() + SOCKET_WAIT_S
    sock = Path(nodes[0]["socket"])
    while not sock.exists():
        if fabric_gone or time.monotonic() > deadline:
            for node in nodes:
                _write(run_dir / f"node{node['node']}{EXIT_SUFFIX}", f"{LOST}\n")
            print(f"host_shard on {socket.gethostname()}: the shard's socket {sock} did not "
                  f"appear", file=sys.stderr)
            return 1
        time.sleep(0.01)
    _write(shard_up(run_dir, shard), f"{socket.gethostname()}\n")
    running = {}
    for node in nodes:
        n = node["node"]
        argv = shlex.split((run_dir / f"node{n}-qemu.cmdline").read_text())
        with open(run_dir / f"node{n}-qemu.log", "w") as log:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, env={**os.environ, **env},
                                 preexec_fn=die_with_parent)
        running[n] = p
        _write(run_dir / f"node{n}{HOST_SUFFIX}", f"{socket.gethostname()} pid {p.pid}\n")
    while running:
        for n, p in list(running.items()):
            if p.poll() is not None:
                _write(run_dir / f"node{n}{EXIT_SUFFIX}", f"{p.returncode}\n")
                del running[n]
        if fabric_gone and time.monotonic() - fabric_gone[0] > FABRIC_GONE_GRACE_S:
            for p in running.values():
                p.send_signal(signal.SIGTERM)
                p.send_signal(signal.SIGCONT)
            fabric_gone[0] = time.monotonic() + 1e9     # once; their exits are written
        time.sleep(0.02)
    try:
        sock.parent.rmdir()         # the shards' files are gone with them; the last goes
    except OSError:
        pass
    return 0


def main(plan_path: str) -> None:
    plan = json.loads(Path(plan_path).read_text())
    run_dir = Path(plan["run_dir"])
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
    nodes = [node for node in plan["nodes"] if node["shard"] == rank]
    Path(nodes[0]["socket"]).parent.mkdir(parents=True, exist_ok=True)
    if os.fork() == 0:
        try:
            code = launch(run_dir, rank, nodes, plan["node_env"])
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)
    os.execv(plan["fabric"], [plan["fabric"], plan["config"]])


if __name__ == "__main__":
    main(sys.argv[1])
