"""The Ethernet hub (half-duplex CSMA/CD, model: fabric/topo/hub.c, docs/fabric.md):
exact arrival times from the formulas, collisions and the seeded backoff recomputed here,
deferral, the inter-frame gap, excess collisions, a full queue, broadcast, lookahead."""
import ethernet
from ethernet import times
from fakenode import cluster, finish, random_traffic, run_until, run_until_delivered

from retrolink import wire

NEVER = wire.NEVER

# 10 Mb/s: a byte takes 800 ns, a bit 100 ns; 1000 ns between any two stations
BYTE, P = 800, 1000
PREAMBLE, IFG, SLOT, JAM = 8 * BYTE, 96 * 100, 512 * 100, 32 * 100
HUB = f"hub rate=1250000 prop_ns={P}"


def wire_ns(length: int) -> int:
    return ethernet.wire_ns(length, BYTE)


SHORT = wire_ns(20)                    # 72 bytes on the wire: 57600 ns


def splitmix64(state: int) -> tuple[int, int]:
    """The backoff generator (docs/fabric.md): the new state and the number drawn."""
    mask = 2**64 - 1
    state = (state + 0x9E3779B97F4A7C15) & mask
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return state, z ^ (z >> 31)


def backoffs(seed: int, station: int, collisions: int, limit=10) -> list[int]:
    """The slots a station waits after its 1st, 2nd, ... collision of one frame."""
    state, out = seed * 256 + station, []
    for n in range(1, collisions + 1):
        state, z = splitmix64(state)
        out.append(z & (2 ** min(n, limit) - 1))
    return out


def first_seed(want) -> int:
    return next(s for s in range(10000) if want(s))


def stations(stats: dict, key: str) -> list[int]:
    return [link[key] for link in stats["links"]]


def test_generator_matches_the_reference_splitmix64():
    # the published first output of splitmix64 seeded with 0 (Vigna's reference code)
    assert splitmix64(0)[1] == 0xE220A8397B1DCDAF


def test_one_frame_on_an_idle_hub_is_preamble_padded_frame_fcs_then_prop(fabric):
    f, n = cluster(fabric, 3, HUB)
    n[0].send(5000, 1, b"s" * 20, seq=0)             # padded to 60 + 4 FCS
    n[0].send(100_000, 2, b"m" * 61, seq=1)          # 65 bytes with FCS: not padded
    n[0].send(200_000, 1, b"L" * 1514, seq=2)        # the largest frame
    run_until_delivered(n, {1: 2, 2: 1})
    assert times(n[1]) == [5000 + 72 * BYTE + P, 200_000 + (8 + 1518) * BYTE + P]
    assert times(n[2]) == [100_000 + (8 + 65) * BYTE + P]   # only its own frame
    assert n[1].delivered[0]["dst"] == 1 and n[1].delivered[0]["payload"] == b"s" * 20
    stats = finish(f, n)
    assert stations(stats, "frames") == [3, 0, 0]
    assert stations(stats, "collisions") == [0, 0, 0]


def test_fast_ethernet_times(fabric):
    f, n = cluster(fabric, 2, "hub rate=12500000 prop_ns=1500")
    n[0].send(0, 1, b"x" * 20)
    run_until_delivered(n, {1: 1})
    assert times(n[1]) == [72 * 80 + 1500]
    finish(f, n)


def test_a_station_defers_to_carrier(fabric):
    # node 0's 1000-byte frame is on the wire from 0 to 809600 ns; its carrier reaches
    # node 1 at 1000 (exactly when node 1's frame is ready: it defers) and leaves at
    # 810600; node 1 then waits the gap
    f, n = cluster(fabric, 2, HUB)
    n[0].send(0, 1, b"a" * 1000)
    n[1].send(P, 0, b"b" * 20)
    run_until_delivered(n, {0: 1, 1: 1})
    end0 = wire_ns(1000)
    assert times(n[1]) == [end0 + P]
    start1 = end0 + P + IFG
    assert times(n[0]) == [start1 + SHORT + P]
    stats = finish(f, n)
    assert stations(stats, "deferrals") == [0, 1]
    assert stations(stats, "collisions") == [0, 0]


def test_inter_frame_gap_after_carrier_and_between_own_frames(fabric):
    # node 0 sends two frames back to back: the second a gap after the first's end.
    # Node 1's frame is ready inside the gap after node 0's first carrier: it waits for
    # the gap's end, when node 0's second frame has just been heard (it started at 67200,
    # heard at 68200 = the gap's end): node 1 defers again, to the second one's end.
    f, n = cluster(fabric, 2, HUB)
    n[0].send(0, 1, b"a" * 20, seq=0)
    n[0].send(0, 1, b"b" * 20, seq=1)
    n[1].send(SHORT + P + 5000, 0, b"c" * 20)
    run_until_delivered(n, {0: 1, 1: 2})
    second = SHORT + IFG                             # 67200: its own gap, no deferral
    assert times(n[1]) == [SHORT + P, second + SHORT + P]
    assert times(n[0]) == [second + SHORT + P + IFG + SHORT + P]
    stats = finish(f, n)
    assert stations(stats, "deferrals") == [0, 1]


