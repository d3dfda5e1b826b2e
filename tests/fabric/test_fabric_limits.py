"""Input the fabric must refuse without harm to the others: times near the end of the
64-bit range (they would wrap when the fabric adds a latency)."""
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
