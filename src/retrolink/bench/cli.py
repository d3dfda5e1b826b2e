"""`retrolink bench NAME` and `retrolink demo`: the options parsed, then the benchmark's
harness (retrolink.bench, the registry of benchmarks)."""
from retrolink import bench
from retrolink.model.machine import MachineError, parse_overrides, parse_value


def _sweeps(pairs) -> list[tuple[str, list]]:
    out = []
    for p in pairs or []:
        if "=" not in p or not p.split("=", 1)[1]:
            raise MachineError(f"--sweep {p}: expected NAME=V1,V2,..., e.g. --sweep sxm.mips=1.9,20")
        k, vs = p.split("=", 1)
        out.append((k.strip(), [parse_value(v.strip()) for v in vs.split(",")]))
    return out


def bench_main(args) -> int:
    from retrolink.cli import DEFAULT_MACHINE
    harness = bench.harnesses()[args.which]
    # --machine M, repeated: a benchmark of several machines (MANY_MACHINES) takes them
    # all as args.machines, the others one as args.machine
    given = args.machine or []
    if getattr(harness, "MANY_MACHINES", False):
        args.machines = given
    elif len(given) > 1:
        raise MachineError(f"bench {args.which} takes one --machine, not {len(given)}")
    else:
        args.machine = given[0] if given else DEFAULT_MACHINE
    return harness.main(args, parse_overrides(args.set), _sweeps(args.sweep))
