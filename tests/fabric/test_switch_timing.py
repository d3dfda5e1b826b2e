"""The Fibre Channel style switch: exact store-and-forward timing, output contention and
buffer-to-buffer credits, against hand-computed values (model: fabric/topo/switch.c)."""
import json

from fakenode import FakeNode

from retrolink import wire

NEVER = 2**64 - 1
# 10 ns a byte; 100-byte frames + 36 overhead bytes = 1360 ns on every link;
# R_RDY = 4 bytes = 40 ns, then 1000 ns of propagation.
SWITCH = ("topology switch rate=100000000 prop_ns=1000 overhead_bytes=36 "
          "switch_delay_ns=500 rrdy_bytes=4 bb_credit={credit}\n")
TX, PROP, SW, RRDY = 1360, 1000, 500, 40


def run(fabric, nodes: int, credit: int, sends: list[tuple[int, int]], receivers: list[int]):
    """sends: (src, dst) pairs, all ready at t=0, in this order. Returns the arrival
    times per receiver."""
    f = fabric(f"nodes {nodes}\n" + SWITCH.format(credit=credit))
    n = [FakeNode(f.sock, i) for i in range(nodes)]
    for x in n:
        x.welcome()
    for seq, (src, dst) in enumerate(sends):
        n[src].send(0, dst, b"m" * 100, seq=seq)
    for i in range(nodes):
        if i not in receivers:
            n[i].report(0, NEVER)
    expected = {r: sum(1 for _, d in sends if d == r) for r in receivers}
    while any(len(n[r].delivered) < expected[r] for r in receivers):
        for r in receivers:
            n[r].sync(n[r].grant, NEVER)
    return {r: [d["time"] for d in n[r].delivered] for r in receivers}


def test_idle_switch_is_two_links_plus_switch_delay(fabric):
    got = run(fabric, 3, 1, [(0, 2)], [2])
    assert got[2] == [TX + PROP + SW + TX + PROP]           # 5220


def test_two_senders_to_one_output_queue_there(fabric):
    got = run(fabric, 3, 2, [(0, 2), (1, 2)], [2])
    at_switch = TX + PROP + SW                              # both at 2860; node 0 first
    assert got[2] == [at_switch + TX + PROP, at_switch + 2 * TX + PROP]


def test_two_senders_one_credit_wait_for_the_receivers_r_rdy(fabric):
    got = run(fabric, 3, 1, [(0, 2), (1, 2)], [2])
    first = TX + PROP + SW + TX + PROP                      # 5220
    credit_back = first + RRDY + PROP                       # node 2's buffer is free again
    assert got[2] == [first, credit_back + TX + PROP]


def test_credit_exhaustion_paces_the_sender(fabric):
    # bb_credit=1: the second frame leaves node 0 only when the switch's R_RDY comes back,
    # which is after the first frame has left the switch.
    got = run(fabric, 2, 1, [(0, 1)] * 3, [1])
    period = TX + PROP + SW + TX + RRDY + PROP              # 5260
    one_way = TX + PROP + SW + TX + PROP
    assert got[1] == [one_way, period + one_way, 2 * period + one_way]


def test_enough_credit_streams_at_link_rate(fabric):
    got = run(fabric, 2, 3, [(0, 1)] * 3, [1])
    one_way = TX + PROP + SW + TX + PROP
    assert got[1] == [one_way, one_way + TX, one_way + 2 * TX]


def test_oversize_frame_is_dropped_and_counted(fabric):
    f = fabric("nodes 2\ntopology switch rate=100000000 mtu=64\n")
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.send(0, 1, b"x" * 65)
    a.send(10, 1, b"y" * 64)
    a.report(0, NEVER)
    while not b.delivered:
        b.sync(b.grant, NEVER)
    assert b.delivered[0]["payload"] == b"y" * 64
    a.s.sendall(wire.bye(0, 0))
    b.s.sendall(wire.bye(1, 0))
    f.proc.wait(timeout=10)
    assert "oversize" in f.log.read_text()
    assert json.loads(f.stats.read_text())["drops"]["oversize"] == 1


def test_a_pending_switch_event_bounds_the_grants_by_its_last_hop(fabric):
    # Node 0's frame (empty: 360 ns on a link) reaches the switch at 1860 = 360 + 1000 +
    # 500, and node 0 keeps promising it may send at 1860, so that event stays pending.
    # It arrives at node 1 one link later, 1860 + 360 + 1000 = 3220, which is shorter than
    # the whole path (L = 3220 from ready, 5080 from the event): node 1 may be granted up
    # to the arrival, not past it.
    f = fabric("nodes 2\n" + SWITCH.format(credit=1))
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.send(0, 1, b"")
    a.report(0, 1860)
    assert b.sync(0, NEVER) == 3220
    while a.grant < 1860:  # node 0 may not report 1860 before it is granted that far
        a.wait_grant()
    a.report(1860, NEVER)
    while not b.delivered:
        b.sync(b.grant, NEVER)
    assert b.delivered[0]["time"] == 3220
    a.s.sendall(wire.bye(0, 3220))
    b.s.sendall(wire.bye(1, 3220))
    f.proc.wait(timeout=10)
    assert json.loads(f.stats.read_text())["causality_violations"] == 0
