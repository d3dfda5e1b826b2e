"""Many PEs on one host (machines/cenju-3-64.toml; docs/machines.md, "Many nodes on one
host"): the nodes boot, a second run starts from the snapshot, and every node runs its
command, its root the read-only image shared by every node (root_fs = "pmem") under a
tmpfs; a node's snapshot holds only the memory it uses, none of the image's files.

They take longer than a suite run can spend on this 2-core host (the first boot makes
the snapshot: a cold boot of 16 nodes took 11.5 minutes here, of 64 about an hour) and
64 x 220 MiB of host memory: 16 run when RETROLINK_TEST_MANY=1, 64 when
RETROLINK_TEST_64=1."""
import os
import re
from pathlib import Path

import pytest
from helpers import kernel_checked, kernel_problems, run_retrolink

from retrolink.build.artifacts import root_image_path

pytestmark = pytest.mark.usefixtures("artifacts")

# the node's id and count as init exports them, and the root's statfs magic (the overlay
# over the read-only image)
COMMAND = kernel_checked('echo "up $RETROLINK_NODE of $RETROLINK_NODES"; stat -f -c %t /')


def run(nodes: int, timeout: int):
    return run_retrolink("run", "cenju-3-64", "--set", f"cluster.nodes={nodes}", "--",
                         "sh", "-c", COMMAND, timeout=timeout)


def started_from_snapshot(r) -> bool:
    run_dir = Path(re.search(r"logs: (\S+)\)", r.stderr).group(1))
    return "started at the boot barrier" in (run_dir / "fabric.log").read_text()


def check(r, nodes: int):
    assert r.returncode == 0 and not kernel_problems(r), r.stdout[-3000:] + r.stderr[-2000:]
    for n in range(nodes):
        assert [l.removeprefix(f"[node{n}] ") for l in r.stdout.splitlines()
                if l.startswith(f"[node{n}] ")] == [f"up {n} of {nodes}", "794c7630"], n


def boot_twice(nodes: int, timeout: int):
    """The first run makes the snapshot (or starts from one an earlier run made, in the
    cache's snapshot folder); the second starts from it."""
    check(run(nodes, timeout), nodes)
    again = run(nodes, timeout)
    check(again, nodes)
    assert started_from_snapshot(again)


@pytest.mark.skipif(os.environ.get("RETROLINK_TEST_MANY") != "1",
                    reason="16 nodes: set RETROLINK_TEST_MANY=1 (minutes, ~4 GiB)")
def test_16_pes_boot_and_run_a_command():
    boot_twice(16, timeout=3600)


@pytest.mark.skipif(os.environ.get("RETROLINK_TEST_64") != "1",
                    reason="64 nodes: set RETROLINK_TEST_64=1 (tens of minutes, ~15 GiB)")
def test_64_pes_boot_and_run_a_command():
    boot_twice(64, timeout=3 * 3600)


def test_a_node_s_snapshot_holds_only_the_memory_it_uses(tmp_path, artifacts):
    """The kernel zeroes what it frees (init_on_free=1), so the boot's freed memory is not
    saved; the root's files are on the image, which the node maps from the host's file and
    its snapshot leaves out (x-ignore-shared): against the same node with its files
    unpacked into a ramfs, its snapshot is smaller by about the image (58 MB against 118,
    of a 61 MB image). And a run from it sees the same memory."""
    args = ("--set", "cluster.nodes=2", "--node", "0", "--",
            "grep", "-E", "^(MemFree|MemTotal):", "/proc/meminfo")
    sizes = {}
    for root_fs in ("pmem", "ramfs"):
        env = {"RETROLINK_SNAPSHOTS": str(tmp_path / root_fs)}
        r = run_retrolink("run", "cenju-3-64", "--set", f"cluster.root_fs={root_fs}", *args,
                          env=env)
        assert r.returncode == 0 and not kernel_problems(r), r.stdout[-3000:] + r.stderr[-2000:]
        (mig,) = (tmp_path / root_fs).glob("*/node0.mig")
        sizes[root_fs] = mig.stat().st_size
        if root_fs == "pmem":
            again = run_retrolink("run", "cenju-3-64", *args, env=env)
            assert again.returncode == 0 and again.stdout == r.stdout, again.stdout + again.stderr
    image = root_image_path(artifacts.initrd).stat().st_size
    assert sizes["ramfs"] - sizes["pmem"] > 0.75 * image, (sizes, image)
