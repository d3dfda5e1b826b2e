"""Exact frame timing of the fabric's topologies, against hand-computed values."""
import json
import math

from fakenode import FakeNode

from retrolink import wire

NEVER = 2**64 - 1


def test_p2p_arrival_is_size_over_rate_plus_latency(fabric):
    # 1000 bytes + 28 overhead at 12.5 MB/s = 82240 ns; + 5000 ns propagation
    f = fabric("nodes 2\ntopology p2p rate=12500000 prop_ns=5000 overhead_bytes=28 mtu=4500\n")
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.send(1_000_000, 1, b"x" * 1000)
    a.report(0, NEVER)                    # a will send nothing more
    while not b.delivered:
        b.sync(b.grant, NEVER)
    d = b.delivered[0]
    assert d["time"] == 1_000_000 + 82_240 + 5_000
    assert d["src"] == 0 and d["payload"] == b"x" * 1000


def test_p2p_back_to_back_frames_queue_fifo(fabric):
    f = fabric("nodes 2\ntopology p2p rate=1000000 prop_ns=0\n")   # 1 byte per us
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.send(0, 1, b"a" * 100, seq=0)
    a.send(0, 1, b"b" * 100, seq=1)
    a.report(0, NEVER)
    while len(b.delivered) < 2:
        b.sync(b.grant, NEVER)
    assert [d["time"] for d in b.delivered] == [100_000, 200_000]


def test_token_ring_token_wait_and_hops(fabric):
    # 3 stations; hop = 1000 ns station delay + 11 token bytes at 1 B/ns... rate 1e9 B/s
    f = fabric("nodes 3\ntopology token_ring rate=1000000000 station_delay_ns=1000 "
               "token_bytes=11 overhead_bytes=20 thtt_ns=0\n")
    n = [FakeNode(f.sock, i) for i in range(3)]
    for x in n:
        x.welcome()
    hop = 1000 + 11
    # the token leaves station 2 at t=0: reaches station 1 after 2 hops
    n[1].send(0, 0, b"p" * 80)
    n[1].report(0, NEVER)
    n[2].report(0, NEVER)
    while not n[0].delivered:
        n[0].sync(n[0].grant, NEVER)
    tx = 80 + 20                      # ns at 1e9 B/s
    hops_1_to_0 = 2                   # 1 -> 2 -> 0
    assert n[0].delivered[0]["time"] == 2 * hop + tx + hops_1_to_0 * 1000


def test_token_ring_contention_one_transmitter_at_a_time(fabric):
    f = fabric("nodes 3\ntopology token_ring rate=1000000000 station_delay_ns=1000 "
               "token_bytes=11 overhead_bytes=0 thtt_ns=0\n")
    n = [FakeNode(f.sock, i) for i in range(3)]
    for x in n:
        x.welcome()
    hop = 1011
    n[0].send(0, 2, b"a" * 4000)      # 4000 ns on the wire (mtu 4500)
    n[1].send(0, 2, b"b" * 100)
    n[0].report(0, NEVER)
    n[1].report(0, NEVER)
    while len(n[2].delivered) < 2:
        n[2].sync(n[2].grant, NEVER)
    t0 = hop                          # station 0 seizes the token after one hop
    first = t0 + 4000 + 2 * 1000      # 0 -> 1 -> 2
    released = t0 + 4000              # early token release at the end of the frame
    second = released + hop + 100 + 1 * 1000
    assert [d["time"] for d in n[2].delivered] == [first, second]


def two_station_ring(fabric, thtt_ns: int):
    """Stations 0 and 1 at 1 byte/ns, no frame overhead; hop = 1011 ns."""
    f = fabric("nodes 2\ntopology token_ring rate=1000000000 station_delay_ns=1000 "
               f"token_bytes=11 overhead_bytes=0 thtt_ns={thtt_ns}\n")
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    return a, b


def late_frame_arrivals(a, b, hop):
    """A 4000-byte frame, and a 100-byte one queued while the first is on the wire."""
    a.send(0, 1, b"a" * 4000, seq=0)          # on the wire from hop to hop + 4000
    a.send(hop + 3000, 1, b"b" * 100, seq=1)
    a.report(hop + 3000, NEVER)
    while len(b.delivered) < 2:
        b.sync(b.grant, NEVER)
    return [d["time"] for d in b.delivered]


def test_token_ring_holder_sends_until_its_holding_time_runs_out(fabric):
    # thtt 2500 ns: frames of 1000 ns start at +0, +1000, +2000 (each starts before the
    # holding time is over); the fourth waits for the token's next visit
    a, b = two_station_ring(fabric, 2500)
    hop = 1011
    for i in range(4):
        a.send(0, 1, b"x" * 1000, seq=i)
    a.report(0, NEVER)
    while len(b.delivered) < 4:
        b.sync(b.grant, NEVER)
    seized = hop                      # the token leaves station 1 at t=0
    released = seized + 3000
    again = released + 2 * hop        # a full turn of the 2-station ring
    assert [d["time"] for d in b.delivered] == [seized + 2000, seized + 3000, seized + 4000,
                                                again + 2000]


def test_token_ring_frame_queued_during_the_hold_follows_at_once(fabric):
    # FDDI: the holder sends a frame it queues while transmitting, back to back
    a, b = two_station_ring(fabric, 1000000)
    hop = 1011
    assert late_frame_arrivals(a, b, hop) == [hop + 4000 + 1000, hop + 4100 + 1000]


def test_token_ring_with_one_frame_per_visit_queues_the_late_frame(fabric):
    # 802.5 style (thtt 0): the late frame waits for the token's next visit
    a, b = two_station_ring(fabric, 0)
    hop = 1011
    again = hop + 4000 + 2 * hop
    assert late_frame_arrivals(a, b, hop) == [hop + 4000 + 1000, again + 100 + 1000]


def test_synthetic_node_traffic_arrives_at_exact_times(fabric):
    f = fabric("nodes 2\nsynthetic 1 name=gen dst=0 size=100 interval_ns=50000 start_ns=1000 "
               "count=3\ntopology p2p rate=100000000 prop_ns=200\n")
    a = FakeNode(f.sock, 0)
    a.welcome()
    while len(a.delivered) < 3:
        a.sync(a.grant, NEVER)
    tx = math.ceil(100 * 1e9 / 1e8)
    assert [d["time"] for d in a.delivered] == [1000 + tx + 200, 51000 + tx + 200,
                                                 101000 + tx + 200]


def test_p2p_mtu_defaults_to_the_machine_schemas_4500(fabric):
    f = fabric("nodes 2\ntopology p2p rate=12500000 prop_ns=5000\n")
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.send(1000, 1, b"x" * 4501, seq=0)   # over the default MTU: dropped
    a.send(2000, 1, b"y" * 4500, seq=1)
    a.report(0, NEVER)
    while not b.delivered:
        b.sync(b.grant, NEVER)
    assert [d["payload"][:1] for d in b.delivered] == [b"y"]
    a.s.sendall(wire.bye(0, 0))
    b.s.sendall(wire.bye(1, b.grant))
    f.proc.wait(timeout=10)
    assert json.loads(f.stats.read_text())["drops"]["oversize"] == 1
