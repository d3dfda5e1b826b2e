"""`retrolink bench sx`: the SURE-SX message benchmarks of the paper, measured in the guest.

Each measurement boots the cluster once and runs sx_bench on the nodes (bench/sx.toml);
the numbers come from the RESULT lines sx_bench prints, timed by the guest's clock,
which under icount is the model's virtual time.
"""
import time
from dataclasses import dataclass

from retrolink import paths
from retrolink.bench import harness, report, results
from retrolink.bench.results import Result, csv, find, machine_parameters, parse_results
from retrolink.boards.sx import SX  # the frame header the board adds (proto/sx.h)
from retrolink.model.machine import Machine, load_machine
from retrolink.progress import StepFailed, say
from retrolink.run.node_command import Artifacts
from retrolink.run.runner import run_cluster

DEFINITION = paths.REPO / "bench" / "sx.toml"
HELP = ("the SURE-SX benchmarks (docs/boards/sx.md) on --machine: messages/s, latency and "
        "throughput vs length; --sweep K=V1,V2 measures them at each value, a table and a plot")


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def run_phase(machine: Machine, art: Artifacts, scripts: dict[int, str], what: str) -> list[Result]:
    """Boot, run one script per node (others run 'true'), return every RESULT line."""
    say(f"  {what}")
    result = run_cluster(machine, art, scripts, "bench-sx")
    run_dir = result.run_dir
    problems = result.problems
    if problems:
        detail = "\n  ".join(problems)
        out = "\n".join(f"    [node{r.node}] {l}" for r in result.nodes for l in r.lines[-5:])
        raise StepFailed(f"benchmark phase '{what}' failed:\n  {detail}\n{out}\n  logs: {run_dir}")
    stats = result.fabric_stats or {}
    if stats.get("causality_violations", 0):
        raise StepFailed(f"phase '{what}': the fabric counted causality violations; "
                         f"results would not be exact (logs: {run_dir})")
    found = []
    for r in result.nodes:
        found += parse_results(r.node, r.lines)
    return found


def measure_latency_and_throughput(machine, art, d, sizes) -> dict:
    lat, tp = d["latency"], d["throughput"]
    node0 = (f"sx_bench pingpong --peer 1 --sizes {csv(sizes)} --iters {lat['iters']} "
             f"--warmup {lat['warmup']}")
    node1 = "sx_bench echo --peer 0"
    for s in sizes:
        node0 += f" && sx_bench stream --dst 1 --size {s} --count {tp['count']} --window {tp['window']}"
        node1 += f" && sx_bench sink --count {tp['count']} --size {s}"
    res = run_phase(machine, art, {0: node0, 1: node1}, "latency and throughput vs message length")
    out = {"latency_us": {}, "throughput_MBps": {}}
    for s in sizes:
        l = find(res, "latency_us", size=s)
        t = find(res, "throughput_MBps", size=s)      # measured at the receiver
        if not l or not t:
            raise StepFailed(f"sx_bench printed no latency_us/throughput_MBps for size {s}")
        out["latency_us"][str(s)] = l[0].num("value")
        out["throughput_MBps"][str(s)] = t[0].num("value")
    return out


def measure_rates(machine, art, d) -> dict:
    if machine.cluster.nodes < 3:
        raise StepFailed("the messages/s benchmarks need 3 nodes (cluster.nodes >= 3)")
    size, count = d["small_size"], d["rates"]["count"]
    sends = run_phase(machine, art, {
        0: f"sx_bench fanout --dsts 1,2 --size {size} --count {count}",
        1: f"sx_bench sink --count {count}",
        2: f"sx_bench sink --count {count}"}, "send messages/s (one node to two)")
    recvs = run_phase(machine, art, {
        0: f"sx_bench fanin --count {2 * count}",
        1: f"sx_bench stream --dst 0 --size {size} --count {count} --window 8",
        2: f"sx_bench stream --dst 0 --size {size} --count {count} --window 8"},
        "receive messages/s (two nodes to one)")
    s, r = find(sends, "send_msgs_per_s"), find(recvs, "recv_msgs_per_s")
    if not s or not r:
        raise StepFailed("sx_bench printed no send_msgs_per_s / recv_msgs_per_s")
    return {"send_msgs_per_s": s[0].num("value"), "recv_msgs_per_s": r[0].num("value")}


