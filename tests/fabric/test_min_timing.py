"""The multistage network (Omega wiring, destination-tag routing, cut-through switches):
exact timing and blocking at a shared switch output (model: fabric/topo/min.c)."""
from fakenode import FakeNode, cluster, run_until_delivered

NEVER = 2**64 - 1


def arrivals(fabric, config: str, nodes: int, sends: list[tuple[int, int]], size: int):
    f = fabric(f"nodes {nodes}\n{config}\n")
    n = [FakeNode(f.sock, i) for i in range(nodes)]
    for x in n:
        x.welcome()
    for seq, (src, dst) in enumerate(sends):
        n[src].send(0, dst, bytes([seq]) * size, seq=seq)
    receivers = sorted({d for _, d in sends})
    for i in range(nodes):
        if i not in receivers:
            n[i].report(0, NEVER)
    pending = receivers           # all report before any waits: each grant needs the others'
    while pending:
        for r in pending:
            n[r].report(n[r].grant, NEVER)
        for r in pending:
            n[r].wait_grant()
        pending = [r for r in pending if not n[r].delivered]
    return {r: n[r].delivered[0]["time"] for r in receivers}


# 2x2 switches, 2 columns, 4 ports; 10 ns a byte, so 100 bytes hold a link 1000 ns.
SMALL = "topology min k=2 stages=2 rate=100000000 stage_delay_ns=250"


def test_cenju3_network_unloaded_latency(fabric):
    # 4x4 switches, 4 columns (256 ports), 40 MB/s, 250 ns a column, 100 ns a link:
    # 5 links * 100 + 4 * 250 + 508 bytes / 40 MB/s (12700 ns)
    got = arrivals(fabric, "topology min k=4 stages=4 rate=40000000 stage_delay_ns=250 "
                   "prop_ns=100 mtu=508", 2, [(0, 1)], 508)
    assert got == {1: 500 + 1000 + 12700}


def test_two_paths_sharing_a_switch_output_block(fabric):
    # Column 0: port p enters as shuffle(p) = rotate-left of its 2 bits; the switch then
    # sets the low bit to the destination's high bit. 0 -> 1: 00 -> 00 -> out 00 (dst high
    # bit 0). 2 -> 0: 10 -> 01 -> out 00. Both want output 00 of column 0 at t = 250;
    # node 0's head came first (event order), node 2's packet waits 1000 ns there.
    got = arrivals(fabric, SMALL, 4, [(0, 1), (2, 0)], 100)
    assert got[1] == 250 + 250 + 1000
    assert got[0] == 250 + 1000 + 250 + 1000


def test_disjoint_paths_do_not_interfere(fabric):
    # 0 -> 2: 00 -> 00 -> out 01; 2 -> 0: 10 -> 01 -> out 00. Different outputs.
    got = arrivals(fabric, SMALL, 4, [(0, 2), (2, 0)], 100)
    assert got == {2: 1500, 0: 1500}


def test_too_few_ports_for_the_nodes_is_a_config_error(fabric):
    f = fabric("nodes 5\ntopology min k=2 stages=2 rate=1000 stage_delay_ns=1\n")
    assert f.proc.wait(timeout=10) == 2
    assert "k^stages ports" in f.log.read_text()


def test_a_head_in_the_last_column_bounds_the_grants(fabric):
    # An empty packet from 0 to 1: its head reaches column 1 at 250 and arrives at 500.
    # Node 0 promises 250, so that event stays pending; node 1 is granted exactly to the
    # arrival (250 + one column), not to 250 + the whole path (750).
    f = fabric(f"nodes 4\n{SMALL}\n")
    n = [FakeNode(f.sock, i) for i in range(4)]
    for x in n:
        x.welcome()
    n[2].report(0, NEVER)
    n[3].report(0, NEVER)
    n[0].send(0, 1, b"")
    n[0].report(0, 250)
    assert n[1].sync(0, NEVER) == 500
    while n[0].grant < 250:  # node 0 may not report 250 before it is granted that far
        n[0].wait_grant()
    n[0].report(250, NEVER)
    while not n[1].delivered:
        n[1].sync(n[1].grant, NEVER)
    assert n[1].delivered[0]["time"] == 500


def test_63_senders_to_one_port_of_64(fabric):
    # machines/cenju-3-64.toml's network: 4x4 switches in 3 columns (64 ports), 40 MB/s,
    # 250 ns a column. Every other node sends one full packet (508 bytes of data behind
    # the 24-byte header, and the 4-byte trailer: 536 bytes hold a link 13400 ns) to
    # node 0 at time 0. Every one arrives, once; the first after 3 * 250 + 13400 ns, the
    # others queued behind it (the switches' buffers have no limit), so the last column's
    # output to node 0 carries them back to back.
    f, n = cluster(fabric, 64, "min k=4 stages=3 rate=40000000 stage_delay_ns=250 "
                   "overhead_bytes=4 mtu=532")
    for src in range(1, 64):
        n[src].send(0, 0, bytes([src]) * 532, seq=src)
    run_until_delivered(n, {0: 63})
    got = n[0].delivered
    assert sorted(d["src"] for d in got) == list(range(1, 64))
    assert all(d["payload"] == bytes([d["src"]]) * 532 for d in got)
    times = sorted(d["time"] for d in got)
    assert times[0] == 3 * 250 + 13400
    assert [b - a for a, b in zip(times, times[1:])] == [13400] * 62


def test_64_nodes_need_3_columns_of_4x4(fabric):
    f = fabric("nodes 65\ntopology min k=4 stages=3 rate=40000000 stage_delay_ns=250\n")
    assert f.proc.wait(timeout=10) == 2
    assert "k^stages ports" in f.log.read_text()
