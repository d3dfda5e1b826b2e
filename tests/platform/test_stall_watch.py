"""The runner's stall rule (docs/reliability.md): the lock-step has not moved, and the
nodes it waits for are stopped or blocked (no CPU time for cluster.stall_timeout_s of
wall time) or loop without moving (that much CPU time). A node that gets a little CPU
time on a busy host is slow, not stalled, and a run never ends for it."""
import json
import os
import subprocess
import time

import pytest

from retrolink.run import cluster
from retrolink.run.cluster import _StallWatch
from retrolink.run.diagnosis import cpu_seconds


def stalled_on(path, node: int) -> None:
    path.write_text(json.dumps({"stalled": True, "disconnected": [],
                                "waiting_for": [{"node": node, "name": f"node{node}",
                                                 "time_ns": 5, "silent_s": 3}]}) + "\n")


@pytest.fixture
def watch(tmp_path, monkeypatch):
    """A watch of a fabric waiting for node 1, whose CPU time the test sets."""
    cpu = {"s": 0.0}
    monkeypatch.setattr(cluster, "cpu_seconds", lambda pid: cpu["s"] if pid == 111 else 0.0)
    path = tmp_path / "fabric-status.json"
    stalled_on(path, 1)
    w = _StallWatch([path], 60, [100, 111])
    w.cpu = cpu
    return w


def test_a_node_with_no_cpu_time_stalls_the_run_at_the_timeout(watch):
    assert not watch.check(0.0)
    assert not watch.check(59.0)
    assert watch.check(60.5)


def test_a_node_that_gets_a_little_cpu_time_on_a_busy_host_never_ends_the_run(watch):
    assert not watch.check(0.0)
    for minute in range(1, 30):                  # half an hour, 1 s of CPU a minute
        watch.cpu["s"] = minute * 1.0
        assert not watch.check(minute * 60.0 + 0.5), minute


def test_a_node_that_stops_after_running_slowly_stalls_one_timeout_later(watch):
    assert not watch.check(0.0)
    watch.cpu["s"] = 2.0
    assert not watch.check(60.5)                 # it ran: the next period is judged alone
    assert not watch.check(100.0)
    assert watch.check(121.0)                    # no CPU time since 60.5


def test_a_node_that_loops_without_moving_stalls_the_run_after_that_much_cpu_time(watch):
    assert not watch.check(0.0)
    watch.cpu["s"] = 59.0
    assert not watch.check(59.5)
    watch.cpu["s"] = 60.0
    assert watch.check(60.0 + 0.1)


def test_cpu_seconds_of_a_process():
    start = time.process_time()
    while time.process_time() - start < 0.3:        # CPU time, however busy the host
        pass
    # /proc counts in clock ticks (1/100 s)
    assert abs(cpu_seconds(os.getpid()) - time.process_time()) < 0.05
    p = subprocess.Popen(["sleep", "30"])
    p.kill()
    p.wait()
    assert cpu_seconds(p.pid) == 0.0            # gone


def test_with_shards_a_stall_in_any_shards_status_counts(tmp_path, monkeypatch):
    """The fabric in shards (docs/fabric.md, "Shards"): each shard writes its own status
    file; the one waiting for node 1 is the second's."""
    monkeypatch.setattr(cluster, "cpu_seconds", lambda pid: 0.0)
    quiet, waiting = tmp_path / "fabric-status.json.0", tmp_path / "fabric-status.json.1"
    quiet.write_text(json.dumps({"stalled": False, "disconnected": [], "waiting_for": []}))
    stalled_on(waiting, 1)
    w = _StallWatch([quiet, waiting], 60, [100, 111])
    assert not w.check(0.0)
    assert [x["node"] for x in w.waiting_for] == [1]
    assert w.check(60.5)