def test_a_station_ready_in_the_gap_alone_waits_for_its_end(fabric):
    f, n = cluster(fabric, 2, HUB)
    n[0].send(0, 1, b"a" * 20)
    n[1].send(SHORT + P + 5000, 0, b"c" * 20)        # carrier left node 1 at 58600
    run_until_delivered(n, {0: 1, 1: 1})
    assert times(n[0]) == [SHORT + P + IFG + SHORT + P]
    finish(f, n)


def test_simultaneous_frames_collide_and_back_off_by_the_seeded_generator(fabric):
    # both start at 0, each hears the other at 1000 (within its preamble): preamble
    # finished, jam, end at 9600. Station 0 draws 0 slots, station 1 one slot.
    seed = first_seed(lambda s: backoffs(s, 0, 1) == [0] and backoffs(s, 1, 1) == [1])
    f, n = cluster(fabric, 2, f"{HUB} seed={seed}")
    n[0].send(0, 1, b"a" * 20)
    n[1].send(0, 0, b"b" * 20)
    run_until_delivered(n, {0: 1, 1: 1})
    end = PREAMBLE + JAM                             # 9600
    start0 = end + P + IFG                           # defers to station 1's jam: 20200
    assert times(n[1]) == [start0 + SHORT + P]
    retry1 = end + 1 * SLOT                          # 60800, station 0's frame is heard
    start1 = max(retry1, start0 + SHORT + P + IFG)   # 88400
    assert times(n[0]) == [start1 + SHORT + P]
    stats = finish(f, n)
    assert stations(stats, "collisions") == [1, 1]
    assert stations(stats, "deferrals") == [1, 1]
    assert stations(stats, "frames") == [1, 1]


def test_equal_draws_collide_again_with_a_wider_backoff(fabric):
    # first collision: equal draws, so both try again at the same time and collide
    # again; second: station 0 draws 0 of [0, 3], station 1 more
    def wanted(s):
        b0, b1 = backoffs(s, 0, 2), backoffs(s, 1, 2)
        return b0[0] == b1[0] and b0[1] == 0 and b1[1] > 0
    seed = first_seed(wanted)
    r, r1 = backoffs(seed, 0, 1)[0], backoffs(seed, 1, 2)[1]
    f, n = cluster(fabric, 2, f"{HUB} seed={seed}")
    n[0].send(0, 1, b"a" * 20)
    n[1].send(0, 0, b"b" * 20)
    run_until_delivered(n, {0: 1, 1: 1})
    end1 = PREAMBLE + JAM
    again = max(end1 + r * SLOT, end1 + P + IFG)     # both start here and collide
    end2 = again + PREAMBLE + JAM
    start0 = end2 + P + IFG
    assert times(n[1]) == [start0 + SHORT + P]
    start1 = max(end2 + r1 * SLOT, start0 + SHORT + P + IFG)
    assert times(n[0]) == [start1 + SHORT + P]
    assert stations(finish(f, n), "collisions") == [2, 2]


def test_a_start_less_than_prop_after_another_collides(fabric):
    # station 1 starts 999 ns after station 0, before station 0's signal reaches it.
    # Station 0 hears it at 1999, station 1 hears station 0 at 1000; each finishes its
    # preamble, then jams.
    seed = first_seed(lambda s: backoffs(s, 0, 1) == [0] and backoffs(s, 1, 1) == [1])
    f, n = cluster(fabric, 2, f"{HUB} seed={seed}")
    n[0].send(0, 1, b"a" * 20)
    n[1].send(P - 1, 0, b"b" * 20)
    run_until_delivered(n, {0: 1, 1: 1})
    end0, end1 = PREAMBLE + JAM, P - 1 + PREAMBLE + JAM   # 9600, 10599
    start0 = max(end0 + IFG, end1 + P + IFG)               # 21199
    assert times(n[1]) == [start0 + SHORT + P]
    start1 = max(end1 + SLOT, start0 + SHORT + P + IFG)    # 89399
    assert times(n[0]) == [start1 + SHORT + P]
    assert stations(finish(f, n), "collisions") == [1, 1]


def test_sixteen_collisions_drop_the_frame(fabric):
    # backoff_limit=0: every backoff is 0 slots, so two stations collide every round
    # (each defers to the other's jam, then both start together), 20200 ns apart,
    # until attempt_limit=16 gives both frames up. Station 0's second frame then goes.
    f, n = cluster(fabric, 2, f"{HUB} backoff_limit=0")
    n[0].send(0, 1, b"a" * 20, seq=0)
    n[0].send(0, 1, b"c" * 20, seq=1)
    n[1].send(0, 0, b"b" * 20)
    run_until_delivered(n, {1: 1})
    rnd = PREAMBLE + JAM + P + IFG                   # 20200
    last_end = 15 * rnd + PREAMBLE + JAM             # the 16th collision's jam ends
    start = last_end + P + IFG                       # after station 1's jam and the gap
    assert times(n[1]) == [start + SHORT + P]
    assert n[1].delivered[0]["payload"] == b"c" * 20
    stats = finish(f, n)
    assert not n[0].delivered
    assert stations(stats, "collisions") == [16, 16]
    assert stations(stats, "drops_excess_collisions") == [1, 1]
    assert stats["drops"]["excess collisions"] == 2
    # every retry met the other's jam; station 0's second frame too
    assert stations(stats, "deferrals") == [16, 15]


