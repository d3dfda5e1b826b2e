"""RL_NODE_BROADCAST on the older topologies: p2p delivers it to the other end, the token
ring to every other station at its own distance; the Fibre Channel switch and the
multistage network drop it and count "broadcast unsupported" (docs/fabric.md)."""
from fakenode import cluster, finish, run_until_delivered

from retrolink import wire


def test_p2p_delivers_a_broadcast_to_the_other_end(fabric):
    f, n = cluster(fabric, 2, "p2p rate=100000000 prop_ns=200 overhead_bytes=0")
    n[1].send(1000, wire.BROADCAST, b"b" * 100)
    run_until_delivered(n, {0: 1})
    d = n[0].delivered[0]
    assert (d["time"], d["src"], d["dst"]) == (1000 + 1000 + 200, 1, wire.BROADCAST)
    assert d["payload"] == b"b" * 100
    stats = finish(f, n)
    assert sum(stats["drops"].values()) == 0


def test_token_ring_broadcast_reaches_every_station_at_its_distance(fabric):
    f, n = cluster(fabric, 3, "token_ring rate=1000000000 station_delay_ns=1000 token_bytes=11 "
                 "overhead_bytes=20 thtt_ns=0")
    hop, tx = 1011, 80 + 20
    n[1].send(0, wire.BROADCAST, b"p" * 80)
    run_until_delivered(n, {0: 1, 2: 1})
    seized = 2 * hop                  # the token leaves station 2 at t=0
    assert [(d["time"], d["src"], d["dst"]) for d in n[2].delivered] == \
        [(seized + tx + 1000, 1, wire.BROADCAST)]
    assert [(d["time"], d["src"], d["dst"]) for d in n[0].delivered] == \
        [(seized + tx + 2 * 1000, 1, wire.BROADCAST)]
    stats = finish(f, n)
    assert [x["frames_received"] for x in stats["nodes"]] == [1, 0, 1]


def refused(fabric, topology: str):
    f, n = cluster(fabric, 2, topology)
    n[0].send(0, wire.BROADCAST, b"x" * 10, seq=0)
    n[0].send(0, 5, b"y" * 10, seq=1)                 # no such node
    n[0].send(0, 1, b"z" * 10, seq=2)
    run_until_delivered(n, {1: 1})
    assert [d["payload"] for d in n[1].delivered] == [b"z" * 10]
    assert n[1].delivered[0]["dst"] == 1
    drops = finish(f, n)["drops"]
    assert drops["broadcast unsupported"] == 1 and drops["unknown destination"] == 1
    assert "broadcast unsupported" in f.log.read_text()


def test_fibre_channel_switch_drops_a_broadcast_and_counts_it(fabric):
    refused(fabric, "switch rate=100000000 prop_ns=1000")


def test_multistage_network_drops_a_broadcast_and_counts_it(fabric):
    refused(fabric, "min k=2 stages=1 rate=100000000 stage_delay_ns=250")
