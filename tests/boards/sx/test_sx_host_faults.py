"""Fault kit, host half: a node killed or stopped, or the fabric killed, while a node
streams to another (sx-pair). Each test asserts what the user is told, that the run ends
soon after the fault rather than at its timeout, and that the output written before the
fault is kept. The guest half (a full receive ring, a driver unbound with files open)
is in test_sx_driver_faults.py."""
import signal
import time

import pytest
from faults import BackgroundRun

STREAM = ("case $RETROLINK_NODE in 0) echo FAULT-POINT; "
          "sx_bench stream --dst 1 --size 4096 --count 1000000; echo stream-rc=$?;; "
          "1) sx_bench sink --count 1000000 > /dev/null;; esac")
# far longer than the tests wait: a run that only ends at its timeout fails them
TIMEOUT = "900"


# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")


def start(tmp_path, *sets) -> BackgroundRun:
    args = [a for s in sets for a in ("--set", s)]
    run = BackgroundRun(tmp_path, "sx-pair", *args, "--timeout", TIMEOUT, "--", STREAM)
    run.wait_for_line(0, "FAULT-POINT")
    time.sleep(2)          # let the stream run for a while
    return run


def test_a_killed_node_is_named_and_its_peer_is_told(tmp_path):
    # the runs folder is deep: the run's sockets must go elsewhere (cluster.socket_dir)
    deep = tmp_path / ("d" * 120)
    run = start(deep)
    run.signal_node(1, signal.SIGKILL)
    r = run.finish(timeout=300)
    assert r.returncode == 1, r.stderr
    assert "node1: QEMU was killed by signal 9 (SIGKILL)" in r.stderr, r.stderr
    assert "[node0] FAULT-POINT" in r.stdout                       # nothing lost
    assert "No route to host" in r.stdout and "[node0] stream-rc=1" in r.stdout, r.stdout
    assert "node0:" not in r.stderr and "the fabric" not in r.stderr, r.stderr


def test_a_killed_fabric_is_named_and_the_run_ends(tmp_path):
    run = start(tmp_path)
    killed_at = time.monotonic()
    run.signal_fabric(signal.SIGKILL)
    r = run.finish(timeout=300)
    assert time.monotonic() - killed_at < 60, "the run did not end soon after the fabric died"
    assert r.returncode == 1
    assert "the fabric was killed by signal 9 (SIGKILL) while the nodes were running" in r.stderr, r.stderr
    assert "fabric.log" in r.stderr
    assert "[node0] FAULT-POINT" in r.stdout


def test_a_stopped_node_is_named_as_the_one_the_cluster_waits_for(tmp_path):
    run = start(tmp_path, "cluster.stall_timeout_s=20")
    stopped_at = time.monotonic()
    run.signal_node(1, signal.SIGSTOP)
    # node 0 soon waits for node 1, and must sleep, not spin: a node at its grant looks
    # in the lock-step file for at most 0.5 ms, then sleeps on the socket (fabric.md)
    time.sleep(3)
    before = run.node_cpu_seconds(0)
    time.sleep(5)
    assert run.node_cpu_seconds(0) - before < 1.0, "node 0 spins while it waits for node 1"
    r = run.finish(timeout=300)
    assert time.monotonic() - stopped_at < 120, "the run did not end at the stall timeout"
    assert r.returncode == 1
    assert "the cluster is waiting for node1" in r.stderr, r.stderr
    assert "node1 stalled the cluster: its virtual clock stopped at" in r.stderr, r.stderr
    assert "its QEMU process is stopped" in r.stderr
    assert "node0 did not finish its command: stopped, waiting for node1 (stalled)" in r.stderr
    assert "[node0] FAULT-POINT" in r.stdout
