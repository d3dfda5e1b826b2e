"""Several networks in one fabric (docs/fabric.md, "Networks"): each its own topology over
its own stations, one virtual clock. Frames stay on their network, each network keeps its
exact timings whatever the other carries, a node's grant respects every network it is on,
and a node whose ports are not the configuration's is refused, naming node and network."""
import pytest
from fakenode import NEVER, FakeNode, check_config, finish, run_until, run_until_delivered

from retrolink import registry, wire

RING = "topology token_ring rate=12500000 station_delay_ns=1000 overhead_bytes=28\n"
LAN = "topology p2p rate=125000000 prop_ns=500 overhead_bytes=24\n"
# a token ring on all three nodes, a point-to-point Ethernet link between nodes 0 and 2
TWO_NETS = ("nodes 3\nnetwork 0 name=ring protocol=sx\n" + RING +
            "network 1 name=lan stations=0,2 protocol=ethernet\n" + LAN)
PORTS = {0: [(0, "sx"), (1, "ethernet")], 1: [(0, "sx")], 2: [(0, "sx"), (1, "ethernet")]}


def two_nets(fabric):
    f = fabric(TWO_NETS)
    n = [FakeNode(f.sock, i, ports=PORTS[i]) for i in range(3)]
    for x in n:
        x.welcome()
    return f, n


