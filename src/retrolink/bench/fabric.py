"""`retrolink bench fabric`: what the lock-step costs, in host wall time per virtual second.

Three runs of the same 2-node script, each node marking the start and end of a stretch
of virtual time (MARK lines, timed by the host as they appear):
- idle: both guests sleep (synchronised, with the fabric);
- busy: both guests spin (synchronised);
- free: both guests spin with no board and no fabric (free-running TCG).
Goals (issue 3): idle >= 100x faster than real time; busy-synchronised >= 0.5 of free.
Host speed drifts on a shared machine, so the busy pair (synchronised, then free) is run
BUSY_ROUNDS times back to back and the median of each round's ratio is reported.
"""
import statistics

from retrolink.model.machine import load_machine
from retrolink.progress import StepFailed, say
from retrolink.run.runner import run_cluster

IDLE_S, BUSY_S = 20, 3
BUSY_ROUNDS = 3
SPIN = ("e=$(($(cut -d. -f1 /proc/uptime)+{s})); echo MARK start; "
        "while [ $(cut -d. -f1 /proc/uptime) -lt $e ]; do :; done; echo MARK end")
SLEEP = "echo MARK start; sleep {s}; echo MARK end"


def timed_stretch(machine, art, script: str, seconds: int, what: str) -> float:
    say(f"  {what}")
    result = run_cluster(machine, art, {n: script.format(s=seconds) for n in (0, 1)},
                         "bench-fabric")
    run_dir = result.run_dir
    if not result.ok:
        raise StepFailed(f"fabric benchmark '{what}' failed: "
                         + "; ".join(result.problems)
                         + f" (logs: {run_dir})")
    m = result.marks
    wall = max(m[(n, "end")] for n in (0, 1)) - min(m[(n, "start")] for n in (0, 1))
    return wall / seconds


def bench_fabric(args) -> dict:
    """Print the lock-step cost and return its figures (for --json)."""
    from retrolink.build.pipeline import build_all
    art = build_all()
    synced = load_machine(args.machine)
    free = load_machine("plain")
    idle = timed_stretch(synced, art, SLEEP, IDLE_S, f"idle: both guests sleep {IDLE_S} s")
    rounds = []
    for r in range(1, BUSY_ROUNDS + 1):
        synced_s = timed_stretch(synced, art, SPIN, BUSY_S,
                                 f"round {r}/{BUSY_ROUNDS}: busy, both guests spin {BUSY_S} s")
        free_s = timed_stretch(free, art, SPIN, BUSY_S,
                               f"round {r}/{BUSY_ROUNDS}: free-running, same spin, no fabric")
        rounds.append((synced_s, free_s, free_s / synced_s))
    busy, unsync, ratio = (statistics.median(x) for x in zip(*rounds))
    print(f"fabric lock-step cost, machine {synced.cluster.name} (2 nodes active)")
    print(f"  idle, synchronised:   {idle:8.4f} s wall per virtual s  ({1 / idle:8.1f}x real time; goal >= 100x)")
    print(f"  busy, synchronised:   {busy:8.4f} s wall per virtual s  (median of {BUSY_ROUNDS})")
    print(f"  busy, free-running:   {unsync:8.4f} s wall per virtual s  (median of {BUSY_ROUNDS})")
    print(f"  synchronised / free-running speed: {ratio:6.3f}  (goal >= 0.5; rounds: "
          + ", ".join(f"{x:.3f}" for *_, x in rounds) + ")")
    return {"machine": synced.cluster.name, "idle_wall_per_virtual_s": idle,
            "busy_synced_wall_per_virtual_s": busy, "busy_free_wall_per_virtual_s": unsync,
            "busy_ratio": ratio, "busy_ratio_rounds": [x for *_, x in rounds]}
