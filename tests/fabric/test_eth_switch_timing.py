"""The Ethernet switch (full duplex, store and forward; model: fabric/topo/ethernet_switch.c,
docs/fabric.md): exact arrival times, the inter-frame gap, an output shared by two
senders, a full output queue, broadcast, lookahead."""
import ethernet
from ethernet import times
from fakenode import cluster, finish, random_traffic, run_until_delivered

from retrolink import wire

# 100 Mb/s: a byte takes 80 ns; 500 ns a link; the default 5000 ns to forward
BYTE, P, SW, IFG = 80, 500, 5000, 960
SWITCH = f"ethernet_switch rate=12500000 prop_ns={P}"


def wire_ns(length: int) -> int:
    return ethernet.wire_ns(length, BYTE)


SHORT = wire_ns(20)                   # 5760
AT_OUTPUT = SHORT + P + SW            # a short frame ready at 0 is switched at 11260


def links(stats: dict, key: str) -> dict:
    return {link["name"].split(":")[1]: link[key] for link in stats["links"] if key in link}


def test_store_and_forward_is_two_links_and_the_switch_delay(fabric):
    f, n = cluster(fabric, 3, SWITCH)
    n[0].send(1000, 2, b"s" * 20, seq=0)
    n[1].send(0, 2, b"L" * 1000, seq=0)
    run_until_delivered(n, {2: 2})
    assert times(n[2]) == [1000 + 2 * (SHORT + P) + SW,            # 18520
                           2 * (wire_ns(1000) + P) + SW]            # 167920
    assert [d["src"] for d in n[2].delivered] == [0, 1]
    finish(f, n)


def test_frames_on_one_link_are_a_gap_apart(fabric):
    # the second frame leaves node 0 a gap after the first and reaches the output exactly
    # when the gap after the first ends there
    f, n = cluster(fabric, 2, SWITCH)
    n[0].send(0, 1, b"a" * 20, seq=0)
    n[0].send(0, 1, b"b" * 20, seq=1)
    run_until_delivered(n, {1: 2})
    second_out = (SHORT + IFG) + SHORT + P + SW                    # 17980
    assert second_out == AT_OUTPUT + SHORT + IFG
    assert times(n[1]) == [AT_OUTPUT + SHORT + P, second_out + SHORT + P]
    finish(f, n)


def test_two_senders_to_one_output_queue_there(fabric):
    f, n = cluster(fabric, 3, SWITCH)
    n[0].send(0, 2, b"a" * 1000)
    n[1].send(0, 2, b"b" * 1000)
    run_until_delivered(n, {2: 2})
    tx = wire_ns(1000)
    at_output = tx + P + SW                # both at 86460; node 0's first (event order)
    assert times(n[2]) == [at_output + tx + P, at_output + 2 * tx + IFG + P]
    assert [d["src"] for d in n[2].delivered] == [0, 1]
    stats = finish(f, n)
    assert links(stats, "queue_ns_max")["switch->node2"] == tx + IFG
    assert links(stats, "frames")["switch->node2"] == 2


def test_a_full_output_queue_drops_and_counts(fabric):
    # queue_frames=2: three short frames reach node 4's output at 11260: the first goes
    # on the wire, the second waits, the third is dropped. A frame reaching it at 17020,
    # as the first one's last bit leaves, finds one frame held and is queued.
    f, n = cluster(fabric, 5, f"{SWITCH} queue_frames=2")
    for src in range(3):
        n[src].send(0, 4, bytes([src]) * 20)
    n[3].send(SHORT, 4, b"\x03" * 20)
    run_until_delivered(n, {4: 3})
    second = AT_OUTPUT + SHORT + IFG
    fourth = second + SHORT + IFG
    assert times(n[4]) == [AT_OUTPUT + SHORT + P, second + SHORT + P, fourth + SHORT + P]
    assert [d["src"] for d in n[4].delivered] == [0, 1, 3]
    stats = finish(f, n)
    assert links(stats, "drops_queue_full")["switch->node4"] == 1
    assert stats["drops"]["queue full"] == 1


def test_broadcast_is_queued_at_every_other_output(fabric):
    # node 0's broadcast and node 1's frame for node 2 reach the switch together; at
    # node 2's output the broadcast is first (node 0's frame was ready first in event
    # order), node 1's waits behind it
    f, n = cluster(fabric, 3, SWITCH)
    n[0].send(0, wire.BROADCAST, b"arp" * 10)
    n[1].send(0, 2, b"u" * 20)
    run_until_delivered(n, {1: 1, 2: 2})
    bcast = AT_OUTPUT + SHORT + P
    assert [(d["time"], d["src"], d["dst"]) for d in n[1].delivered] == \
        [(bcast, 0, wire.BROADCAST)]
    assert [(d["time"], d["src"], d["dst"]) for d in n[2].delivered] == \
        [(bcast, 0, wire.BROADCAST), (AT_OUTPUT + SHORT + IFG + SHORT + P, 1, 2)]
    stats = finish(f, n)
    assert [x["frames_received"] for x in stats["nodes"]] == [0, 1, 2]


def test_a_switched_frame_bounds_the_grants_by_its_last_link(fabric):
    # node 0's empty frame is switched at 11260: node 1 is granted up to the arrival,
    # one link later (17520), not the whole path after that event
    ethernet.check_grant_stops_at_the_arrival(fabric, SWITCH, AT_OUTPUT,
                                              AT_OUTPUT + SHORT + P)


def test_busy_switch_accounts_for_every_copy_and_is_deterministic(fabric):
    config = f"{SWITCH} queue_frames=2"
    got, stats, sent = random_traffic(fabric, config, 1, broadcast=0.25)
    assert stats["drops"]["queue full"] > 0
    assert len(got) + stats["drops"]["queue full"] == sent
    assert stats["causality_violations"] == 0
    # each output sends its frames a gap apart
    for node in range(4):
        mine = [(t, len(p)) for t, _, _, p, r in got if r == node]
        for (t0, _), (t1, size) in zip(mine, mine[1:]):
            assert t1 - t0 >= IFG + wire_ns(size)
    again, _, _ = random_traffic(fabric, config, 1, broadcast=0.25)
    assert again == got