def lan_arrival(ready, size):
    """p2p: ceil((size + overhead) / rate) + prop_ns on an idle link."""
    return ready + -(-(size + 24) * 10**9 // 125_000_000) + 500


def ring_traffic(nodes, net=0):
    """The same ring frames in any fabric: 1 -> 0 and 2 -> 1 at 0 ns, 0 -> 2 at 40 us."""
    nodes[1].send(0, 0, b"r" * 300, seq=0, net=net)
    nodes[2].send(0, 1, b"s" * 700, seq=0, net=net)
    nodes[0].send(40_000, 2, b"t" * 100, seq=0, net=net)


def arrivals(node, net):
    return [(m["time"], m["src"], len(m["payload"])) for m in node.delivered if m["net"] == net]


def test_frames_stay_on_their_network_at_exact_times(fabric):
    f, n = two_nets(fabric)
    ring_traffic(n)
    n[0].send(1000, 2, b"e" * 1000, seq=1, net=1)
    n[2].send(3000, 0, b"f" * 64, seq=1, net=1)
    run_until_delivered(n, {0: 2, 1: 1, 2: 2})
    # the lan: closed form, and only between its two stations
    assert arrivals(n[2], 1) == [(lan_arrival(1000, 1000), 0, 1000)]
    assert arrivals(n[0], 1) == [(lan_arrival(3000, 64), 2, 64)]
    assert arrivals(n[1], 1) == []
    stats = finish(f, n)
    nets = {x["name"]: x for x in stats["networks"]}
    assert nets["lan"]["stations"] == [0, 2] and nets["ring"]["stations"] == [0, 1, 2]
    assert [l["frames"] for l in nets["lan"]["links"]] == [1, 1]
    # the ring: exactly as on a fabric that has the ring alone (the first one has ended:
    # this one listens on the same socket)
    ring_only = fabric("nodes 3\n" + RING)
    r = [FakeNode(ring_only.sock, i) for i in range(3)]
    for x in r:
        x.welcome()
    ring_traffic(r)
    run_until_delivered(r, {0: 1, 1: 1, 2: 1})
    for i in range(3):
        assert arrivals(n[i], 0) == arrivals(r[i], 0), i


def test_a_broadcast_reaches_the_stations_of_its_network_only(fabric):
    f, n = two_nets(fabric)
    n[0].send(0, wire.BROADCAST, b"arp", net=1)
    n[1].send(0, wire.BROADCAST, b"all", net=0)
    run_until_delivered(n, {0: 1, 2: 2})
    run_until(n, [0, 1, 2], lambda: min(x.grant for x in n) == NEVER)
    got = {i: sorted((m["net"], m["src"]) for m in n[i].delivered) for i in range(3)}
    assert got == {0: [(0, 1)], 1: [], 2: [(0, 1), (1, 0)]}


def test_a_frame_for_a_node_off_the_network_is_dropped(fabric):
    f, n = two_nets(fabric)
    n[0].send(0, 1, b"x", net=1)            # node 1 has no lan port
    run_until(n, [0, 1, 2], lambda: min(x.grant for x in n) == NEVER)
    stats = finish(f, n)
    assert stats["drops"]["unknown destination"] == 1
    assert not any(x.delivered for x in n)


def test_a_frame_on_a_network_the_node_did_not_attach_is_a_protocol_error(fabric):
    f, n = two_nets(fabric)
    n[1].send(0, 0, b"x", net=1)
    with pytest.raises(ConnectionError, match="network 1, which this node did not attach"):
        n[1].wait_grant()


def test_a_node_on_two_networks_gets_the_least_lookahead(fabric):
    # node 0 is on a 5000 ns link to node 1 and a 2000 ns link to node 2; every node
    # promises "now" (0) at the start, so each grant is its networks' least latency
    p2p = "topology p2p rate=1000000000 prop_ns={}\n"
    f = fabric("nodes 3\nnetwork 0 stations=0,1\n" + p2p.format(5000) +
               "network 1 stations=0,2\n" + p2p.format(2000))
    n = [FakeNode(f.sock, 0, ports=[(0, "any"), (1, "any")]),
         FakeNode(f.sock, 1, ports=[(0, "any")]), FakeNode(f.sock, 2, ports=[(1, "any")])]
    assert [x.welcome() for x in n] == [2000, 5000, 2000]
    # node 2 will send nothing: node 0 is then held by node 1 only (and node 2's reaction
    # to anything node 0 may send it)
    n[2].report(0, NEVER)
    n[0].sync(0, NEVER)
    assert n[0].grant == 5000


@pytest.mark.parametrize("node,ports,why", [
    (1, [(0, "sx"), (1, "ethernet")],
     "node 1 attaches network 1 (lan), which the configuration does not put it on"),
    (0, [(0, "sx")], "node 0 does not attach network 1 (lan), which the configuration puts it on"),
    (0, [(0, "sx"), (1, "sx")],
     "node 0 attaches network 1 (lan) with a sx port, but that network carries ethernet"),
    (2, [(0, "sx"), (0, "sx")], "node 2 attaches network 0 (ring) twice"),
    (2, [(0, "sx"), (3, "sx")], "node 2 attaches network 3, but the configuration has networks 0..1"),
    (0, None, "node 0 attaches no network"),
])
def test_a_node_attaching_the_wrong_networks_is_refused(fabric, node, ports, why):
    f = fabric(TWO_NETS)
    wrong = FakeNode(f.sock, node, ports=ports)
    m = wrong.recv()
    assert m["type"] == wire.ERROR and why in m["text"], m
    # its id is free again: with the right ports, the cluster starts
    n = [FakeNode(f.sock, i, ports=PORTS[i]) for i in range(3)]
    for x in n:
        x.welcome()
    assert f"refusing node {node}" in f.stop() and why in f.log.read_text()


def test_check_names_the_network_whose_lookahead_is_too_short(fabric_binary, tmp_path):
    conf = ("nodes 3\nnode 0 granularity_ns=8\nnode 2 granularity_ns=8\n"
            "network 0 name=ring\n" + RING +
            "network 1 name=lan stations=0,2\ntopology p2p rate=1000000000\n")
    r = check_config(fabric_binary, tmp_path, conf)
    assert r.returncode == 2
    assert "network 1 (lan)" in r.stderr and "node 0's instruction time (8 ns)" in r.stderr
    ok = check_config(fabric_binary, tmp_path, conf.replace("rate=1000000000", "rate=1000000000 prop_ns=100"))
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("config,expect", [
    ("network 1\n" + LAN, "expected the next id, 0"),
    ("network 0 stations=0,5\n" + RING, "distinct node ids below 3"),
    ("network 0 stations=0,0\n" + RING, "distinct node ids below 3"),
    ("network 0 protocol=atm\n" + RING, "protocol 'atm'"),
    ("network 0 colour=red\n" + RING, "unknown key 'colour'"),
    ("network 0\n" + RING + RING, "network 0 already has a topology"),
    ("network 0\n" + RING + "network 1 stations=0,2\n", "network 1 has no 'topology' line"),
    ("network 0 stations=0,1\n" + LAN + "network 1 stations=0,1,2\n" + LAN,
     "exactly 2 stations (has 3)"),
    ("synthetic 1 dst=0 size=1 interval_ns=1 count=1 net=1\nnetwork 0\n" + RING +
     "network 1 stations=0,2\n" + LAN, "synthetic 1: it and its dst 0 must be stations"),
])
def test_network_config_errors(fabric_binary, tmp_path, config, expect):
    r = check_config(fabric_binary, tmp_path, "nodes 3\n" + config)
    assert r.returncode == 2 and expect in r.stderr, r.stderr


def test_the_fabric_knows_the_protocols_of_boards_def(fabric_binary, tmp_path):
    """The fabric's protocol names come from include/retrolink/boards.def (as wire.h's
    enum does): it takes every board's, and its error lists exactly them, after "any"."""
    names = registry.board_names()
    for name in names:
        r = check_config(fabric_binary, tmp_path, f"nodes 3\nnetwork 0 protocol={name}\n" + RING)
        assert r.returncode == 0, (name, r.stderr)
    r = check_config(fabric_binary, tmp_path, "nodes 3\nnetwork 0 protocol=atm\n" + RING)
    assert r.returncode == 2
    assert f"(known: {', '.join(('any',) + names)})" in r.stderr, r.stderr
