"""`retrolink bench ...` and `retrolink demo`."""
import json
import time
from pathlib import Path

from retrolink import paths
from retrolink.model.machine import MachineError, parse_overrides, parse_value
from retrolink.progress import say


def _sweeps(pairs) -> list[tuple[str, list]]:
    out = []
    for p in pairs or []:
        if "=" not in p or not p.split("=", 1)[1]:
            raise MachineError(f"--sweep {p}: expected NAME=V1,V2,..., e.g. --sweep sxm.mips=1.9,20")
        k, vs = p.split("=", 1)
        out.append((k.strip(), [parse_value(v.strip()) for v in vs.split(",")]))
    return out


def _file_name(text: str) -> str:
    """A plot's file name from its settings: dots, slashes and '=' become '_'."""
    return "".join(ch if ch.isalnum() or ch == "-" else "_" for ch in text[:-4]) + text[-4:]


def bench_main(args) -> int:
    from retrolink.bench import report, sx
    from retrolink.build.pipeline import build_all
    overrides, sweeps = parse_overrides(args.set), _sweeps(args.sweep)
    if args.which == "net":
        return _bench_net(args, overrides, sweeps)
    if args.which == "puma3":
        return _bench_puma3(args, overrides, sweeps)
    if args.which == "cenju3":
        return _bench_cenju3(args, overrides, sweeps)
    # validate the machine (and every sweep value) before building or booting anything
    from retrolink.model.machine import load_machine
    load_machine(args.machine, overrides)
    for key, values in sweeps:
        for v in values:
            load_machine(args.machine, {**overrides, key: v})
    if args.which == "boot":
        from retrolink.bench.boot import bench_boot
        from retrolink.bench.fabric import node_counts
        args.nodes = node_counts(args.machine, overrides, args.nodes or [2, 8, 16])
        start = time.monotonic()
        _write_json(args, bench_boot(args, overrides), time.monotonic() - start)
        return 0
    if args.which == "fabric":
        from retrolink.bench.fabric import bench_fabric, node_counts
        args.nodes = node_counts(args.machine, overrides, args.nodes)
        start = time.monotonic()
        result = bench_fabric(args, overrides)
        _write_json(args, result, time.monotonic() - start)
        return 0
    art = build_all()
    start = time.monotonic()
    out_dir = paths.REPO / "results"
    out_dir.mkdir(exist_ok=True)
    result: dict = {}
    if sweeps:
        result["sweeps"] = []
        for key, values in sweeps:
            try:
                s = sx.run_sweep(args.machine, overrides, art, args.quick, key, values)
            except sx.SweepStopped as e:
                # keep what was measured: the table, the plot and the JSON of the
                # points before the failure, then report the failure
                if e.partial["points"]:
                    _report_sweep(e.partial, overrides, out_dir)
                    result["sweeps"].append(e.partial)
                result["incomplete"] = str(e)
                _write_json(args, result, time.monotonic() - start)
                raise
            _report_sweep(s, overrides, out_dir)
            result["sweeps"].append(s)
    else:
        say(f"SURE-SX benchmarks on {args.machine} (boots the cluster 3 times)")
        result = sx.run_sx(args.machine, overrides, art, args.quick)
        print(report.sx_table(result), flush=True)
    _write_json(args, result, time.monotonic() - start)
    return 0


def _bench_net(args, overrides: dict, sweeps) -> int:
    """`bench net`: its own machines (bench/net.toml); --set applies to each."""
    from retrolink.bench import net, report
    return _bench_own_machines(
        args, overrides, sweeps, "net", net.load_definition,
        "Ethernet benchmarks on the hub and the switch machines (boots 3 times)",
        net.run_net, report.net_table, report.net_plot)


def _bench_puma3(args, overrides: dict, sweeps) -> int:
    """`bench puma3`: its own machines (bench/puma3.toml); --set applies to each."""
    from retrolink.bench import puma3
    return _bench_own_machines(
        args, overrides, sweeps, "puma3", puma3.load_definition,
        "PUMA-III benchmarks on the bandwidth and the latency machines (boots 2 times)",
        puma3.run_puma3, puma3.table, puma3.plot)


def _bench_cenju3(args, overrides: dict, sweeps) -> int:
    """`bench cenju3`: its own machines (bench/cenju3.toml); --set applies to each."""
    from retrolink.bench import cenju3
    return _bench_own_machines(
        args, overrides, sweeps, "cenju3", cenju3.load_definition,
        "Cenju-3 benchmarks on the 2-PE and the 8-PE machines (boots 2 times)",
        cenju3.run_cenju3, cenju3.table, cenju3.plot)


def _bench_own_machines(args, overrides: dict, sweeps, name: str, load_definition,
                        what: str, run, table, plot) -> int:
    """A benchmark whose definition names its machines: check them all, build, run, print
    the table, write the plot to results/ and the JSON."""
    from retrolink.build.pipeline import build_all
    from retrolink.model.machine import load_machine
    if sweeps:
        raise MachineError(f"bench {name} takes no --sweep")
    for machine in load_definition(args.quick)["machines"].values():
        load_machine(machine, overrides)
    art = build_all()
    start = time.monotonic()
    say(what)
    result = run(overrides, art, args.quick)
    print(table(result), flush=True)
    out_dir = paths.REPO / "results"
    out_dir.mkdir(exist_ok=True)
    fixed = "".join(f"-{k}={v}" for k, v in sorted(overrides.items()))
    png = out_dir / _file_name(f"{name}{'-quick' if args.quick else ''}{fixed}.png")
    try:
        plot(result, png)
        say(f"plot: {png}")
    except Exception as e:      # the measured points matter more than their picture
        say(f"plot not written ({type(e).__name__}: {e}); the table and the JSON have every point")
    _write_json(args, result, time.monotonic() - start)
    return 0


def _report_sweep(s: dict, overrides: dict, out_dir: Path) -> None:
    from retrolink.bench import report, sx
    print(report.sweep_table(s), flush=True)
    key = s["key"]
    fixed = "".join(f"-{k}={v}" for k, v in sorted(overrides.items()))
    png = out_dir / _file_name(f"sx-sweep-{key}{fixed}.png")
    setting = ", ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
    try:
        report.sweep_plot(s, png, f"SURE-SX: sweep of {key}" + (f" ({setting})" if setting else ""),
                          sx.load_definition(False)["sweep"]["projection_sizes"])
    except Exception as e:      # the measured points matter more than their picture
        say(f"plot not written ({type(e).__name__}: {e}); the table above and the JSON "
            "have every point")
        return
    say(f"plot: {png}")


def _write_json(args, result: dict, wall: float) -> None:
    say(f"host wall time: {wall:.1f} s")
    if args.json:
        result["host_wall_s"] = round(wall, 1)
        Path(args.json).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        say(f"results: {args.json}")
