"""The run's timeline (timeline.json, the Chrome trace event format): built from a made-up
frame trace and QEMU trace in the formats fabric/core/main.c and qemu/trace-events write,
and from a short SURE-SX run."""
import json
import re
from pathlib import Path

import pytest
from helpers import by_role, run_retrolink

from retrolink.run import timeline

# fabric_trace(): one network (no net=); node 0 sends two frames back to back (the second
# ready before the first arrives), a broadcast, a dropped frame; node 1 answers
FABRIC = """\
1000 ready src=0 dst=1 len=64 seq=0
1000 start src=0 dst=1 len=64 seq=0
1500 ready src=0 dst=1 len=128 seq=1
2000 arrive src=0 dst=1 len=64 seq=0
2000 start src=0 dst=1 len=128 seq=1
3000 arrive src=0 dst=1 len=128 seq=1
3500 ready src=1 dst=0 len=32 seq=0
3600 start src=1 dst=0 len=32 seq=0
4100 arrive src=1 dst=0 len=32 seq=0
5000 ready src=0 dst=4294967295 len=60 seq=2
5000 start src=0 dst=4294967295 len=60 seq=2
5600 arrive src=0 dst=1 len=60 seq=2
5700 arrive src=0 dst=2 len=60 seq=2
6000 drop:destination_down src=2 dst=5 len=10 seq=0
6000 ready src=2 dst=5 len=10 seq=0
7000 ready src=1 dst=0 len=32 seq=1
"""
# qemu/trace-events, as the log backend writes them (with its pid@time prefix)
NODE0 = """\
4242@1700000000.000001:retrolink_sx_doorbell node 0: tx slot 0 to node 1, 64 bytes, at 900
4242@1700000000.000002:retrolink_sx_frame_in node 0: frame from node 1, type 1, 32 bytes, arrives at 4100
4242@1700000000.000003:retrolink_sx_reg_read node 0: read SX_STATUS (0x10) = 0x1
"""
NODE1 = "retrolink_sx_rx node 1: rx slot 3 holds a message from node 0, 64 bytes, at 2100\n"


