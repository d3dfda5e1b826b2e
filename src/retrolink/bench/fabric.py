"""`retrolink bench fabric`: what the lock-step costs, in host wall time per virtual second.

For each node count, ROUNDS pairs of boots, one after the other, with every node running
the same script:
- synchronised (the machine, with its fabric): in the first round an idle stretch (every
  guest sleeps); then, every round, a warm-up stretch and a busy stretch (every guest
  spins), each between MARK lines that the host times as they appear;
- free-running (the 'plain' machine at the same node count: no board, no fabric): the
  same warm-up and busy stretches.
A stretch's cost is the slowest node's wall time from its start mark to its end mark, per
virtual second. The warm-up is not measured: a boot from a snapshot starts with no
translated code, and the first stretch pays for translating the busy loop. Host speed
drifts on a shared machine (by a third from minute to minute here), so each round's
synchronised and free-running boots run back to back, the ratio (free / synchronised) is
taken per round, and the median reported. Syncs per node per virtual second come from the
nodes' lock-step slots, read when each mark appears.
--transport socket runs the nodes the old way, every grant a round trip to the fabric
(RETROLINK_LOCKSTEP=socket), to measure what the shared-memory lock-step saves.
--shards 1,2,4 measures the synchronised boots with the fabric in that many processes
under mpirun (docs/fabric.md, "Shards"), and each shard's exchanges: how many, and the
wall time one takes (shard 0's count; its wall time waiting in them).
"""
import re
import statistics
import time

from retrolink.bench import harness
from retrolink.model.machine import load_machine
from retrolink.progress import StepFailed, say
from retrolink.run.runner import run_cluster

# The idle stretch is long because an idle cluster runs at some 50-200x real time: 60
# virtual s are 0.3-1.2 s of host time, each MARK timed as it is written (run/dir_watch.py)
IDLE_S, WARMUP_S, BUSY_S = 60, 1, 2
# --quick: for many nodes, whose busy virtual second costs an hour of this host's wall
# time at 64 (docs/fabric.md); a stretch is still its length to 10 ms, 5% of 0.2 s
QUICK_IDLE_S, QUICK_WARMUP_S, QUICK_BUSY_S = 10, 0.1, 0.2
DEFAULT_NODES = [2, 4, 8]
HELP = ("what the lock-step costs on --machine: host seconds per virtual second at each node "
        "count (--nodes, --rounds, --transport), idle and busy, against free-running nodes")
# /proc/uptime in centiseconds, so that a stretch is its length to 10 ms. The
# SPARCstation nodes' shell (klibc's, docs/sparc.md) has no cut: its own read instead.
_UPTIME_CS = {"x86_64": "$(u=$(cut -d' ' -f1 /proc/uptime); echo ${u%.*}${u#*.})",
              "sparc32": "$(read u rest < /proc/uptime; echo ${u%.*}${u#*.})"}
_SPIN = ("e=$(({now}+{cs:.0f})); echo MARK {name}-start; "
         "while [ {now} -lt $e ]; do :; done; echo MARK {name}-end")
# the machine without board or fabric whose nodes are those of the synchronised one
_PLAIN = {"x86_64": "plain", "sparc32": "sparc-plain"}


def stretches(quick: bool) -> tuple[float, float, float]:
    """The idle, warm-up and busy stretches' virtual seconds."""
    return (QUICK_IDLE_S, QUICK_WARMUP_S, QUICK_BUSY_S) if quick else (IDLE_S, WARMUP_S, BUSY_S)


def _script(idle_s: float, busy_s: float, arch: str = "x86_64",
            warmup_s: float = WARMUP_S) -> str:
    now = _UPTIME_CS[arch]
    parts = [f"echo MARK idle-start; sleep {idle_s}; echo MARK idle-end"] if idle_s else []
    parts += [_SPIN.format(now=now, cs=warmup_s * 100, name="warmup"),
              _SPIN.format(now=now, cs=busy_s * 100, name="busy")]
    return "; ".join(parts)


