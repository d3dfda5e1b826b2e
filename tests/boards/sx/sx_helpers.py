"""Helpers of the in-guest SX tests: a command per node, a run of the SURE-SX cluster."""
import re
from pathlib import Path

from helpers import run_retrolink

# what a kernel says when something went wrong in it (console and dmesg)
KERNEL_PROBLEMS = r"BUG|Oops|WARNING|general protection|Call Trace"


def guest(cmd: str, timeout="300", settings=()):
    sets = [a for s in settings for a in ("--set", s)]
    return run_retrolink("run", "sure-sx", *sets, "--timeout", timeout, "--", "sh", "-c", cmd)


def kernel_checked(cmd: str) -> str:
    """cmd, then the kernel log's problem lines, each prefixed 'kernel-problem: ' (the
    console shows only errors: loglevel=4 hides a WARNING); cmd's exit status."""
    return (f"{{ {cmd}; }}; rc=$?; dmesg | grep -E '{KERNEL_PROBLEMS}' | "
            f"sed 's/^/kernel-problem: /'; exit $rc")


def kernel_problems(r) -> list[str]:
    """The kernel problem lines of a run: from dmesg (kernel_checked) and every node's
    console log."""
    lines = [l for l in r.stdout.splitlines() if "kernel-problem:" in l]
    m = re.search(r"logs: (\S+)\)", r.stderr)
    for log in sorted(Path(m.group(1)).glob("node*-console.log")) if m else []:
        lines += [f"{log.name}: {l}" for l in log.read_text(errors="replace").splitlines()
                  if re.search(KERNEL_PROBLEMS, l)]
    return lines


def results(r, node: int) -> tuple[set, list]:
    """sx_test's PASS names and FAIL lines on one node."""
    prefix = f"[node{node}] "
    lines = [l.removeprefix(prefix) for l in r.stdout.splitlines() if l.startswith(prefix)]
    return ({l.split()[1] for l in lines if l.startswith("PASS ")},
            [l for l in lines if l.startswith("FAIL ")])
