"""Helpers of the in-guest SX tests: a command per node, a run of the SURE-SX cluster."""
# kernel_checked and kernel_problems are helpers' (shared with the other boards' tests)
from helpers import kernel_checked, kernel_problems, run_retrolink  # noqa: F401


def guest(cmd: str, timeout="300", settings=()):
    sets = [a for s in settings for a in ("--set", s)]
    return run_retrolink("run", "sure-sx", *sets, "--timeout", timeout, "--", "sh", "-c", cmd)


def results(r, node: int) -> tuple[set, list]:
    """sx_test's PASS names and FAIL lines on one node."""
    prefix = f"[node{node}] "
    lines = [l.removeprefix(prefix) for l in r.stdout.splitlines() if l.startswith(prefix)]
    return ({l.split()[1] for l in lines if l.startswith("PASS ")},
            [l for l in lines if l.startswith("FAIL ")])