def _stretch_wall(marks: dict, nodes: int, name: str) -> float:
    """The slowest node's wall time from its own start mark to its own end mark.
    Free-running nodes drift apart (each at its own speed), so a window from the
    first node's start to the last node's end would grow by the drift with every
    stretch; synchronised nodes stay within a lookahead of each other."""
    return max(marks[(n, f"{name}-end")] - marks[(n, f"{name}-start")] for n in range(nodes))


def _slot_pairs(mark_slots: dict, nodes: int, first: str, last: str) -> list | None:
    """Each node's slot as read when its own first and last marks appeared, as (a, b)
    pairs; None when the slots show no progress: no file, or nodes that do not publish
    (--transport socket)."""
    pairs = []
    for n in range(nodes):
        a, b = mark_slots.get((n, first)), mark_slots.get((n, last))
        if not a or not b or b[n].time_ns <= a[n].time_ns:
            return None
        pairs.append((a[n], b[n]))
    return pairs


def _syncs_per_virtual_s(mark_slots: dict, nodes: int, first: str, last: str) -> float | None:
    """Sync points per node per virtual second between two marks; None as _slot_pairs."""
    pairs = _slot_pairs(mark_slots, nodes, first, last)
    if pairs is None:
        return None
    return statistics.mean((b.sync_points - a.sync_points) * 1e9 / (b.time_ns - a.time_ns)
                           for a, b in pairs)


def _exec_share(mark_slots: dict, nodes: int, first: str, last: str) -> float | None:
    """The share of sync points between two marks whose next grant the node took
    without leaving the vCPU loop (QEMU patch 0007), over all nodes; None as _slot_pairs.
    The slots are read a field at a time while the nodes run (lockstep.read_slots), so
    each reading may be a grant off: the share can pass 1 by that much."""
    pairs = _slot_pairs(mark_slots, nodes, first, last)
    if pairs is None or any(b.sync_points <= a.sync_points for a, b in pairs):
        return None
    return (sum(b.exec_grants - a.exec_grants for a, b in pairs)
            / sum(b.sync_points - a.sync_points for a, b in pairs))


def _live_run(mark_slots: dict, nodes: int, first: str, last: str) -> int | None:
    """How far a live clock had run since its node's budget was last set, the most over
    every node in the readings made as the two marks appeared (docs/fabric.md, "Live
    time"): more than 0 only if QEMU's translated code moves it. None if a node had no
    live clock (its ports declare no lead, or RETROLINK_LIVE_CLOCK=off)."""
    run = []
    for n in range(nodes):
        for name in (first, last):
            slots = mark_slots.get((n, name))
            if not slots or any(slot.live is None for slot in slots):
                return None
            run += [now - budget_set for now, budget_set in (slot.live for slot in slots)]
    return max(run)


# shard.c's last line: "N exchanges with the other shards, X s of wall time in them (...)"
_EXCHANGES = re.compile(r"fabric shard 0 .*?: (\d+) exchanges with the other shards, "
                        r"([\d.]+) s of wall time")


def _exchanges(run_dir) -> tuple[int, float] | None:
    """Shard 0's exchanges in a run, and the wall seconds it waited in them."""
    m = _EXCHANGES.search((run_dir / "fabric.log").read_text(errors="replace"))
    return (int(m.group(1)), float(m.group(2))) if m else None


def _boot(machine, art, script: str, what: str, node_env: dict | None = None, shards=1):
    say(f"  {what}")
    result = run_cluster(machine, art, {n: script for n in range(machine.cluster.nodes)},
                         "bench-fabric", node_env=node_env, shards=shards)
    if not result.ok:
        raise StepFailed(f"fabric benchmark '{what}' failed: " + "; ".join(result.problems)
                         + f" (logs: {result.run_dir})")
    return result


def _mean(xs: list) -> float | None:
    return None if not xs or any(x is None for x in xs) else statistics.mean(xs)


