"""How a run ends when it does not end by itself (docs/reliability.md): a cap in virtual
time and the stall watch; a wall-clock cap only where a person asked for one, so that a
slow host makes a run slower, never failed."""
import os
import subprocess
import time

import pytest
from helpers import run_retrolink

from retrolink.model.machine import (PLAIN_BOOT_TIMEOUT_S, PLAIN_RUN_TIMEOUT_S, load_machine,
                                     nodes_per_core)


def test_only_a_person_sets_a_wall_clock_cap():
    """bench puma3 failed at 934 s and 908 s of wall time, progressing, under the 900 s
    default: a machine with a fabric has no wall-clock cap unless one is asked for."""
    assert load_machine("puma-iii").wall_caps() == (None, None)
    assert load_machine("sure-sx").wall_caps(timeout_s=60) == (None, 60)
    assert load_machine("sure-sx", {"cluster.boot_timeout_s": 50,
                                    "cluster.run_timeout_s": 70}).wall_caps() == (50, 70)
    # without a fabric the nodes' clocks cannot be read: the caps of before stay, for
    # each node a host core runs
    share = nodes_per_core(2)
    assert load_machine("plain").wall_caps() == (share * PLAIN_BOOT_TIMEOUT_S,
                                                 share * PLAIN_RUN_TIMEOUT_S)
    assert load_machine("plain").wall_caps(timeout_s=15) == (share * PLAIN_BOOT_TIMEOUT_S, 15)
    assert load_machine("sure-sx").cluster.run_limit_virtual_s == 3600


def test_plain_nodes_sharing_a_core_get_longer_caps(monkeypatch):
    """64 plain nodes boot cold on 2 cores in about 7 minutes: bench fabric's free-running
    twin of cenju-3-64 failed at the 300 s that suits a node with a core of its own."""
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    assert nodes_per_core(1) == nodes_per_core(2) == 1 and nodes_per_core(3) == 2
    big = load_machine("plain", {"cluster.nodes": 64})
    assert big.wall_caps() == (32 * PLAIN_BOOT_TIMEOUT_S, 32 * PLAIN_RUN_TIMEOUT_S)
    assert big.wall_caps(timeout_s=15)[1] == 15


@pytest.mark.usefixtures("artifacts")
def test_a_run_past_its_virtual_cap_ends_naming_the_node():
    r = run_retrolink("run", "sx-pair", "--set", "cluster.run_limit_virtual_s=120", "--",
                      "sleep 100000; echo not-here")
    assert r.returncode == 1, r.stderr
    assert ("node0 did not finish its command: the virtual clock of node") in r.stderr
    assert "passed 120 s (cluster.run_limit_virtual_s) (console log:" in r.stderr, r.stderr
    assert "not-here" not in r.stdout


@pytest.mark.usefixtures("artifacts")
def test_a_run_on_a_host_slowed_on_purpose_gives_the_same_output():
    """The same command on sx-pair, then with retrolink, the fabric and both QEMUs on one
    core that a busy process shares: slower, and the same output byte for byte."""
    cmd = ("case $RETROLINK_NODE in 0) sx_bench pingpong --peer 1 --sizes 16,4096 --iters 200;; "
           "1) sx_bench echo --peer 0;; esac; cat /proc/uptime")
    # once first, so that both timed runs start from the snapshot (the first boot of a
    # configuration makes it, which takes longer than any slowing)
    assert run_retrolink("run", "sx-pair", "--", "true").returncode == 0
    t0 = time.monotonic()
    fast = run_retrolink("run", "sx-pair", "--", cmd)
    fast_s = time.monotonic() - t0
    assert fast.returncode == 0, fast.stderr
    cpu = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    hog = subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])
    try:
        os.sched_setaffinity(0, {cpu})          # retrolink and its children inherit it
        t0 = time.monotonic()
        slow = run_retrolink("run", "sx-pair", "--", cmd, timeout=3600)
        slow_s = time.monotonic() - t0
    finally:
        os.sched_setaffinity(0, before)
        hog.kill()
        hog.wait()
    assert slow.returncode == 0, slow.stderr
    assert slow.stdout == fast.stdout
    assert slow_s > 1.2 * fast_s, (slow_s, fast_s)
