"""`retrolink bench mpi`: MPI over each machine's IP network (bench/mpi.toml, docs/mpi.md).

Each machine boots once with the MPI image layer ([guest] packages = ["mpi"], with the
memory the layer needs) and runs the five measurements in one MPI job (mpi-run
rl_osu_all, every node taking part: one launch, not one a measurement): latency,
bandwidth and bidirectional bandwidth between nodes 0 and 1, MPI_Allreduce and
MPI_Alltoall over every node. Their tables (OSU's format, each between rl_osu_all's
markers) become one table per measurement, the machines side by side, and a plot.
"""
import re

from retrolink import paths
from retrolink.bench import harness, mpi_report, results
from retrolink.bench.phase import run_measured
from retrolink.model.machine import LAYER_MIN_MIB, Machine, MachineError, load_machine
from retrolink.progress import StepFailed, say
from retrolink.run.node_command import Artifacts

DEFINITION = paths.REPO / "bench" / "mpi.toml"
HELP = ("MPI (Open MPI over TCP/IP, docs/mpi.md) on each machine's network, the OSU "
        "micro-benchmarks' method: latency, bandwidth, bidirectional bandwidth, "
        "MPI_Allreduce and MPI_Alltoall vs message size; --machine M (repeatable)")
MANY_MACHINES = True
# measurement -> (the program that runs it alone, the result's key); rl_osu_all runs the
# five in this order
PROGRAMS = {"latency": ("rl_osu_latency", "latency_us"),
            "bw": ("rl_osu_bw", "bw_MBps"),
            "bibw": ("rl_osu_bibw", "bibw_MBps"),
            "allreduce": ("rl_osu_allreduce", "allreduce_us"),
            "alltoall": ("rl_osu_alltoall", "alltoall_us")}
ROW = re.compile(r"^(\d+)\s+(\d+\.\d+)$")


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def with_mpi(name: str, overrides: dict) -> Machine:
    """The machine with the MPI layer, and at least the memory the layer needs."""
    plain = load_machine(name, overrides)
    memory = max(plain.cluster.memory_mib, LAYER_MIN_MIB["mpi"])
    machine = load_machine(name, {**overrides, "guest.packages": ["mpi"],
                                  "cluster.memory_mib": memory})
    if not any(b.IP_NETWORKING for b in machine.boards.values()):
        raise MachineError(f"bench mpi: machine '{name}' has no IP network for MPI")
    if machine.cluster.nodes < 2:
        raise MachineError(f"bench mpi: machine '{name}' has {machine.cluster.nodes} node; "
                           "MPI's measurements need 2")
    return machine


def script(d: dict) -> str:
    """Every node's command: one job of rl_osu_all (mpi-run gives each node its part);
    node 0 prints the tables, each between its markers. (--min is raised to a
    measurement's least size by the program: MPI_Allreduce's 4 bytes.)"""
    s, it = d["sizes"], d["iterations"]
    return (f"mpi-run rl_osu_all --min {s['min']} --max {s['max']} "
            f"--iters {it['iters']} --warmup {it['warmup']} --large {it['large']} "
            f"--iters-large {it['iters_large']} --warmup-large {it['warmup_large']} "
            f"--window {it['window']}")


def parse_table(lines: list[str], name: str) -> dict[str, float]:
    """The rows (size, value) that a program printed between its markers."""
    try:
        body = lines[lines.index(f"@@osu {name}") + 1:lines.index(f"@@end {name}")]
    except ValueError:
        raise StepFailed(f"rl_osu_all: no {name} table between its markers") from None
    rows = {m.group(1): float(m.group(2)) for m in map(ROW.match, body) if m}
    if not rows:
        raise StepFailed(f"rl_osu_all printed no {name} rows")
    return rows


def measure(machine: Machine, art: Artifacts, d: dict) -> dict:
    cmd = script(d)
    result = run_measured(machine, art, {n: cmd for n in range(machine.cluster.nodes)},
                          "MPI latency, bandwidth and collectives", "bench-mpi")
    (n0,) = [r for r in result.nodes if r.node == 0]
    out = {key: parse_table(n0.lines, name) for name, (_, key) in PROGRAMS.items()}
    out["ranks"] = machine.cluster.nodes
    out["parameters"] = results.machine_parameters(machine)
    return out


def run_mpi(machines: dict[str, str], overrides: dict, art: Artifacts, quick: bool) -> dict:
    """Each machine in turn; one that fails is recorded with why ({"failed": ...}) and
    the others still run, so that one machine's failure loses no other's tables."""
    d = load_definition(quick)
    out = {}
    for key, name in machines.items():
        try:
            out[key] = measure(with_mpi(name, overrides), art, d)
        except StepFailed as e:
            say(f"bench mpi: {name} failed: {e}")
            out[key] = {"failed": str(e)}
    return out


def failures(result: dict) -> list[str]:
    """The machines that failed (the result's other entries, host_wall_s, are figures)."""
    return [f"{key}: {r['failed']}" for key, r in result.items()
            if isinstance(r, dict) and "failed" in r]


def main(args, overrides: dict, sweeps) -> int:
    harness.no_sweep("mpi", sweeps)
    d = load_definition(args.quick)
    # --machine M ...: each under its own name, else the definition's
    machines = {m: m for m in args.machines} if args.machines else d["machines"]
    for name in machines.values():
        with_mpi(name, overrides)
    return harness.own_machines(
        args, overrides, sweeps, "mpi", lambda quick: {"machines": machines},
        f"MPI benchmarks on {', '.join(machines.values())} (a boot each)",
        lambda ov, art, quick: run_mpi(machines, ov, art, quick),
        mpi_report.table, mpi_report.plot, failures)