def free_running_twin(synced):
    """The 'plain' machine ('sparc-plain' for SPARCstations: no board, no fabric) with the
    synchronised machine's node
    count, guest speed, memory, root file system and translation cache: the same guest instructions per virtual second, so
    that the ratio is the lock-step's cost alone (at plain's own 125 MIPS a 75 MIPS
    machine such as cenju-3 would look 125/75 cheaper)."""
    c = synced.cluster
    twin = {"cluster.nodes": c.nodes, "cluster.memory_mib": c.memory_mib,
            "cluster.root_fs": c.root_fs, "cluster.tb_size_mib": c.tb_size_mib,
            "cluster.cpu_mips": c.cpu_mips}
    if c.cpu_mips_per_node is not None:
        twin["cluster.cpu_mips_per_node"] = list(c.cpu_mips_per_node)
    return load_machine(_PLAIN[c.arch], twin)


def measure(args, nodes: int, art, overrides: dict, shards: int = 1) -> dict:
    synced = load_machine(args.machine, {**overrides, "cluster.nodes": nodes})
    free = free_running_twin(synced)
    rounds = args.rounds
    node_env = {"RETROLINK_LOCKSTEP": "socket"} if args.transport == "socket" else None
    idle_s, warmup_s, busy_s = stretches(args.quick)
    arch = synced.cluster.arch
    busy, unsync, syncs, shares, live_run, exchanges = [], [], [], [], [], []
    in_shards = f" in {shards} shards" if shards > 1 else ""
    for r in range(1, rounds + 1):
        idle = idle_s if r == 1 else 0
        s = _boot(synced, art, _script(idle, busy_s, arch, warmup_s),
                  f"{nodes} nodes, round {r} of {rounds}, synchronised{in_shards}: "
                  + (f"idle {idle_s} s, " if idle else "")
                  + f"warm-up {warmup_s} s, busy {busy_s} s", node_env, shards)
        if shards > 1:
            exchanges.append(_exchanges(s.run_dir))
        f = _boot(free, art, _script(0, busy_s, arch, warmup_s),
                  f"{nodes} nodes, round {r} of {rounds}, free-running (no fabric): "
                  f"warm-up {warmup_s} s, busy {busy_s} s")
        if idle:
            idle_wall = _stretch_wall(s.marks, nodes, "idle") / idle_s
            idle_syncs = _syncs_per_virtual_s(s.mark_slots, nodes, "idle-start", "idle-end")
        busy.append(_stretch_wall(s.marks, nodes, "busy") / busy_s)
        unsync.append(_stretch_wall(f.marks, nodes, "busy") / busy_s)
        syncs.append(_syncs_per_virtual_s(s.mark_slots, nodes, "busy-start", "busy-end"))
        shares.append(_exec_share(s.mark_slots, nodes, "busy-start", "busy-end"))
        live_run.append(_live_run(s.mark_slots, nodes, "busy-start", "busy-end"))
    ratios = [u / b for u, b in zip(unsync, busy)]
    counted = [x for x in exchanges if x]
    return {"nodes": nodes, "shards": shards,
            "exchanges_per_run": _mean([x[0] for x in counted]) if counted else None,
            "exchange_wait_us": (1e6 * sum(x[1] for x in counted) / sum(x[0] for x in counted)
                                 if counted and sum(x[0] for x in counted) else None),
            "idle_wall_per_virtual_s": idle_wall,
            "busy_synced_wall_per_virtual_s": statistics.median(busy),
            "busy_free_wall_per_virtual_s": statistics.median(unsync),
            "busy_ratio": statistics.median(ratios), "busy_ratio_rounds": ratios,
            "syncs_per_node_per_virtual_s_idle": idle_syncs,
            "syncs_per_node_per_virtual_s_busy": _mean(syncs),
            "busy_exec_grant_share": _mean(shares),
            "busy_live_clock_run_ns": None if None in live_run else max(live_run)}


