"""One boot of a benchmark: the cluster runs its scripts, and any failure or inexact
timing stops the benchmark, naming what failed and where its logs are; and several such
boots at once."""
import os
import queue
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

from retrolink.model.machine import Machine
from retrolink.progress import StepFailed, say
from retrolink.run.node_command import Artifacts
from retrolink.run.cluster import ABANDON
from retrolink.run.runner import run_cluster


def run_measured(machine: Machine, art: Artifacts, scripts: dict[int, str], what: str,
                 run_name: str, trace: bool = False):
    say(f"  {machine.cluster.name}: {what}")
    result = run_cluster(machine, art, scripts, run_name, trace=trace)
    if result.problems:
        out = "\n".join(f"    [node{r.node}] {l}" for r in result.nodes for l in r.lines[-8:])
        raise StepFailed(f"benchmark '{what}' on {machine.cluster.name} failed:\n  "
                         + "\n  ".join(result.problems) + f"\n{out}\n  logs: {result.run_dir}")
    if (result.fabric_stats or {}).get("causality_violations", 0):
        raise StepFailed(f"'{what}': the fabric counted causality violations; results would "
                         f"not be exact (logs: {result.run_dir})")
    say(f"  {machine.cluster.name}: {what}: {result.wall_s:.1f} host s{virtual_s(result)}")
    return result


def virtual_s(result) -> str:
    """', V virtual s, N sync points' (the node's with the most) from the fabric's
    counters, if it wrote them; V counts from 0, the boot included."""
    nodes = (result.fabric_stats or {}).get("nodes") or []
    if not nodes:
        return ""
    v = max(n["last_time_ns"] for n in nodes) / 1e9
    return f", {v:.2f} virtual s, {max(n['syncs'] for n in nodes)} sync points"


def run_at_once(jobs: list) -> list:
    """Run independent measurements, each a callable that boots a cluster of its own, at
    the same time, one per core, each cluster's QEMUs and fabric pinned to that core (as
    the test suite's workers are, tests/lib/parallel.py): its nodes then hand the core to
    each other rather than spin while another cluster wants it (docs/fabric.md). More
    jobs than cores wait for a core, in the order given (longest first is best). Every
    cluster is deterministic on its own, so its results are those of a run alone.
    Returns the jobs' results in their order; the first failure (or an interrupt) stops
    the clusters still running and is raised."""
    cores = sorted(os.sched_getaffinity(0))
    free = queue.SimpleQueue()
    for core in cores:
        free.put(core)

    def pinned(job):
        core = free.get()
        try:
            os.sched_setaffinity(0, {core})     # this thread: what it starts inherits it
            return job()
        finally:
            free.put(core)

    with ThreadPoolExecutor(max_workers=len(cores)) as pool:
        futures = [pool.submit(pinned, job) for job in jobs]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
            for f in futures:
                if f.done() and f.exception():
                    raise f.exception()
            return [f.result() for f in futures]
        except BaseException:
            # the others are not waited for: their clusters stop, those not started do not
            for f in futures:
                f.cancel()
            ABANDON.set()
            raise
        finally:
            pool.shutdown(wait=True)
            ABANDON.clear()
