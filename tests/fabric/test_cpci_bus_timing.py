"""The CompactPCI backplane (fabric/topo/cpci_bus.c, docs/fabric.md "cpci_bus"): one
transaction at a time, granted by ready time, then station, then the station's order;
each holds the bus for arbitration, address, its data phases and turnaround, and arrives
at the end of its last data phase plus the target bridge's latency; each earns its sender a
notice (proto/cpci.h, "Credits") at the end of its last data phase, no earlier than the
lookahead after its ready time. Times recomputed here from the parameters, to the ns."""
import pytest
from fakenode import NEVER, check_config, cluster, finish, run_until, run_until_delivered

CYCLE, WIDTH, ARB, ADDR, TURN, HEADER, BRIDGE = 30, 4, 2, 1, 1, 16, 240
BUS = "cpci_bus"                       # every parameter at its default


def phases(length: int) -> int:
    data = max(0, length - HEADER)
    return max(1, -(-data // WIDTH))


def to_last_data(length: int) -> int:
    return (ARB + ADDR + phases(length)) * CYCLE


def held(length: int) -> int:
    return to_last_data(length) + TURN * CYCLE


def bus_model(requests: list[tuple[int, int, int, int]]) -> dict[tuple[int, int], int]:
    """requests: (ready, station, seq, length). The arrival of each, by (station, seq):
    granted in order of (ready, station, seq), one at a time."""
    free, out = 0, {}
    for ready, station, seq, length in sorted(requests):
        start = max(ready, free)
        out[(station, seq)] = start + to_last_data(length) + BRIDGE
        free = start + held(length)
    return out


def times(node) -> list[int]:
    return [d["time"] for d in node.delivered]


def test_one_transaction_of_each_size_on_an_idle_bus(fabric):
    f, n = cluster(fabric, 2, BUS)
    sizes = [16, 17, 20, 24]               # a doorbell, 1, 4 and 8 data bytes
    for seq, size in enumerate(sizes):
        n[0].send(10_000 * seq, 1, bytes([seq]) * size, seq=seq)
    run_until_delivered(n, {1: len(sizes)})
    # 4, 4, 4 and 5 cycles to the last data phase, then the bridge
    assert times(n[1]) == [10_000 * i + c * CYCLE + BRIDGE for i, c in enumerate([4, 4, 4, 5])]
    stats = finish(f, n)
    assert stats["links"][0]["bus_transactions"] == 4
    assert stats["links"][0]["bus_data_phases"] == 5
    assert stats["links"][0]["bus_busy_ns"] == 3 * 5 * CYCLE + 6 * CYCLE


def test_n_posted_stores_are_n_transactions_back_to_back(fabric):
    f, n = cluster(fabric, 2, BUS)
    count = 50
    for seq in range(count):
        n[0].send(1000, 1, b"w" * 20, seq=seq)       # 4-byte stores, all ready at once
    run_until_delivered(n, {1: count})
    assert times(n[1]) == [1000 + i * held(20) + to_last_data(20) + BRIDGE
                           for i in range(count)]
    stats = finish(f, n)
    assert stats["links"][0]["bus_transactions"] == count
    assert stats["links"][0]["queue_ns_max"] == (count - 1) * held(20)


def test_several_stations_are_serialised_by_ready_time_then_station(fabric):
    f, n = cluster(fabric, 4, BUS)
    requests = [(500, 2, 0, 24), (500, 1, 0, 20), (500, 0, 0, 16), (510, 3, 0, 20),
                (505, 1, 1, 24), (2000, 0, 1, 20), (2000, 3, 1, 17)]
    for ready, station, seq, length in requests:
        dst = (station + 1) % 4
        n[station].send(ready, dst, bytes([station, seq]) + b"x" * (length - 2), seq=seq)
    run_until_delivered(n, {0: 2, 1: 2, 2: 2, 3: 1})
    want = bus_model(requests)
    got = {(d["src"], d["payload"][1]): d["time"] for x in n for d in x.delivered}
    assert got == want
    # station 0's doorbell went first (ready 500, lowest station); station 3's at 510
    # waited for the three transactions ahead of it
    assert got[(0, 0)] == 500 + 4 * CYCLE + BRIDGE
    finish(f, n)


def test_each_frame_earns_its_sender_a_notice_when_its_data_has_left(fabric):
    """A station offering frames faster than the bus carries them: the notices follow the
    grants (the bridge's posted-write buffer frees by them); the first ones wait for the
    lookahead, a frame's least time from ready to arrival."""
    f, n = cluster(fabric, 2, BUS)
    count = 8
    for i in range(count):
        n[0].send(1000 + 50 * i, 1, b"x" * 20, seq=i)
    run_until(n, [1], lambda: len(n[0].notices) == count and len(n[1].delivered) == count)
    lookahead = to_last_data(HEADER) + BRIDGE
    arrivals = bus_model([(1000 + 50 * i, 0, i, 20) for i in range(count)])
    want = [max(arrivals[(0, i)] - BRIDGE, 1000 + 50 * i + lookahead) for i in range(count)]
    assert n[0].notices == want
    assert want[0] == 1000 + lookahead and want[-1] == arrivals[(0, count - 1)] - BRIDGE
    assert times(n[1]) == [arrivals[(0, i)] for i in range(count)]
    finish(f, n)


def test_a_node_s_own_notice_to_come_sets_no_floor_for_the_grants(fabric):
    """A notice only holds its bridge back (proto/cpci.h, "Credits"): node 0's notice of
    a dropped frame, due at 360 ns, must not hold node 1 to 360 + R + L; node 0's promise
    does."""
    f, n = cluster(fabric, 2, BUS)
    n[0].send(0, 1, b"x" * 25, seq=0)     # over the mtu: nothing arrives but its notice
    n[0].report(0, 100_000)
    assert n[1].sync(0, NEVER) == 100_000 + 4 * CYCLE + BRIDGE


def test_a_frame_longer_than_the_mtu_is_dropped(fabric):
    f, n = cluster(fabric, 2, BUS)
    n[0].send(0, 1, b"x" * 25, seq=0)
    n[0].send(0, 1, b"y" * 24, seq=1)
    run_until(n, [1], lambda: len(n[1].delivered) == 1 and len(n[0].notices) == 2)
    assert n[1].delivered[0]["payload"] == b"y" * 24
    assert times(n[1]) == [5 * CYCLE + BRIDGE]
    # the dropped frame's notice at the lookahead; the other's last data phase is earlier
    assert n[0].notices == [to_last_data(HEADER) + BRIDGE] * 2
    stats = finish(f, n)
    assert stats["drops"]["oversize"] == 1


def test_parameters_change_the_times(fabric):
    f, n = cluster(fabric, 2, "cpci_bus cycle_ns=15 rate=266666666 arb_cycles=0 "
                   "turnaround_cycles=3 bridge_ns=0 header_bytes=0 mtu=8")
    n[0].send(0, 1, b"x" * 8, seq=0)
    n[0].send(0, 1, b"y" * 8, seq=1)
    run_until_delivered(n, {1: 2})
    # 1 address + 2 data phases, then 3 turnaround cycles before the next
    assert times(n[1]) == [3 * 15, 6 * 15 + 3 * 15]
    finish(f, n)


def test_lookahead_is_one_single_phase_transaction(fabric):
    # node 0 promises nothing before 1000: node 1 may run to the earliest arrival then
    f, n = cluster(fabric, 2, BUS)
    n[0].report(0, 1000)
    assert n[1].sync(0, NEVER) == 1000 + 4 * CYCLE + BRIDGE


@pytest.mark.parametrize("config, why", [
    ("cpci_bus rate=133000000", "is not width_bytes per cycle_ns"),
    ("cpci_bus cycle_ns=0", "cpci_bus needs"),
    ("cpci_bus width_bytes=0", "cpci_bus needs"),
    ("cpci_bus nonsense=1", "no parameter 'nonsense'"),
])
def test_bad_configurations_are_refused(fabric_binary, tmp_path, config, why):
    r = check_config(fabric_binary, tmp_path, f"nodes 2\ntopology {config}\n")
    assert r.returncode == 2 and why in r.stderr, r.stderr


def test_more_than_eight_slots_are_refused(fabric_binary, tmp_path):
    r = check_config(fabric_binary, tmp_path, "nodes 9\ntopology cpci_bus\n")
    assert r.returncode == 2 and "at most 8 slots" in r.stderr, r.stderr


def test_a_broadcast_is_one_transaction_arriving_everywhere_at_once(fabric):
    f, n = cluster(fabric, 3, BUS)
    n[1].send(100, 0xFFFFFFFF, b"b" * 20, seq=0)
    run_until_delivered(n, {0: 1, 2: 1})
    assert times(n[0]) == times(n[2]) == [100 + to_last_data(20) + BRIDGE]
    stats = finish(f, n)
    assert stats["links"][0]["bus_transactions"] == 1
