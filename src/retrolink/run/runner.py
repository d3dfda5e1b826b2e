"""`retrolink run`: one command on the nodes of a cluster, output prefixed per node."""
import shlex
import sys

from retrolink.model.machine import Machine
from retrolink.progress import StepFailed, say
from retrolink.run.cluster import Cluster, RunResult, new_run_dir
from retrolink.run.node_command import Artifacts


def run_cluster(machine: Machine, art: Artifacts, commands: dict[int, str], run_name: str,
                timeout_s=None, trace=False, announce=False, qemu_trace=None,
                node_env=None) -> RunResult:
    """Boot the cluster, run commands[n] on node n ('true' on the others: they still boot,
    since they carry the interconnect), wait, stop everything, return the results."""
    run_dir = new_run_dir(run_name)
    c = machine.cluster
    if announce:
        say(f"booting {c.nodes} node(s) of '{c.name}' (logs: {run_dir})")
    cluster = Cluster(machine, art, run_dir, trace=trace, qemu_trace=qemu_trace,
                      node_env=node_env)
    try:
        cluster.start({n: commands.get(n, "true") for n in range(c.nodes)})
        if announce and cluster.restored_from:
            say(f"starting from the snapshot {cluster.restored_from.name} (--cold: boot "
                "from the kernel)")
        elif announce and cluster.maker:
            say("a cold boot, saving a snapshot at the boot barrier for the next runs")
        boot_s, run_s = machine.wall_caps(timeout_s)
        return cluster.wait(run_s, boot_s)
    finally:
        cluster.stop()


def guest_script(words: list[str]) -> str:
    """The shell line a node runs for `retrolink run -- WORDS`. As with ssh, one word is a
    shell command line ('dmesg | tail'); several words are a command and its arguments,
    passed through unchanged."""
    return words[0] if len(words) == 1 else shlex.join(words)


def run_command(machine: Machine, art: Artifacts, script: str, nodes=None, timeout_s=None,
                trace=False, qemu_trace=None) -> RunResult:
    """`retrolink run`: script on the chosen nodes (all by default), output printed."""
    chosen = sorted(set(nodes)) if nodes else list(range(machine.cluster.nodes))
    for n in chosen:
        if not 0 <= n < machine.cluster.nodes:
            raise StepFailed(f"--node {n}: this machine has nodes 0..{machine.cluster.nodes - 1}")
    result = run_cluster(machine, art, {n: script for n in chosen},
                         machine.cluster.name or "cluster", timeout_s, trace, announce=True,
                         qemu_trace=qemu_trace)
    for r in result.nodes:
        if r.node in chosen:
            for line in r.lines:
                print(f"[node{r.node}] {line}")
    sys.stdout.flush()
    for problem in result.problems:
        say(problem)
    say(f"{'ok' if result.ok else 'FAILED'} in {result.wall_s:.1f} s wall")
    return result
