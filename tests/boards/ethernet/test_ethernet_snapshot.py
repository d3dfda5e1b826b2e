"""qtest: the retrolink netdev behind an e1000 in a snapshot (QMP migrate to a file,
-incoming from it). Its state comes back whole: a link coming up comes up when it would
have (and the node promises accordingly), the bus is busy as it was, the counters go on
counting. A stream with a bad event or a link the NIC contradicts is refused by name. A
netdev with a frame in flight refuses to be saved, naming it, and goes on.
docs/boards/ethernet.md, "Snapshots"."""
import re

import pytest
from snapshots import Stream, load_refused, save, wait_loaded
from test_ethernet_netdev import (RATE, RDH, REGS, RX_LAT, TX_LAT, TX_LEAST, dma, eth, mac, send,
                                  setup_nic)

from retrolink import wire
from retrolink.qtest.client import Qtest
from retrolink.qtest.fake_fabric import FakeFabric

NEVER = wire.NEVER
LINK_UP_NS = 5_000_000


def start(artifacts, tmp_path, name, link_up_ns, on_sync=None, incoming=None, qmp=True):
    """Node 0 of a 2-node fake fabric: an e1000 on the retrolink netdev n0, under qtest;
    with incoming, loading that state file (the same command line but for the socket)."""
    sock = tmp_path / f"{name}.sock"
    fabric = FakeFabric(sock, 2, 1_000_000, on_sync or (lambda m: [wire.grant(0, NEVER)]))
    args = ["-netdev", f"retrolink,id=n0,fabric={sock},node=0,network=0,tx-latency-ns={TX_LAT},"
                       f"rx-latency-ns={RX_LAT},dma-rate={RATE},link-up-ns={link_up_ns}",
            "-device", "e1000,netdev=n0,mac=52:54:00:52:00:00,romfile=",
            # no self-announce after the load: RARPs from the NIC at host-timed moments
            # (docs/boards/ethernet.md, "Snapshots")
            "-global", "migration.announce-rounds=0"]
    q = Qtest(artifacts.qemu, args + (["-incoming", f"file:{incoming}"] if incoming else []),
              tmp_path / f"{name}.log", qmp=qmp)
    return fabric, q


def load(artifacts, tmp_path, link_up_ns, state):
    fabric, q = start(artifacts, tmp_path, "dst", link_up_ns, incoming=state)
    assert wait_loaded(q) == "paused"
    assert q.qmp("cont") == {"return": {}}
    return fabric, q


def until(q, t):
    assert q.clock_set(t) == t


