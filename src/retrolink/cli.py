"""The retrolink command: build, run, up, test, demo, bench."""
import argparse
import os
import re
import signal
import subprocess
import sys
import textwrap

from retrolink import paths
from retrolink.progress import StepFailed, say

DEFAULT_MACHINE = "sure-sx"


def cmd_build(args) -> int:
    from retrolink.build.pipeline import build_all
    art = build_all()
    say(f"ready: {art.qemu}, {art.initrd}")
    return 0


# The machine model (pydantic) is imported by the commands that load a machine: a warm
# `retrolink build` stays a few tens of milliseconds (src/retrolink/build/stamp.py).
def cmd_run(args) -> int:
    from retrolink.build.pipeline import build_for
    from retrolink.model.machine import MachineError, load_machine, parse_overrides
    from retrolink.run.runner import check_hosts, check_shards, guest_script, run_command
    machine = load_machine(args.machine, parse_overrides(args.set))
    check_shards(machine, args.shards)
    check_hosts(machine, args.hosts, args.shards, args.gdb)
    if args.qemu_trace is not None and not re.fullmatch(r"[A-Za-z0-9_*?]+", args.qemu_trace):
        # it becomes -trace enable=PATTERN,file=...: a comma would add QEMU options
        raise MachineError(f"--qemu-trace {args.qemu_trace!r}: a trace event name or "
                           "pattern of letters, digits, _ and the wildcards * ?, "
                           "e.g. 'retrolink_sx_*' (qemu/trace-events)")
    if args.insn_per < 1:
        raise MachineError(f"--insn-per {args.insn_per}: the units of work the profile's "
                           "windows held, 1 or more")
    if not args.command:
        raise MachineError("nothing to run: give a command after --, e.g. "
                           f"retrolink run {args.machine} -- uname -a")
    art = build_for(machine)
    script = guest_script(args.command)
    result = run_command(machine, art, script, nodes=args.node, timeout_s=args.timeout,
                         trace=args.trace, qemu_trace=args.qemu_trace,
                         insn_profile=args.insn_profile or (), insn_per=args.insn_per,
                         gdb_node=args.gdb, shards=args.shards, on_hosts=args.hosts)
    return 0 if result.ok else 1


def cmd_up(args) -> int:
    from retrolink.build.pipeline import build_for
    from retrolink.model.machine import load_machine, parse_overrides
    from retrolink.run.interactive import up
    from retrolink.run.runner import check_node_options
    machine = load_machine(args.machine, parse_overrides(args.set))
    if args.gdb is not None:
        check_node_options(machine.cluster.nodes, {"--gdb": [args.gdb]})
    return up(machine, build_for(machine), gdb_node=args.gdb)


def cmd_debug_symbols(args) -> int:
    from retrolink.build.debug_symbols import fetch_kernel_debug_symbols
    say(f"guest kernel symbols: {fetch_kernel_debug_symbols()}")
    return 0


def cmd_shell(args) -> int:
    from retrolink.run.interactive import shell
    return shell(args.node, args.run_dir)


def cmd_push(args) -> int:
    from retrolink.run.interactive import push
    return push(args.node, args.file, args.run_dir)


def cmd_params(args) -> int:
    from retrolink.model.describe import DOCS_BEGIN, DOCS_END, docs_tables
    if not args.write_docs:
        print(docs_tables(), end="")
        return 0
    doc = paths.REPO / "docs" / "machines.md"
    text = doc.read_text()
    if DOCS_BEGIN in text:
        text = text[:text.index(DOCS_BEGIN)] + text[text.index(DOCS_END) + len(DOCS_END) + 1:]
    doc.write_text(text.rstrip("\n") + "\n\n" + docs_tables())
    say(f"wrote the parameter tables into {doc}")
    return 0


def cmd_test(args) -> int:
    from retrolink.build.pipeline import build_all
    build_all()
    extra = [a for a in args.pytest_args if a != "--"]
    # test paths given (e.g. tests/fabric): run those; otherwise the whole suite, whose
    # sanitizer tests need the ASan QEMU: built here, on every core, not in a test worker
    chosen = [a for a in extra if not a.startswith("-") and (paths.REPO / a.split("::")[0]).exists()]
    if not chosen:
        from retrolink.fuzz.cli import asan_qemu
        asan_qemu()
    # pytest's cache (last failures, the durations tests/lib/parallel.py orders by) in the
    # build cache: a fresh clone starts with what the last runs learnt
    cache = ["-o", f"cache_dir={paths.cache_dir() / 'pytest'}"]
    cmd = [sys.executable, "-m", "pytest", *([] if chosen else [str(paths.REPO / "tests")]),
           *cache, *test_workers(extra), *extra]
    say("running the test suite: " + " ".join(cmd[2:]))
    return subprocess.call(cmd, cwd=paths.REPO)