def test_a_full_station_queue_drops_and_counts(fabric):
    f, n = cluster(fabric, 2, f"{HUB} queue_frames=2")
    for i in range(3):
        n[0].send(0, 1, bytes([i]) * 20, seq=i)       # the third finds 2 held
    run_until_delivered(n, {1: 2})
    assert times(n[1]) == [SHORT + P, SHORT + IFG + SHORT + P]
    assert [d["payload"][0] for d in n[1].delivered] == [0, 1]
    stats = finish(f, n)
    assert stations(stats, "drops_queue_full") == [1, 0]
    assert stats["drops"]["queue full"] == 1


def test_every_frame_earns_its_sender_a_notice(fabric):
    # docs/fabric.md, "hub": W_min after the frame was settled (start + P), or L after it
    # was dropped when handed over (the third finds the queue full at 0); in order
    f, n = cluster(fabric, 2, f"{HUB} queue_frames=2")
    for i in range(3):
        n[0].send(0, 1, bytes([i]) * 20, seq=i)
    n[0].send(SHORT * 4, 1, b"L" * 1514, seq=3)
    n[0].send(SHORT * 4, wire.BROADCAST, b"x" * 1515, seq=4)     # oversize: dropped
    run_until(n, [1], lambda: len(n[0].notices) == 5 and len(n[1].delivered) == 3)
    second = SHORT + IFG
    assert n[0].notices == [P + SHORT, SHORT + P, second + P + SHORT,
                            SHORT * 4 + SHORT + P, SHORT * 4 + P + SHORT]
    assert all(t.get("src", 0) == 0 for t in n[1].delivered)
    stats = finish(f, n)
    assert stats["nodes"][0]["frames_received"] == 0        # notices are not frames
    assert stats["causality_violations"] == 0


def test_a_node_s_own_promise_bounds_its_grant(fabric):
    # its own frame could make a notice arrive at it L after its promise
    f, (a, b) = cluster(fabric, 2, HUB)
    b.report(0, NEVER)
    assert a.sync(0, 10_000) == 10_000 + SHORT + P
    a.send(10_000, 1, b"")
    a.sync(10_000, NEVER)
    assert a.notices == [10_000 + P + SHORT]                # settled at 11000, W_min later
    assert finish(f, [a, b])["causality_violations"] == 0


def test_broadcast_reaches_every_other_station_at_once(fabric):
    f, n = cluster(fabric, 3, HUB)
    n[0].send(0, wire.BROADCAST, b"arp" * 10)
    run_until_delivered(n, {1: 1, 2: 1})
    for x in n[1:]:
        assert [(d["time"], d["src"], d["dst"]) for d in x.delivered] == \
            [(wire_ns(30) + P, 0, wire.BROADCAST)]
    stats = finish(f, n)
    assert [x["frames_received"] for x in stats["nodes"]] == [0, 1, 1]


def test_a_pending_resolution_bounds_grants_by_the_rest_of_the_frame(fabric):
    # Node 0's empty frame starts at 0 and is settled at 1000 (no start can collide with
    # it any more): node 1 is granted up to the arrival, 57600 after that event (the
    # shortest frame), not L = 58600 after it.
    ethernet.check_grant_stops_at_the_arrival(fabric, HUB, P, SHORT + P)


def busy_hub(fabric, seed: int) -> tuple[list[tuple], dict]:
    """4 stations at 100 Mb/s, 12 frames each: every delivery and the stats."""
    got, stats, sent = random_traffic(fabric, "hub rate=12500000 prop_ns=1500 seed=7", seed)
    assert len(got) + stats["drops"]["excess collisions"] == sent
    return got, stats


def test_a_busy_hub_keeps_its_invariants_and_is_deterministic(fabric):
    got, stats = busy_hub(fabric, 1)
    assert stats["causality_violations"] == 0
    assert sum(stations(stats, "collisions")) > 0
    # whole frames never overlap: each one started at least a gap after the one before
    # ended (its own, or heard prop_ns later)
    for (t0, *_), (t1, _, _, payload, _) in zip(got, got[1:]):
        assert t1 - t0 >= IFG // 10 + ethernet.wire_ns(len(payload), 80)
    # each station's frames go in order
    for src in range(4):
        seqs = [p[1] for _, s, _, p, _ in got if s == src]
        assert seqs == sorted(seqs)
    assert stations(stats, "frames") == [sum(1 for g in got if g[1] == s) for s in range(4)]
    again, _ = busy_hub(fabric, 1)
    assert again == got
