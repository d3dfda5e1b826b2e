"""`retrolink run`: one command on the nodes of a cluster, output prefixed per node."""
import sys

from .cluster import Cluster, RunResult, new_run_dir
from .machine import Machine
from .node_command import Artifacts
from .progress import say


def run_command(machine: Machine, art: Artifacts, script: str, nodes=None, timeout_s=None,
                trace=False, quiet=False) -> RunResult:
    """Run script on the chosen nodes (all by default); the others boot and idle-exit."""
    chosen = sorted(set(nodes)) if nodes else list(range(machine.cluster.nodes))
    for n in chosen:
        if not 0 <= n < machine.cluster.nodes:
            raise ValueError(f"--node {n}: this machine has nodes 0..{machine.cluster.nodes - 1}")
    # nodes not chosen still boot (they carry the interconnect) and run 'true'
    commands = {n: (script if n in chosen else "true") for n in range(machine.cluster.nodes)}
    run_dir = new_run_dir(machine.cluster.name or "cluster")
    c = machine.cluster
    timeout = timeout_s or (c.boot_timeout_s + c.run_timeout_s)
    if not quiet:
        say(f"booting {c.nodes} node(s) of '{c.name}' (logs: {run_dir})")
    cluster = Cluster(machine, art, run_dir, trace=trace)
    try:
        cluster.start(commands)
        result = cluster.wait(timeout)
    finally:
        cluster.stop()
    if not quiet:
        for r in result.nodes:
            if r.node in chosen:
                for line in r.lines:
                    print(f"[node{r.node}] {line}")
        sys.stdout.flush()
        for r in result.nodes:
            if r.problem and (r.node in chosen or not r.ok):
                say(r.problem)
        say(f"{'ok' if result.ok else 'FAILED'} in {result.wall_s:.1f} s wall")
    return result