def test_workers(extra: list[str]) -> list[str]:
    """pytest-xdist options: one worker per core this process may use, each pinned to its
    core, tests grouped and ordered by tests/lib/parallel.py. None with one core, or when
    the arguments choose (-n, --dist, -p no:xdist)."""
    cores = len(os.sched_getaffinity(0))
    if cores < 2 or any(a.startswith(("-n", "--numprocesses", "--dist")) or "xdist" in a
                        for a in extra):
        return []
    return ["-n", str(cores), "--dist", "loadgroup", "--no-loadscope-reorder"]


def cmd_bench(args) -> int:
    from retrolink.bench.cli import bench_main
    return bench_main(args)


def cmd_fuzz(args) -> int:
    from retrolink.fuzz.cli import fuzz_main
    return fuzz_main(args)


def cmd_demo(args) -> int:
    from retrolink.bench.cli import bench_main
    args.which = "sx"
    return bench_main(args)


COLD_HELP = "boot every node from its kernel: neither use nor make a snapshot (docs/snapshots.md)"
GDB_HELP = ("give node NODE's QEMU a gdbstub and write a gdb script that attaches to it with "
            "our modules' symbols (docs/debugging.md)")


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="retrolink", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("build", help="build QEMU, the guest kernel/modules/userland and initramfs")
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("run", help="boot MACHINE, run a command on its nodes, shut down")
    s.add_argument("machine", help="name in machines/ (e.g. plain, sure-sx) or a .toml path")
    s.add_argument("--node", type=int, action="append",
                   help="run only on this node (repeatable); default: every node")
    s.add_argument("--timeout", type=float, help="wall-clock limit of the command in seconds, "
                   "counted once every node has booted (default: cluster.run_timeout_s; "
                   "none on a machine with a fabric, which ends on "
                   "cluster.run_limit_virtual_s or a stall)")
    s.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="override a machine parameter, e.g. link.rate=125MB/s")
    s.add_argument("--trace", action="store_true", help="write the fabric's frame trace")
    s.add_argument("--qemu-trace", metavar="PATTERN",
                   help="QEMU trace events to log per node, e.g. 'retrolink_sx_*' "
                        "(qemu/trace-events; written to nodeN-trace.txt in the run directory)")
    s.add_argument("--insn-profile", metavar="NODE", type=int, action="append",
                   help="count node NODE's guest instructions per code block inside the "
                        "windows its programs mark (repeatable; written to nodeN-insns.txt "
                        "in the run directory; docs/profile.md)")
    s.add_argument("--insn-per", metavar="K", type=int, default=1,
                   help="report the profile's instructions per K units of work (e.g. the "
                        "round trips the windows held)")
    s.add_argument("--cold", action="store_true", help=COLD_HELP)
    s.add_argument("--gdb", metavar="NODE", type=int, help=GDB_HELP)
    s.add_argument("--shards", metavar="K", type=int, default=1,
                   help="run the fabric as K processes under mpirun, each serving a block of "
                        "the nodes, with the one fabric's results (docs/fabric.md, \"Shards\")")
    s.add_argument("--hosts", metavar="H1,H2,...", type=lambda v: v.split(","),
                   help="a shard of the fabric on each host, with the QEMUs of the nodes it "
                        "serves, under mpirun: the same checkout at the same path on every "
                        "host, its run folder shared, passwordless ssh (docs/fabric.md, "
                        "\"Shards on several hosts\")")
    s.add_argument("command", nargs="*", help="-- CMD ARGS... (everything after --)")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("up", help="boot MACHINE and keep it running (interactive)")
    s.add_argument("machine")
    s.add_argument("--set", action="append", metavar="NAME=VALUE")
    s.add_argument("--cold", action="store_true", help=COLD_HELP)
    s.add_argument("--gdb", metavar="NODE", type=int, help=GDB_HELP)
    s.set_defaults(func=cmd_up)

    s = sub.add_parser("debug-symbols", help="fetch the guest kernel's symbols (Debian's "
                       "linux-image-<abi>-dbg, about 0.9 GB) into the cache, for --gdb")
    s.set_defaults(func=cmd_debug_symbols)

    s = sub.add_parser("shell", help="a shell on a node of the running cluster")
    s.add_argument("node", type=int)
    s.add_argument("--run-dir", help="the cluster's run directory (default: the newest 'up')")
    s.set_defaults(func=cmd_shell)

    s = sub.add_parser("push", help="copy a file into /tmp of a node of the running cluster")
    s.add_argument("node", type=int)
    s.add_argument("file")
    s.add_argument("--run-dir", help="the cluster's run directory (default: the newest 'up')")
    s.set_defaults(func=cmd_push)

    s = sub.add_parser("params", help="every board's and topology's parameters: default, "
                       "limits, unit, source")
    s.add_argument("--write-docs", action="store_true",
                   help="write the tables into docs/machines.md")
    s.set_defaults(func=cmd_params)

    s = sub.add_parser("test", help="build, then run the test suite (pytest); --cold first: "
                       "no snapshots")
    s.add_argument("pytest_args", nargs=argparse.REMAINDER)
    s.set_defaults(func=cmd_test)

    from retrolink.fuzz import boards as fuzz_boards
    s = sub.add_parser("fuzz", help="fuzz a board's device model (ASan/UBSan QEMU, qtest, "
                       "fake fabric); docs/fuzzing.md")
    s.add_argument("board", choices=fuzz_boards.names())
    s.add_argument("--seconds", type=float, default=60, help="how long (default 60)")
    s.add_argument("--seed", metavar="N[:K]", help="seed (default: random); N:K runs only "
                   "execution K of seed N")
    s.add_argument("--replay", metavar="FILE", help="run a reproducer again")
    s.add_argument("--out", metavar="DIR", help="where reproducers go (default build/fuzz)")
    s.set_defaults(func=cmd_fuzz)

    from retrolink import bench
    benches = bench.harnesses()
    for name, helptext in (("demo", "set up everything, boot the SURE-SX cluster, print its "
                            "benchmark table"),
                           ("bench", "run a benchmark: " + ", ".join(benches))):
        if name == "bench":
            listing = "\n".join(textwrap.fill(h.HELP, 88, initial_indent=f"  {b:<8} ",
                                               subsequent_indent=" " * 11,
                                               break_on_hyphens=False)
                                 for b, h in benches.items())
            s = sub.add_parser(name, help=helptext, description="benchmarks:\n" + listing,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
            s.add_argument("which", choices=list(benches), metavar="NAME",
                           help="the benchmark: " + ", ".join(benches))
        else:
            s = sub.add_parser(name, help=helptext)
        s.add_argument("--machine", action="append", metavar="M",
                       help=f"the machine (default {DEFAULT_MACHINE}); bench mpi: each one given "
                       "(default: its definition's)")
        s.add_argument("--set", action="append", metavar="NAME=VALUE")
        s.add_argument("--sweep", action="append", metavar="NAME=V1,V2,...")
        s.add_argument("--json", metavar="FILE")
        s.add_argument("--quick", action="store_true", help="fewer sizes and iterations")
        s.add_argument("--cold", action="store_true", help=COLD_HELP)
        if name == "bench":
            s.add_argument("--nodes", type=_node_counts, metavar="N,N,...",
                           help="fabric, boot: node counts to measure (default: fabric 2,4,8, "
                           "boot 2,8,16; those the machine's networks can have)")
            s.add_argument("--rounds", type=int, default=3, choices=range(1, 10),
                           metavar="R", help="fabric: rounds (a synchronised and a free-running boot) per node count (default 3)")
            s.add_argument("--transport", choices=["shared", "socket"], default="shared",
                           help="fabric: grants through the lock-step file (default) or every "
                           "one a round trip on the socket")
            s.add_argument("--shards", type=_shard_counts, metavar="K,K,...", default=[1],
                           help="fabric: the synchronised boots' fabric in K processes under "
                           "mpirun, for each K (default 1: the one fabric; docs/fabric.md, "
                           "\"Shards\")")
        s.set_defaults(func=cmd_demo if name == "demo" else cmd_bench)
    return p


def _counts(what: str, example: str):
    """An argparse type: a comma-separated list of counts 1..64 (of nodes, of shards)."""
    def parse(text: str) -> list[int]:
        try:
            counts = [int(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: expected {what} counts such as "
                                             f"{example}")
        if not counts or any(not 1 <= c <= 64 for c in counts):
            raise argparse.ArgumentTypeError(f"{text!r}: {what} counts are 1..64")
        return counts
    return parse


_node_counts = _counts("node", "2,4,8")
_shard_counts = _counts("shard", "1,2,4")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # everything after the first "--" is the guest command, verbatim
    guest_cmd = None
    if "--" in argv and argv[:1] == ["run"]:
        i = argv.index("--")
        argv, guest_cmd = argv[:i], argv[i + 1:]
    # everything after "test" goes to pytest as typed, options first too (-n 0 tests/x):
    # argparse's REMAINDER would refuse a leading option
    pytest_args = None
    if argv[:1] == ["test"] and argv[1:2] not in (["-h"], ["--help"]):
        argv, pytest_args = argv[:1], argv[1:]
    args = make_parser().parse_args(argv)
    if pytest_args is not None:
        args.pytest_args = pytest_args
    terminate_on_sigterm()
    if guest_cmd is not None:
        args.command = guest_cmd
    if args.cmd == "test" and args.pytest_args[:1] == ["--cold"]:
        args.pytest_args, args.cold = args.pytest_args[1:], True
    if getattr(args, "cold", False):
        os.environ["RETROLINK_COLD"] = "1"      # the clusters, and the tests' (docs/snapshots.md)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("retrolink: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        from retrolink.model.machine import MachineError
        if not isinstance(e, (MachineError, StepFailed)):
            raise
        print(f"retrolink: error: {e}", file=sys.stderr)
        return 2


def terminate_on_sigterm():
    """Make SIGTERM and SIGHUP stop retrolink like Ctrl-C (so clusters are shut down)."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)
