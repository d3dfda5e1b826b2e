"""Grants, bad input, departures and determinism."""
import json
import subprocess

import pytest
from fakenode import FakeNode

from retrolink import wire

NEVER = 2**64 - 1
P2P = "nodes 2\ntopology p2p rate=12500000 prop_ns=5000 overhead_bytes=28\n"


def test_a_busy_node_is_granted_up_to_the_idle_nodes_promise_plus_latency(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0, reaction_ns=300_000), FakeNode(f.sock, 1, reaction_ns=300_000)
    a.welcome(), b.welcome()
    L = 2240 + 5000                   # 28 bytes at 12.5 MB/s + propagation
    b.s.sendall(wire.sync(1, 0, 7_000_000))   # b is idle until 7 ms
    # a sends nothing: the earliest anything reaches a is b's promise + L
    assert a.sync(0, NEVER) == 7_000_000 + L


def test_a_grant_allows_for_the_peer_reacting_to_this_nodes_own_frames(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0, reaction_ns=300_000), FakeNode(f.sock, 1, reaction_ns=300_000)
    a.welcome(), b.welcome()
    L = 7240
    b.s.sendall(wire.sync(1, 0, 7_000_000))
    # a may send at 100: it reaches b at 100 + L, b may answer 300 us later
    assert a.sync(0, 100) == 100 + L + 300_000 + L


def test_grants_leave_room_for_instruction_overshoot(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0, granularity_ns=8), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    b.s.sendall(wire.sync(1, 0, 1_000_000))
    assert a.sync(0, NEVER) == 1_000_000 + 7240 - 7


@pytest.mark.parametrize("bad,why", [
    (lambda n: b"\x00" * 10, "shorter than a header"),
    (lambda n: b"XXXX" + wire.sync(n, 5, 9)[4:], "bad magic"),
    (lambda n: wire.sync(n, 5, 9)[:-1], "length field 32 but 31 bytes"),
    (lambda n: wire.sync(n, 5, 4), "promise earlier"),
    (lambda n: wire.sync(n + 1, 5, 9), "node field"),
    (lambda n: wire.frame(n, 100, n, b"self"), "addressed to itself"),
    (lambda n: wire.hello(n), "second HELLO"),
    (lambda n: wire.sync(n, 2**62, 2**62 + 1), "outside"),
])
def test_malformed_message_disconnects_only_that_node(fabric, bad, why):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    b.raw(bad(1))
    with pytest.raises(ConnectionError, match=why):
        b.wait_grant()
    # the other node hears that its peer is down, and keeps getting grants
    assert a.sync(0, 100) == NEVER
    assert any(l["peer"] == 1 and l["up"] == 0 for l in a.links)
    assert f"node 1 (node1): " in f.stop()


def test_a_vanished_node_is_link_down_for_the_others(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    b.sync(0, 50_000)
    b.close()
    assert a.sync(0, 100) == NEVER
    assert a.links and a.links[0]["peer"] == 1 and a.links[0]["up"] == 0
    assert "disconnected without BYE" in f.stop()


def test_frames_to_unknown_or_departed_nodes_are_counted_drops(fabric, tmp_path):
    trace = tmp_path / "trace.txt"
    f = fabric(f"nodes 3\ntopology token_ring rate=12500000 station_delay_ns=1000\ntrace {trace}\n")
    n = [FakeNode(f.sock, i) for i in range(3)]
    for x in n:
        x.welcome()
    n[2].s.sendall(wire.bye(2, 0))
    n[0].send(10, 7, b"?")        # no node 7
    n[0].send(20, 2, b"!")        # node 2 left
    n[0].report(0, NEVER)
    n[1].report(0, NEVER)
    n[0].s.sendall(wire.bye(0, 0))
    n[1].s.sendall(wire.bye(1, 0))
    f.proc.wait(timeout=10)
    stats = json.loads(f.stats.read_text())
    assert stats["drops"] == {"unknown destination": 1, "destination down": 1, "oversize": 0,
                              "broadcast unsupported": 0, "excess collisions": 0,
                              "queue full": 0}
    drops = [l.split()[1] for l in trace.read_text().splitlines() if " drop:" in l]
    assert drops == ["drop:unknown_destination", "drop:destination_down"]
    # the lock-step exchanges each node needed: one SYNC from 0 and 1, none from 2
    assert [nd["syncs"] for nd in stats["nodes"]] == [1, 1, 0]


def scripted_run(fabric_start, order):
    f = fabric_start("nodes 3\ntopology token_ring rate=12500000 station_delay_ns=1000 "
                     "overhead_bytes=28\n")
    n = [FakeNode(f.sock, i) for i in range(3)]
    for x in n:
        x.welcome()
    for i in order:               # the host order of the senders' messages varies
        n[i].send(1000 * (i + 1), 2, bytes([i]) * 500, seq=0)
        n[i].send(1000 * (i + 1), 2, bytes([i]) * 100, seq=1)
        n[i].report(0, NEVER)
    while len(n[2].delivered) < 4:
        n[2].sync(n[2].grant, NEVER)
    out = [(d["time"], d["src"], d["len"], d["seq"]) for d in n[2].delivered]
    for x in n:
        x.close()
    f.stop()
    return out


def test_deterministic_whatever_the_host_order(fabric, tmp_path):
    first = scripted_run(fabric, [0, 1])
    second = scripted_run(fabric, [1, 0])
    assert first == second
    assert len({t for t, *_ in first}) == 4


@pytest.mark.parametrize("config,expect", [
    ("nodes 2\ntopology p2p rate=1\nbogus 1\n", "unknown directive"),
    ("nodes 2\ntopology p2p rate=fast\n", "rate=fast: expected a whole number"),
    ("nodes 2\ntopology p2p rate=1 colour=red\n", "no parameter 'colour'"),
    ("nodes 2\ntopology p2p rate=1 prop_ns=18446744073709551000\n", "at most 10^12"),
    ("nodes 2\nsynthetic 1 dst=0 size=1 interval_ns=1 count=1 start_ns=18446744073709551000\n"
     "topology p2p rate=1\n", "below 2^63"),
    ("nodes 2\ntopology mesh rate=1\n", "unknown topology 'mesh'"),
    ("nodes 2\n", "needs 'socket', 'nodes' and 'topology'"),
    ("nodes 3\ntopology p2p rate=1\n", "exactly 2 stations"),
    ("nodes 2\nsynthetic 1 dst=0 size=1\ntopology p2p rate=1\n", "synthetic 1: needs"),
])
def test_config_errors_name_the_line_and_exit_2(artifacts, tmp_path, config, expect):
    conf = tmp_path / "bad.conf"
    conf.write_text(f"socket {tmp_path}/s\n" + config)
    r = subprocess.run([str(artifacts.fabric), str(conf)], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 2
    assert expect in r.stderr and str(conf) in r.stderr
