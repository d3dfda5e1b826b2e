"""Input the fabric must refuse without harm to the others: times near the end of the
64-bit range (they would wrap when the fabric adds a latency), and floods of frames."""
import time

import pytest
from fakenode import FakeNode

from retrolink import wire

NEVER = 2**64 - 1
P2P = "nodes 2\ntopology p2p rate=12500000 prop_ns=5000 overhead_bytes=28\n"


@pytest.mark.parametrize("bad", [
    lambda n: wire.frame(n, 2**64 - 1001, 0, b"wraps"),      # ready + latency wraps to ~6 us
    lambda n: wire.frame(n, 2**63, 0, b"late"),
    lambda n: wire.sync(n, 0, 2**64 - 2),                   # a promise, not "none"
    lambda n: wire.sync(n, 0, 2**63),
    lambda n: wire.bye(n, 2**64 - 1),
], ids=["frame-wraps", "frame-at-limit", "promise-near-never", "promise-at-limit", "bye"])
def test_times_at_the_end_of_the_range_cut_off_only_the_sender(fabric, bad):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    b.raw(bad(1))
    with pytest.raises(ConnectionError, match=r"beyond the fabric's limit of 2\^63 ns"):
        b.wait_grant()
    # the other node hears that its peer is down, and keeps getting grants
    assert a.sync(0, NEVER) == NEVER
    assert any(l["peer"] == 1 and l["up"] == 0 for l in a.links)
    assert not a.delivered
    log = f.stop()
    assert "node 1 (node1): " in log and "limit of 2^63 ns" in log


def test_a_sync_time_near_the_end_is_refused_even_when_running_free(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    b.s.sendall(wire.bye(1, 0))
    assert a.sync(0, NEVER) == NEVER          # alone: it may run free
    a.raw(wire.sync(0, 2**64 - 10, NEVER))
    with pytest.raises(ConnectionError, match=r"limit of 2\^63 ns"):
        a.wait_grant()


@pytest.mark.parametrize("hello,why", [
    (lambda: wire.hello(0, time_ns=2**64 - 5), "limit of 2^63 ns"),
    (lambda: wire.hello(0, reaction_ns=2**64 - 1), "limit of 2^63 ns"),
], ids=["time", "reaction"])
def test_a_hello_with_times_near_the_end_is_refused(fabric, hello, why):
    import socket
    f = fabric(P2P)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    FakeNode.connect(s, f.sock)
    s.settimeout(3)
    s.sendall(hello())
    m = wire.unpack(s.recv(70000))
    assert m["type"] == wire.ERROR and why in m["text"], m
    assert f"refusing a connection: " in f.stop()


def test_a_bye_after_the_grant_is_a_protocol_error(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    b.raw(wire.bye(1, b.grant + 1_000_000))
    with pytest.raises(ConnectionError, match="BYE time"):
        b.wait_grant()
    assert a.sync(0, NEVER) == NEVER


# Flooding: what one node may keep in flight (fabric/core/fabric.h, docs/fabric.md)
MAX_IN_FLIGHT = 4096
RING3 = "nodes 3\ntopology token_ring rate=12500000 station_delay_ns=1000 mtu=65536\n"


def rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def flood(node: FakeNode, count: int, size: int, dst: int, ready_ns=0) -> int:
    """Send frames until the fabric hangs up; return how many went out."""
    payload = b"f" * size
    for i in range(count):
        try:
            node.send(ready_ns, dst, payload, seq=i)
        except OSError:           # the fabric closed the connection
            return i
    return count


def error_text(node: FakeNode) -> str:
    resets = 0
    while True:
        try:
            m = node.recv()
        except ConnectionResetError:
            # the fabric drains a flooder before it closes, but the flooder may have sent
            # more in between; the reset is reported once, then the queued ERROR reads
            resets += 1
            assert resets == 1, "reset twice"
            continue
        if m["type"] == wire.ERROR:
            return m["text"]


@pytest.mark.parametrize("count,size,why", [
    (100_000, 2000, f"{MAX_IN_FLIGHT} frames in flight"),
    (2_000, 60_000, "16 MiB in flight"),
], ids=["frames", "bytes"])
def test_a_flooding_node_is_cut_off_and_the_others_carry_on(fabric, count, size, why):
    f = fabric(RING3)
    n = [FakeNode(f.sock, i) for i in range(3)]
    for x in n:
        x.welcome()
    # node 0 never says SYNC: nothing it sends can be processed, all of it waits in the fabric
    sent = flood(n[0], count, size, dst=9)
    assert sent < count, "the fabric took every frame"
    assert why in error_text(n[0])
    assert rss_mb(f.proc.pid) < 100, "the fabric kept the flood"
    # the others keep being granted, by each other's promises
    n[1].report(0, 1_000_000)
    assert n[2].sync(0, 2_000_000) == 1_000_000 + 1000
    g = n[1].wait_grant()
    if g < 1_012_000:             # granted before node 2 had promised anything
        g = n[1].sync(g, 1_000_000)
    assert g == 1_012_000         # node 2 may react 10 us after 1 us of ring latency
    assert any(l["peer"] == 0 and l["up"] == 0 for l in n[1].links)
    log = f.stop()
    assert f"node 0 (node0): more than {why}" in log


def test_frames_delivered_ahead_of_their_receiver_count_as_in_flight(fabric):
    import threading
    f = fabric("nodes 2\ntopology p2p rate=1000000000 prop_ns=1000 mtu=65536\n")
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    b.report(0, NEVER)            # b idles at its grant and never reaches the arrivals

    def drain():
        try:
            while True:
                b.recv()
        except OSError:
            pass
    threading.Thread(target=drain, daemon=True).start()
    first = 3000
    assert flood(a, first, 100, dst=1, ready_ns=1000) == first
    a.report(1000, 2000)          # lets the fabric deliver them, far ahead of b's clock
    for _ in range(500):
        if len(b.delivered) == first:
            break
        time.sleep(0.01)
    assert len(b.delivered) == first
    sent = flood(a, 3000, 100, dst=1, ready_ns=2000)
    assert sent < 3000
    assert f"{MAX_IN_FLIGHT} frames in flight" in error_text(a)
