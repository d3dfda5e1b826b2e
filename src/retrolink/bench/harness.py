"""What the benchmark harnesses share: checking machines and options before anything is
built, the results folder, the plot's file name, the JSON file."""
import json
import time
from pathlib import Path

from retrolink import paths
from retrolink.model.machine import MachineError, load_machine
from retrolink.progress import say


def no_sweep(name: str, sweeps) -> None:
    if sweeps:
        raise MachineError(f"bench {name} takes no --sweep")


def check_machine(machine: str, overrides: dict, sweeps=()) -> None:
    """The machine with the overrides, and with every sweep value, is valid."""
    load_machine(machine, overrides)
    for key, values in sweeps:
        for v in values:
            load_machine(machine, {**overrides, key: v})


def results_dir() -> Path:
    out = paths.REPO / "results"
    out.mkdir(exist_ok=True)
    return out


def file_name(text: str) -> str:
    """A plot's file name from its settings: dots, slashes and '=' become '_'."""
    return "".join(ch if ch.isalnum() or ch == "-" else "_" for ch in text[:-4]) + text[-4:]


def plot_path(stem: str, overrides: dict) -> Path:
    """results/<stem>-<each --set K=V>.png, the settings made safe for a file name."""
    fixed = "".join(f"-{k}={v}" for k, v in sorted(overrides.items()))
    return results_dir() / file_name(f"{stem}{fixed}.png")


def write_plot(draw, png: Path) -> None:
    """draw(png); a plot that fails is said, not raised: the measured points matter more
    than their picture, and the table and the JSON have every one."""
    try:
        draw(png)
    except Exception as e:
        say(f"plot not written ({type(e).__name__}: {e}); the table and the JSON have every point")
        return
    say(f"plot: {png}")


def write_json(args, result: dict, wall: float) -> None:
    say(f"host wall time: {wall:.1f} s")
    if args.json:
        result["host_wall_s"] = round(wall, 1)
        Path(args.json).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
        say(f"results: {args.json}")


def own_machines(args, overrides: dict, sweeps, name: str, load_definition, what: str,
                 run, table, plot, failures=lambda result: []) -> int:
    """A benchmark whose definition names its machines (--set applies to each): check
    them all, build, run, print the table, write the plot to results/ and the JSON.
    `failures(result)` names machines that failed inside the result (their tables are
    left out, the others printed); any makes the command fail after the report."""
    from retrolink.build.pipeline import build_all
    no_sweep(name, sweeps)
    for machine in load_definition(args.quick)["machines"].values():
        load_machine(machine, overrides)
    art = build_all()
    start = time.monotonic()
    say(what)
    result = run(overrides, art, args.quick)
    print(table(result), flush=True)
    png = plot_path(f"{name}{'-quick' if args.quick else ''}", overrides)
    write_plot(lambda path: plot(result, path), png)
    write_json(args, result, time.monotonic() - start)
    failed = failures(result)
    for f in failed:
        say(f"failed: {f}")
    return 1 if failed else 0