def counters(log) -> dict[str, int]:
    m = re.search(r"retrolink-net n0 \(node 0\): (.*)", log.read_text())
    return {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


@pytest.fixture(scope="module")
def link_coming_up(artifacts, tmp_path_factory):
    """Bus mastering on at 1.5 ms: the link comes up at 1.5 ms + LINK_UP_NS. Saved at 2 ms."""
    tmp = tmp_path_factory.mktemp("net-snapshot")
    fabric, q = start(artifacts, tmp, "src", LINK_UP_NS)
    try:
        until(q, 1_500_000)
        setup_nic(q)
        until(q, 2_000_000)
        status = save(q, tmp / "net.state")
        assert status["status"] == "completed", (status, (tmp / "src.log").read_text()[-2000:])
    finally:
        q.close()
        fabric.stop()
    assert not fabric.violations, fabric.violations
    return tmp / "net.state"


def test_a_link_coming_up_comes_up_on_time_after_a_snapshot(artifacts, tmp_path, cleanup,
                                                           link_coming_up):
    up = 1_500_000 + LINK_UP_NS
    fabric, q = load(artifacts, tmp_path, LINK_UP_NS, link_coming_up)
    cleanup((fabric, q))
    until(q, 2_000_000)         # qtest's clock is not in the stream: the loaded one starts at 0
    # the sync at 1 ms sees the saved link: no frame before it is up (a fresh netdev whose
    # NIC had not started would promise 1 ms + LINK_UP_NS + TX_LEAST)
    assert fabric.of_type(wire.SYNC)[0]["promise"] == up + TX_LEAST
    until(q, up - 1)
    send(q, [eth(mac(0, 1), 100)])           # no link yet: lost
    until(q, up)
    send(q, [eth(mac(0, 1), 200)], first=1)
    frames = fabric.wait_for(wire.FRAME, 1)
    assert [(f["time"], f["len"]) for f in frames] == [(up + TX_LAT + dma(200), 200)]
    q.close()
    assert counters(tmp_path / "dst.log")["tx_frames"] == 1


def test_the_bus_and_the_counters_go_on_after_a_snapshot(artifacts, tmp_path, cleanup):
    """A 1000-byte frame takes the bus at 2 ms; saved then, the loaded netdev's next frame
    waits for the bus, and its counters hold both frames."""
    t = 2_000_000
    fabric, q = start(artifacts, tmp_path, "src", 0)
    cleanup((fabric, q))
    until(q, t)
    setup_nic(q)
    send(q, [eth(mac(0, 1), 1000)])
    busy = t + TX_LAT + dma(1000)
    assert [f["time"] for f in fabric.wait_for(wire.FRAME, 1)] == [busy]
    assert save(q, tmp_path / "net.state")["status"] == "completed"
    fabric2, q2 = load(artifacts, tmp_path, 0, tmp_path / "net.state")
    cleanup((fabric2, q2))
    until(q2, t)
    send(q2, [eth(mac(0, 1), 100)], first=1)
    assert [f["time"] for f in fabric2.wait_for(wire.FRAME, 1)] == [busy + dma(100)]
    q2.close()
    c = counters(tmp_path / "dst.log")
    assert (c["tx_frames"], c["tx_bytes"]) == (2, 1100), c


# each: the field (its value in the snapshot, checked first), a bad value, what is said
# after "retrolink netdev n0 (node 0): "
CORRUPTIONS = {
    "event_kind": (("sched", "vm_events", 0, "kind"), 2, 0, "event 0 of 1 (kind 0, arg 0): "
                   "class 0: not the link coming up, the only event a snapshot holds"),
    "event_count": (("sched", "vm_count"), 1, 10**8, "the stream has 100000000 events, "
                    "not 0..65536"),
    "master": (("master",), 1, 0, "the stream's link (master 0, link_up 0, link_up_at 6500000) "
               "does not match the NIC's bus master bit, 1"),
    "nodes": (("nodes",), 2, 1000, "the stream's nodes 1000 is more than 256"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_a_stream_with_a_bad_event_or_link_is_refused(artifacts, tmp_path, cleanup,
                                                      link_coming_up, case):
    path, was, bad, said = CORRUPTIONS[case]
    stream = Stream(link_coming_up)
    assert stream.read("retrolink-net", *path) == was        # the right bytes
    stream.patch("retrolink-net", *path, value=bad)
    state = stream.write(tmp_path / "bad.state")
    fabric, q = start(artifacts, tmp_path, "dst", LINK_UP_NS, incoming=state, qmp=False)
    cleanup((fabric, q))
    log = load_refused(q, tmp_path / "dst.log")
    assert "retrolink netdev n0 (node 0): " + said in log, log[-3000:]
    assert "error while loading state for instance 0x0 of device 'retrolink-net'" in log, \
        log[-3000:]


def test_the_unchanged_stream_loads(artifacts, tmp_path, cleanup, link_coming_up):
    """The other half of the test above: the copy it corrupts loads when it is not."""
    state = Stream(link_coming_up).write(tmp_path / "copy.state")
    fabric, q = start(artifacts, tmp_path, "dst", LINK_UP_NS, incoming=state)
    cleanup((fabric, q))
    assert wait_loaded(q) == "paused"


def test_a_netdev_with_a_frame_in_flight_refuses_a_save_and_goes_on(artifacts, tmp_path,
                                                                   cleanup):
    arrival = 1_200_000_000             # after e1000's 1 s hold-off following RCTL
    fabric, q = start(artifacts, tmp_path, "src", 0,
                      lambda m: [wire.deliver(0, arrival, 1, eth(mac(0, 0), 100), seq=1),
                                 wire.grant(0, NEVER)])
    cleanup((fabric, q))
    setup_nic(q, rx_buffers=2)
    until(q, arrival - 100_000_000)     # past the sync that announced it
    assert save(q, tmp_path / "net.state")["status"] == "failed"
    said = ("retrolink netdev n0 (node 0): cannot save with frames in flight: a frame of 100 "
            f"bytes from node 1 arriving at {arrival} ns")
    assert said in (tmp_path / "src.log").read_text(), (tmp_path / "src.log").read_text()[-2000:]
    # nothing was lost: the frame enters the NIC on time, and then a save succeeds
    assert q.qmp("cont") == {"return": {}}
    until(q, arrival + RX_LAT + dma(100))
    assert q.readl(REGS + RDH) == 1                         # one buffer used
    assert save(q, tmp_path / "net.state")["status"] == "completed"
