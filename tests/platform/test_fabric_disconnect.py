"""A node the fabric cut off for a protocol error (a frame before the boot barrier, a
promise broken): its QEMU may wait at the barrier for ever, so the run must not wait
for it. The fabric names it in its status file (tests/fabric/test_boot_barrier.py);
the runner's watch of that file ends the run, and the node's problem names the fabric's
reason and its log."""
import json
from pathlib import Path

from retrolink.run.cluster import _StallWatch
from retrolink.run.diagnosis import disconnect_reason, disconnected_nodes

WHY = "a FRAME before the boot barrier (node 0's clock 10239668395 ns): a cluster's boot must be quiet"


def write_status(path: Path, disconnected: list) -> None:
    path.write_text(json.dumps({"stalled": False, "waiting_for": [],
                                "disconnected": disconnected}) + "\n")


def test_the_watch_sees_a_node_cut_off(tmp_path):
    path = tmp_path / "fabric-status.json"
    write_status(path, [])
    watch = _StallWatch([path], 60, [])
    assert not watch.check(0.0) and watch.disconnected == []
    write_status(path, [{"node": 0, "name": "node0", "why": WHY}])
    import os
    os.utime(path, ns=(1, 1))                 # a new mtime, as a rewrite of the file gives
    assert not watch.check(1.0)               # no stall: the run ends for the disconnect
    assert [d["node"] for d in watch.disconnected] == [0]


def test_the_reason_names_the_fabric_and_its_log(tmp_path):
    status = {"stalled": False, "waiting_for": [],
              "disconnected": [{"node": 1, "name": "node1", "why": WHY}, "junk"]}
    (d,) = disconnected_nodes(status)
    text = disconnect_reason(d, tmp_path / "fabric.log")
    assert text.startswith("node1 was disconnected by the fabric: a FRAME before the boot barrier")
    assert f"(fabric log: {tmp_path / 'fabric.log'})" in text
    assert disconnected_nodes(None) == [] and disconnected_nodes({"stalled": True}) == []