def run_sx(machine_name: str, overrides: dict, art: Artifacts, quick: bool) -> dict:
    d = load_definition(quick)
    machine = load_machine(machine_name or d["machine"], overrides)
    sizes = d["sizes"]
    out = {}
    out.update(measure_rates(machine, art, d))
    out.update(measure_latency_and_throughput(machine, art, d, sizes))
    out["max_latency_us"] = max(out["latency_us"].values())
    out["parameters"] = machine_parameters(machine)
    return out


class SweepStopped(StepFailed):
    """A sweep point failed; `partial` holds the points measured before it."""

    def __init__(self, partial: dict, point: str, cause: StepFailed):
        super().__init__(f"sweep stopped at {point}: {cause}")
        self.partial = partial


def run_sweep(machine_name: str, overrides: dict, art: Artifacts, quick: bool,
              key: str, values: list) -> dict:
    """Throughput vs message length for each value of one parameter."""
    d = load_definition(quick)
    points = []
    for v in values:
        machine = load_machine(machine_name or d["machine"], {**overrides, key: v})
        say(f"sweep {key}={v}")
        try:
            r = measure_latency_and_throughput(machine, art, d, d["sizes"])
        except StepFailed as e:
            raise SweepStopped({"key": key, "points": points}, f"{key}={v}", e) from e
        points.append({"value": v, "throughput_MBps": r["throughput_MBps"],
                       "latency_us": r["latency_us"],
                       "saturating_length": saturating_length(machine, r["throughput_MBps"]),
                       "parameters": machine_parameters(machine)})
    return {"key": key, "points": points}


def wire_limited_MBps(machine: Machine, size: int) -> float:
    """What the link alone would allow for back-to-back messages of this size."""
    link = machine.network_of(machine.board_of_model("sx"))
    return size / ((size + SX["SX_WIRE_HDR_SIZE"] + link.overhead_bytes) / link.rate) / 1e6


def saturating_length(machine: Machine, tp: dict) -> int | None:
    """The shortest measured length whose throughput reaches 95% of what the link
    allows for that length (None: the link is never the bottleneck up to 4 KB)."""
    for s in sorted(int(k) for k in tp):
        if tp[str(s)] >= 0.95 * wire_limited_MBps(machine, s):
            return s
    return None


def main(args, overrides: dict, sweeps) -> int:
    from retrolink.build.pipeline import build_all
    # the machine and every sweep value are checked before building or booting anything
    harness.check_machine(args.machine, overrides, sweeps)
    art = build_all()
    start = time.monotonic()
    result: dict = {}
    if sweeps:
        result["sweeps"] = []
        for key, values in sweeps:
            try:
                s = run_sweep(args.machine, overrides, art, args.quick, key, values)
            except SweepStopped as e:
                # keep what was measured: the table, the plot and the JSON of the
                # points before the failure, then report the failure
                if e.partial["points"]:
                    report_sweep(e.partial, overrides)
                    result["sweeps"].append(e.partial)
                result["incomplete"] = str(e)
                harness.write_json(args, result, time.monotonic() - start)
                raise
            report_sweep(s, overrides)
            result["sweeps"].append(s)
    else:
        say(f"SURE-SX benchmarks on {args.machine} (boots the cluster 3 times)")
        result = run_sx(args.machine, overrides, art, args.quick)
        print(report.sx_table(result), flush=True)
    harness.write_json(args, result, time.monotonic() - start)
    return 0


def report_sweep(s: dict, overrides: dict) -> None:
    print(report.sweep_table(s), flush=True)
    key = s["key"]
    setting = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
    title = f"SURE-SX: sweep of {key}" + (f" ({setting})" if setting else "")
    harness.write_plot(lambda png: report.sweep_plot(
        s, png, title, load_definition(False)["sweep"]["projection_sizes"]),
        harness.plot_path(f"sx-sweep-{key}", overrides))
