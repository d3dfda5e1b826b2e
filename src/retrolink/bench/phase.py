"""One boot of a benchmark: the cluster runs its scripts, and any failure or inexact
timing stops the benchmark, naming what failed and where its logs are."""
from retrolink.model.machine import Machine
from retrolink.progress import StepFailed, say
from retrolink.run.node_command import Artifacts
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
    return result
