"""norma.ko between two Cenju-3 nodes (machines/cenju-3.toml): the IPC layer's cases that
cross nodes (`mach_test X --node 1`, the same as test_mach_loopback.py's) over the real
transport, NORMA IPC/DE on the interface (docs/boards/norma.md). Node 1 runs the echo
server; node 0 every subcommand against it; then the transport's counters on both nodes
show nothing dropped."""
import re

import pytest
from helpers import kernel_checked, kernel_problems, run_retrolink
from mach_cases import check_section, run_all
from test_mach_loopback import REMOTE as LOOPBACK

# the loopback's crossing cases but death and killed, which look up on "node 1" ports
# they registered here: only the mirror (node 1 = this node) has them
REMOTE = tuple(t for t in LOOPBACK if t not in ("death", "killed"))

pytestmark = pytest.mark.usefixtures("artifacts")


@pytest.fixture(scope="module")
def remote_run():
    cmd = kernel_checked(
        "case $RETROLINK_NODE in 1) mach_test serve --seconds 300;; "
        f"0) sleep 1; {run_all(REMOTE, '--node 1')};; esac; "
        "sed 's/^/stat /' /sys/kernel/debug/norma_de")
    r = run_retrolink("run", "cenju-3", "--timeout", "900", "--", "sh", "-c", cmd,
                      timeout=1200)
    lines = {n: [l.removeprefix(f"[node{n}] ") for l in r.stdout.splitlines()
                 if l.startswith(f"[node{n}] ")] for n in (0, 1)}
    return r, lines


@pytest.mark.parametrize("name", REMOTE)
def test_subcommand_passes_every_case_across_nodes(remote_run, name):
    check_section(remote_run[1][0], name, remote=True, across=True)


def test_nothing_dropped_and_no_kernel_problem(remote_run):
    r, lines = remote_run
    stats = {n: {m.group(1): int(m.group(2)) for l in lines[n]
                 if (m := re.match(r"stat (\w+) (-?\d+)$", l))} for n in (0, 1)}
    for a, b in ((0, 1), (1, 0)):
        assert stats[a]["sends"] == stats[b]["delivered"], stats
        assert stats[a]["bad_msgs"] == 0 and stats[a]["msgs_out"] == 0, stats
    assert not kernel_problems(r), kernel_problems(r)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
