"""`retrolink bench boot`: wall time from the command to every node ready for its command
(docs/snapshots.md), at each node count, three ways:
- cold: every node from its kernel, no snapshot (--cold);
- making: a cold boot that saves the snapshot at the boot barrier on its way;
- snapshot: from that snapshot.
A node is ready when its command's first line appears: the command is `echo MARK ready`.
Each count gets a snapshot folder of its own, removed afterwards, so that nothing cached
from earlier runs is measured.
"""
import os
import shutil
import tempfile
import time
from pathlib import Path

from retrolink.bench import harness
from retrolink.model.machine import load_machine
from retrolink.progress import StepFailed, say
from retrolink.run.runner import run_cluster

WAYS = ("cold", "making", "snapshot")
HELP = ("cluster-ready time on --machine at each node count (--nodes): cold, cold while "
        "making the snapshot, and from the snapshot (docs/snapshots.md)")


def _ready(machine, art, way: str) -> tuple[float, list[int]]:
    """Seconds from starting the cluster to the last node's MARK, and each node's QEMU
    resident memory (KiB) at its MARK."""
    nodes = machine.cluster.nodes
    start = time.monotonic()
    result = run_cluster(machine, art, {n: "echo MARK ready" for n in range(nodes)},
                         f"bench-boot-{way}")
    if not result.ok:
        raise StepFailed(f"boot benchmark ({nodes} nodes, {way}) failed: "
                         + "; ".join(result.problems) + f" (logs: {result.run_dir})")
    # marks are timed from the start of the wait (its wall_s runs from there to the
    # end): add what starting took
    starting = (time.monotonic() - start) - result.wall_s
    return (starting + max(result.marks[(n, "ready")] for n in range(nodes)),
            [result.mark_rss_kib[(n, "ready")] for n in range(nodes)])


def measure(machine_name: str, overrides: dict, nodes: int, art) -> dict:
    machine = load_machine(machine_name, {**overrides, "cluster.nodes": nodes})
    point = {"nodes": nodes}
    saved = {k: os.environ.get(k) for k in ("RETROLINK_SNAPSHOTS", "RETROLINK_COLD")}
    folder = Path(tempfile.mkdtemp(prefix="retrolink-bench-boot-"))
    try:
        os.environ["RETROLINK_SNAPSHOTS"] = str(folder)
        for way in WAYS:
            say(f"  {nodes} nodes, {way}")
            if way == "cold":
                os.environ["RETROLINK_COLD"] = "1"
            else:
                os.environ.pop("RETROLINK_COLD", None)
            point[way], rss = _ready(machine, art, way)
            point[f"{way}_rss_mib"] = {"mean": round(sum(rss) / len(rss) / 1024, 1),
                                       "max": round(max(rss) / 1024, 1)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return point


def table(name: str, points: list[dict]) -> str:
    lines = [f"cluster ready (wall s from the command to every node's command running), "
             f"machine {name}; resident memory of a node's QEMU then (MiB, mean/max)",
             f"{'nodes':>5} {'cold':>8} {'making':>8} {'snapshot':>9} "
             f"{'RSS cold':>13} {'RSS snapshot':>13}"]
    for p in points:
        rss = {w: f"{p[w + '_rss_mib']['mean']:.0f}/{p[w + '_rss_mib']['max']:.0f}"
               for w in ("cold", "snapshot")}
        lines.append(f"{p['nodes']:>5} {p['cold']:8.1f} {p['making']:8.1f} {p['snapshot']:9.1f} "
                     f"{rss['cold']:>13} {rss['snapshot']:>13}")
    return "\n".join(lines)


def bench_boot(args, overrides: dict) -> dict:
    from retrolink.build.pipeline import build_all
    art = build_all()
    name = load_machine(args.machine, overrides).cluster.name
    points = [measure(args.machine, overrides, n, art) for n in args.nodes]
    print(table(name, points), flush=True)
    return {"machine": name, "overrides": overrides, "points": points}


def main(args, overrides: dict, sweeps) -> int:
    from retrolink.bench.fabric import node_counts
    harness.no_sweep("boot", sweeps)
    harness.check_machine(args.machine, overrides)
    args.nodes = node_counts(args.machine, overrides, args.nodes or [2, 8, 16])
    start = time.monotonic()
    harness.write_json(args, bench_boot(args, overrides), time.monotonic() - start)
    return 0
