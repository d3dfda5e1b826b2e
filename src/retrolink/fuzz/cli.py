"""retrolink fuzz BOARD [--seconds N] [--seed S[:K]] [--replay FILE] (docs/fuzzing.md)."""
import os
import sys
from pathlib import Path

from retrolink import paths
from retrolink.build import bootstrap, qemu_build
from retrolink.build.lock import build_lock
from retrolink.build.pipeline import build_log
from retrolink.fuzz import boards
from retrolink.fuzz.engine import Execution, fuzz, replay
from retrolink.progress import say


def asan_qemu() -> Path:
    """The ASan/UBSan build of QEMU with our devices, built (with progress) if needed."""
    log = build_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    with build_lock():
        bootstrap.setup_host(log)
        return qemu_build.build_qemu(log, "asan")


def report(line: str) -> None:
    print(f"retrolink fuzz: {line}", flush=True)


def fuzz_main(args) -> int:
    board = boards.load(args.board)
    if args.replay:
        path = Path(args.replay)
        try:
            ex = Execution.load(path)
        except (OSError, ValueError, KeyError) as e:
            print(f"retrolink fuzz: error: {path} is not a reproducer: {e}", file=sys.stderr)
            return 2
        if ex.board != board.name:
            print(f"retrolink fuzz: error: {path} is for board {ex.board}, not {board.name}",
                  file=sys.stderr)
            return 2
        found = replay(asan_qemu(), board, ex)
        was = f"{ex.finding.kind}: {ex.finding.summary}" if ex.finding else "nothing"
        if not found:
            report(f"replayed {path} ({len(ex.commands)} qtest commands): no finding "
                   f"(recorded: {was})")
            return 0
        same = ex.finding is not None and found.signature() == ex.finding.signature()
        report(f"replayed {path}: {found.kind}: {found.summary}\n"
               f"  {'the same as recorded' if same else 'recorded: ' + was}\n"
               + "\n".join("    " + l for l in found.detail.splitlines()[:30]))
        return 1
    seed, _, only = (args.seed or str(int.from_bytes(os.urandom(4), "little"))).partition(":")
    if not seed.isdigit() or (only and not only.isdigit()):
        print("retrolink fuzz: error: --seed takes N or N:EXECUTION", file=sys.stderr)
        return 2
    qemu = asan_qemu()
    out = Path(args.out) if args.out else paths.build_dir() / "fuzz"
    report(f"{board.name}: seed {seed}, {args.seconds:g} s, ASan/UBSan QEMU {qemu}")
    sm = fuzz(qemu, board, args.seconds, seed, out,
              executions=range(int(only), int(only) + 1) if only else None, report=report)
    report(f"{board.name}: {sm.executions} executions in {sm.seconds:.1f} s "
           f"({sm.rate(sm.executions):.2f} execs/s; {sm.commands} qtest commands, "
           f"{sm.rate(sm.commands):.0f}/s; {sm.refused} configurations QEMU refused)")
    for sig, (ex, path, count) in sm.findings.items():
        report(f"  {ex.finding.kind} in {count} execution(s), first {ex.seed}: "
               f"{ex.finding.summary}\n    {path}")
    report(f"findings: {len(sm.findings)}")
    return 1 if sm.findings else 0
