"""What a perfect lock-step would cost, from the nodes' own sync-point timelines.

An experiment tool (docs/experiments/2026-11-26-lockstep-perfect-replay.md), not a
benchmark: a QEMU built with docs/experiments/sync-timeline.diff writes, for node N,
PREFIX.N: one record per sync point (the deadline hook's calls and the sync timer's),
four native uint64 each: host ns on entry, host ns on return (CLOCK_MONOTONIC, one
clock for every QEMU), virtual ns, and what it was (0 the hook found no grant, 1 it
moved on, 2 the sync timer).

Between two records a node runs guest code: its *work*, in host time. In the hook it
publishes and waits. `ideal()` replays the nodes' work under a lock-step that costs
nothing and knows every peer's virtual time at once: a node may not pass virtual time
v before every peer has reached v - L. Against each node's own work, that is the best
any conservative protocol could do with this guest work; the real run's time against
it is what the protocol itself costs (its sync points, and publications half a window
old).

`by_window()` splits a run made with RETROLINK_TOGGLE_NS=W into the windows where the
experiment's setting applied (even multiples of W) and the others: per virtual second,
sync points, work and time in the hook, under one host speed.

    PYTHONPATH=src .venv/bin/python -m retrolink.bench.sync_timeline PREFIX NODES \
        FROM_S TO_S LOOKAHEAD_NS [LOOKAHEAD_NS ...]
    PYTHONPATH=src .venv/bin/python -m retrolink.bench.sync_timeline PREFIX NODES \
        FROM_S TO_S --toggle W_NS
"""
import bisect
import sys
from array import array
from dataclasses import dataclass

RECORD_WORDS = 4


@dataclass
class Timeline:
    """One node's sync points within a stretch of virtual time."""
    virtual: list[int]      # ns, one per sync point
    work: list[int]         # host ns outside the hook before each (0 for the first)
    hook: list[int]         # host ns inside the hook at each (0 for the first)
    host: int               # host ns from the first sync point's return to the last's

    @property
    def in_hook(self) -> int:
        """Host ns inside the hook over the stretch."""
        return sum(self.hook)


def from_records(records: list[tuple[int, int, int, int]], v0: int, v1: int) -> Timeline:
    """A timeline from (host in, host out, virtual, kind) records, those within [v0, v1]."""
    rs = [r for r in records if v0 <= r[2] <= v1]
    if len(rs) < 2:
        raise ValueError(f"fewer than two sync points between {v0} and {v1} ns")
    work = [0] + [rs[i][0] - rs[i - 1][1] for i in range(1, len(rs))]
    hook = [0] + [r[1] - r[0] for r in rs[1:]]
    return Timeline(virtual=[r[2] for r in rs], work=work, hook=hook,
                    host=rs[-1][1] - rs[0][1])


def read_records(path: str) -> list[tuple[int, ...]]:
    words = array("Q")
    with open(path, "rb") as f:
        words.frombytes(f.read())
    return [tuple(words[i:i + RECORD_WORDS]) for i in range(0, len(words), RECORD_WORDS)]


def load(path: str, v0: int, v1: int) -> Timeline:
    return from_records(read_records(path), v0, v1)


def by_window(t: Timeline, toggle: int) -> dict[bool, dict[str, float]]:
    """Per virtual second in the windows where the setting applied (True: the interval
    before a sync point starts in an even multiple of @toggle) and the others: sync
    points, work and time in the hook."""
    out = {on: {"virtual_s": 0.0, "syncs": 0, "work_s": 0.0, "hook_s": 0.0} for on in (True, False)}
    for i in range(1, len(t.virtual)):
        w = out[(t.virtual[i - 1] // toggle) % 2 == 0]
        w["virtual_s"] += (t.virtual[i] - t.virtual[i - 1]) / 1e9
        w["syncs"] += 1
        w["work_s"] += t.work[i] / 1e9
        w["hook_s"] += t.hook[i] / 1e9
    return {on: {"syncs_per_virtual_s": w["syncs"] / w["virtual_s"],
                 "work_per_virtual_s": w["work_s"] / w["virtual_s"],
                 "hook_per_virtual_s": w["hook_s"] / w["virtual_s"]}
            for on, w in out.items() if w["virtual_s"] > 0}


def ideal(nodes: list[Timeline], lookahead: int) -> list[float]:
    """Each node's host time at its last sync point under a free, perfect lock-step.

    Node k reaches its point i at f_k(i) = max(f_k(i - 1) + work_k(i), reach_j(v - L))
    for every peer j, where reach_j(x) is when j reaches virtual x: its last point at or
    before x plus that share of the work to its next point. Points are taken in order
    of virtual time, so a peer's points up to v - L (< v) are already placed."""
    n = len(nodes)
    done = [1] * n                  # points placed so far
    f = [[0.0] * len(t.virtual) for t in nodes]

    def reach(j: int, x: int) -> float:
        v, w = nodes[j].virtual, nodes[j].work
        i = bisect.bisect_right(v, x, 0, done[j]) - 1
        if i < 0:
            return 0.0
        if i + 1 < len(v) and v[i + 1] > v[i]:
            return f[j][i] + (x - v[i]) / (v[i + 1] - v[i]) * w[i + 1]
        return f[j][i]

    while True:
        ready = [k for k in range(n) if done[k] < len(nodes[k].virtual)]
        if not ready:
            return [fk[-1] for fk in f]
        k = min(ready, key=lambda k: nodes[k].virtual[done[k]])
        i, x = done[k], nodes[k].virtual[done[k]]
        t = f[k][i - 1] + nodes[k].work[i]
        for j in range(n):
            if j != k:
                t = max(t, reach(j, x - lookahead))
        f[k][i] = t
        done[k] += 1


def report(nodes: list[Timeline], lookaheads: list[int]) -> str:
    span = (nodes[0].virtual[-1] - nodes[0].virtual[0]) / 1e9
    lines = []
    for k, t in enumerate(nodes):
        lines.append(f"node{k}: {len(t.virtual)} sync points over {span:.3f} virtual s; host "
                     f"{t.host / 1e9:.3f} s = work {sum(t.work) / 1e9:.3f} + in the hook "
                     f"{t.in_hook / 1e9:.3f}")
    own = max(sum(t.work) for t in nodes)
    real = max(t.host for t in nodes)
    for la in lookaheads:
        best = max(ideal(nodes, la))
        lines.append(f"lookahead {la} ns: perfect lock-step {best / 1e9:.3f} s, the run "
                     f"{real / 1e9:.3f} s; own work / perfect {own / best:.3f}, "
                     f"own work / the run {own / real:.3f}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) < 5 or (argv[4] == "--toggle" and len(argv) != 6):
        print(__doc__, file=sys.stderr)
        return 2
    prefix, count = argv[0], int(argv[1])
    v0, v1 = int(float(argv[2]) * 1e9), int(float(argv[3]) * 1e9)
    if argv[4] == "--toggle":
        for k in range(count):
            windows = by_window(load(f"{prefix}.{k}", v0, v1), int(argv[5]))
            for on, w in sorted(windows.items(), reverse=True):
                print(f"node{k} {'setting on ' if on else 'setting off'}: "
                      f"{w['syncs_per_virtual_s']:9.0f} sync points, work "
                      f"{w['work_per_virtual_s']:.3f} s, in the hook "
                      f"{w['hook_per_virtual_s']:.3f} s per virtual s")
        return 0
    nodes = [load(f"{prefix}.{k}", v0, v1) for k in range(count)]
    print(report(nodes, [int(a) for a in argv[4:]]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