def check_loads(text: str) -> dict:
    """What Perfetto and chrome://tracing need of the file: valid JSON, named tracks, slices
    on a track that do not overlap, every flow's start and finish (same id) bound to a slice
    on their tracks, the finish not before the start."""
    tl = json.loads(text)
    assert tl["displayTimeUnit"] == "ns"
    events = tl["traceEvents"]
    meta = [e for e in events if e["ph"] == "M"]
    processes = {e["pid"] for e in meta if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    assert len({tid for _, tid in threads}) == len(threads)    # a tid is one thread
    slices = {}
    for e in events:
        if e["ph"] != "M":
            assert e["pid"] in processes and (e["pid"], e["tid"]) in threads, e
            assert isinstance(e["ts"], float), e
        if e["ph"] == "X":
            assert e["dur"] > 0, e
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in slices.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans

    def bound(e):
        return any(b <= e["ts"] <= end for b, end in slices.get((e["pid"], e["tid"]), []))

    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == len([e for e in events if e["ph"] == "s"])     # ids unique
    assert starts.keys() == ends.keys()
    for i, s in starts.items():
        f = ends[i]
        assert f["bp"] == "e" and (f["cat"], f["name"]) == (s["cat"], s["name"])
        assert f["ts"] >= s["ts"] and bound(s) and bound(f), (s, f)
    return tl


def test_a_made_up_trace_becomes_tracks_slices_and_flows():
    tl, counts = timeline.build(FABRIC, {0: NODE0, 1: NODE1}, {0: "sx"})
    tl = check_loads(json.dumps(tl))
    events = tl["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names == {1: "node 0", 2: "node 1", 3: "node 2", 1000: "network 0 (sx)"}
    assert counts == {"frames": 6, "flows": 5, "qemu_events": 3,
                      "qemu_events_without_time": 1, "lines_not_understood": 0}
    frames = [e for e in events if e["ph"] == "X" and e["pid"] == 1000]
    assert len(frames) == 6
    first = next(e for e in frames if e["args"]["seq"] == 0 and e["args"]["src"] == 0)
    assert (first["ts"], first["dur"], first["name"]) == (1.0, 1.0, "to node 1")
    # the second frame is ready before the first arrives: another lane of node 0's track
    second = next(e for e in frames if e["args"]["seq"] == 1 and e["args"]["src"] == 0)
    assert second["tid"] != first["tid"]
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e["name"] == "thread_name"}
    assert tracks[(1000, first["tid"])] == "node 0 sends"
    assert tracks[(1000, second["tid"])] == "node 0 sends (2)"
    bcast = next(e for e in frames if e["name"] == "broadcast")
    assert bcast["args"]["arrive_ns"] == [5600, 5700]
    assert any(e["name"] == "drop:destination_down" for e in frames)
    # a frame not yet arrived when the trace ends: a slice, no flow
    assert any(e["args"]["seq"] == 1 and e["args"]["src"] == 1 for e in frames)
    # the broadcast's copies: two flows from the one slice to nodes 1 and 2
    flows = {e["id"]: e for e in events if e["ph"] == "f"}
    from_bcast = [e["id"] for e in events if e["ph"] == "s" and e["ts"] == 5.0]
    assert sorted(flows[i]["pid"] for i in from_bcast) == [2, 3]
    assert sorted(flows[i]["ts"] for i in from_bcast) == [5.6, 5.7]
    qemu = [e for e in events if e["ph"] == "i" and e["cat"] == "qemu"]
    assert sorted((e["pid"], e["ts"], e["name"]) for e in qemu) == [
        (1, 0.9, "retrolink_sx_doorbell"), (1, 4.1, "retrolink_sx_frame_in"),
        (2, 2.1, "retrolink_sx_rx")]


def test_several_networks_and_a_partial_last_line():
    """Node 1 hears node 0 on network 0 after node 2 on network 1, though node 0's frame
    was ready first: its arrivals, in time order, share one track."""
    text = ("10 ready src=0 dst=1 len=8 seq=0 net=0\n20 ready src=2 dst=1 len=8 seq=0 net=1\n"
            "25 arrive src=2 dst=1 len=8 seq=0 net=1\n30 arrive src=0 dst=1 len=8 seq=0 net=0\n"
            "40 ready src=1 dst=0 le")
    tl, counts = timeline.build(text, {})
    check_loads(json.dumps(tl))
    assert (counts["frames"], counts["flows"], counts["lines_not_understood"]) == (2, 2, 1)
    names = {e["args"]["name"] for e in tl["traceEvents"] if e["name"] == "process_name"}
    assert {"network 0", "network 1"} <= names
    assert len({e["tid"] for e in tl["traceEvents"] if e["ph"] == "X" and e["pid"] == 2}) == 1


@pytest.mark.usefixtures("artifacts")
def test_a_traced_sx_run_writes_a_timeline_that_loads():
    """Node 1 streams to node 0; node 2's command fails: a failed run has its timeline."""
    r = run_retrolink("run", "sure-sx", "--trace", "--qemu-trace", "retrolink_sx_*",
                      "--timeout", "300", "--", "sh", "-c",
                      by_role(n0="sx_bench fanin --count 10 && echo received",
                              n1="sx_bench stream --dst 0 --size 512 --count 10",
                              n2="exit 3"))
    assert r.returncode == 1 and "FAILED" in r.stderr, r.stdout + r.stderr
    assert "[node0] received" in r.stdout
    run_dir = Path(re.search(r"logs: (\S+)\)", r.stderr)[1])
    assert f"{run_dir / 'timeline.json'} (open it" in r.stderr, r.stderr
    tl = check_loads((run_dir / "timeline.json").read_text())
    trace = (run_dir / "fabric-trace.txt").read_text().splitlines()
    readies = {tuple(l.split()[2:6:3]) for l in trace if l.split()[1] == "ready"}
    arrivals = [l for l in trace if l.split()[1] == "arrive"]
    frames = [e for e in tl["traceEvents"] if e["ph"] == "X" and e["cat"] == "frame"
              and e["pid"] >= timeline.NETWORK_PID]
    flows = [e for e in tl["traceEvents"] if e["ph"] == "s"]
    assert len(frames) == len(readies) >= 10 and len(flows) == len(arrivals) >= 10
    assert [e for e in tl["traceEvents"] if e["ph"] == "i" and e["cat"] == "qemu"
            and e["name"] == "retrolink_sx_doorbell"]