def _fmt(x: float | None, spec: str) -> str:
    """x in spec ("19.0f"), or "-" in the same width when there is no figure."""
    return format(x, spec) if x is not None else "-".rjust(int(spec.split(".")[0]))


def table(name: str, transport: str, points: list[dict]) -> str:
    lines = [f"fabric lock-step cost, machine {name}, transport {transport} "
             "(wall s per virtual s; ratio = free / synchronised, median of rounds)",
             f"{'nodes':>5} {'shards':>6} {'idle':>9} {'x real':>7} {'busy sync':>10} "
             f"{'busy free':>10} {'ratio':>6} {'syncs/node/vs idle':>19} {'busy':>10} "
             f"{'in loop':>7} {'exchanges':>10} {'wait us':>8}  rounds"]
    for p in points:
        lines.append(
            f"{p['nodes']:>5} {p['shards']:>6} {p['idle_wall_per_virtual_s']:9.4f} "
            f"{1 / p['idle_wall_per_virtual_s']:7.1f} {p['busy_synced_wall_per_virtual_s']:10.3f} "
            f"{p['busy_free_wall_per_virtual_s']:10.3f} {p['busy_ratio']:6.3f} "
            f"{_fmt(p['syncs_per_node_per_virtual_s_idle'], '19.0f')} "
            f"{_fmt(p['syncs_per_node_per_virtual_s_busy'], '10.0f')} "
            f"{_fmt(p['busy_exec_grant_share'], '7.3f')} "
            f"{_fmt(p['exchanges_per_run'], '10.0f')} {_fmt(p['exchange_wait_us'], '8.1f')}  "
            + ", ".join(f"{x:.3f}" for x in p["busy_ratio_rounds"]))
    return "\n".join(lines)


def bench_fabric(args, overrides: dict) -> dict:
    """Print the lock-step cost at each node count and return its figures (for --json)."""
    from retrolink.build.pipeline import build_for
    machine = load_machine(args.machine, overrides)
    art = build_for(machine)        # a SPARCstation machine's own build (docs/sparc.md)
    name = machine.cluster.name
    points = []
    for nodes in args.nodes:
        for shards in args.shards:
            if shards > nodes:
                say(f"bench fabric: {shards} shards for {nodes} nodes: skipped (a shard "
                    "serves one node at least)")
                continue
            try:
                points.append(measure(args, nodes, art, overrides, shards))
            except StepFailed:
                if points:      # what was measured is not lost with the point that failed
                    print(table(name, args.transport, points), flush=True)
                    say("bench fabric: the table above has the points measured before "
                        "the one that failed")
                raise
    print(table(name, args.transport, points), flush=True)
    return {"machine": name, "transport": args.transport, "shards": args.shards,
            "overrides": overrides,
            **dict(zip(("idle_s", "warmup_s", "busy_s"), stretches(args.quick))),
            "rounds": args.rounds, "points": points}


def node_counts(machine: str, overrides: dict, requested: list[int] | None) -> list[int]:
    """The node counts to measure, checked before anything boots: those asked for (each
    must make a valid machine), or of 2, 4 and 8 those the machine's networks allow."""
    from retrolink.model.machine import MachineError
    counts = []
    for n in requested or DEFAULT_NODES:
        try:
            load_machine(machine, {**overrides, "cluster.nodes": n})
        except MachineError as e:
            if requested:
                raise MachineError(f"--nodes {n}: {e}") from None
            say(f"bench fabric: {machine} cannot have {n} nodes ({e}); skipped")
            continue
        counts.append(n)
    if not counts:
        raise MachineError(f"{machine}: none of {DEFAULT_NODES} nodes is possible; "
                           "give --nodes")
    return counts


def main(args, overrides: dict, sweeps) -> int:
    harness.no_sweep("fabric", sweeps)
    harness.check_machine(args.machine, overrides)
    args.nodes = node_counts(args.machine, overrides, args.nodes)
    start = time.monotonic()
    result = bench_fabric(args, overrides)
    harness.write_json(args, result, time.monotonic() - start)
    return 0
