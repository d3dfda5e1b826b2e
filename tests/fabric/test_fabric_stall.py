"""A node that stops from outside (SIGSTOP on its QEMU) stalls the cluster: the fabric
names the node it is waiting for, on stderr and in its status file."""
import json
import re
import time

from fakenode import FakeNode

NEVER = 2**64 - 1
RING3 = "nodes 3\ntopology token_ring rate=12500000 station_delay_ns=1000\n"
LINE = re.compile(r"^fabric: stalled: waiting for node (\d+) \((\w+)\) at (\d+) ns; "
                  r"no SYNC from it for (\d+\.\d) s$", re.M)


def wait_for(pred, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def status(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def ring_of_3(fabric, tmp_path, stall_config):
    """A started cluster of 3 fake nodes, and the fabric's status file."""
    path = tmp_path / "fabric-status.json"
    f = fabric(RING3 + f"{stall_config}\nstatus {path}\n")
    n = [FakeNode(f.sock, i) for i in range(3)]
    for x in n:
        x.welcome()
    return f, n, path


def test_a_silent_node_is_named_once_per_stall(fabric, tmp_path):
    f, n, path = ring_of_3(fabric, tmp_path, "stall_report_s 1")
    assert status(path) == {"stalled": False, "waiting_for": [], "disconnected": []}
    start = time.monotonic()
    # nodes 1 and 2 reach their grants and wait; node 0 never reports (it was stopped)
    n[1].report(n[1].grant, NEVER)
    n[2].report(n[2].grant, NEVER)
    assert wait_for(lambda: (status(path) or {}).get("stalled"))
    assert time.monotonic() - start >= 0.9
    st = status(path)
    assert [w["node"] for w in st["waiting_for"]] == [0]
    w = st["waiting_for"][0]
    assert w["name"] == "node0" and w["time_ns"] == 0 and 0.9 <= w["silent_s"] < 3
    time.sleep(1.5)               # the stall goes on: still one line
    lines = LINE.findall(f.log.read_text())
    assert [(node, name, t) for node, name, t, _ in lines] == [("0", "node0", "0")]
    assert 0.9 <= float(lines[0][3]) < 3
    # node 0 resumes: the others advance, the stall is over
    n[0].report(n[0].grant, NEVER)
    n[1].wait_grant()
    assert wait_for(lambda: status(path) == {"stalled": False, "waiting_for": [], "disconnected": []}, 0.5)


def test_every_running_node_is_named(fabric, tmp_path):
    f, n, path = ring_of_3(fabric, tmp_path, "stall_report_s 1")
    n[1].report(n[1].grant, NEVER)
    assert wait_for(lambda: (status(path) or {}).get("stalled"))
    assert [w["node"] for w in status(path)["waiting_for"]] == [0, 2]
    assert wait_for(lambda: len(LINE.findall(f.log.read_text())) == 2)
    assert [m[0] for m in LINE.findall(f.log.read_text())] == ["0", "2"]


def test_stall_reports_can_be_switched_off(fabric, tmp_path):
    f, n, _ = ring_of_3(fabric, tmp_path, "stall_report_s 0")
    n[1].report(n[1].grant, NEVER)
    time.sleep(1.5)
    assert "stalled" not in f.stop()
