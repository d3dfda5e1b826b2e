"""qtest: back-pressure from the backplane on the bridge's posted writes. The board is node
0 of a fake backplane that sends notices (proto/cpci.h, "Credits"); the test plays it from
the independent model (cpci_model.py): node 1, also modelled, stores into node 0's window
while node 0's CPU stores into node 1's, each 4-byte store one transaction, so the two
offer the backplane twice what it carries. Node 0's frames must come out at the model's
ready times (a full buffer retries the store until a notice frees it), never holding more
of the buffer than it has, none lost, the peer's data in the export, and a second run
byte-identical."""
import copy

import pytest
from cpci_model import Backplane, Bridge, defaults, props
from cpci_rig import EXPORT, Rig

from retrolink import wire
from retrolink.qtest.cpci_regs import R, wire_frame

STORES = 400
START = 2_100_000                       # bring_up's end


def two_nodes_storing(p: dict, start: int, stores: int):
    """Both nodes' stores offered to one backplane by ready time, then station: node 0's
    frames (ready, notice), node 1's (arrival at node 0, offset, data), node 0's model."""
    bus, nodes = Backplane(), [Bridge(p), Bridge(p)]
    left = [stores, stores]
    mine, peer = [], []
    while any(left):
        # each node's next store, tried on copies; the earlier ready time goes first
        tries = {}
        for n in (0, 1):
            if left[n]:
                b, bp = copy.deepcopy(nodes[n]), copy.deepcopy(bus)
                tries[n] = b.posted_store(start, 4, bp)[0]
        n = min(tries, key=lambda k: (tries[k], k))
        i = stores - left[n]
        ready, arrival = nodes[n].posted_store(start, 4, bus)
        if n == 0:
            mine.append((ready, nodes[0].posted[-1][0]))
        else:
            peer.append((arrival, 4 * i, (0x5A000000 + i).to_bytes(4, "little")))
        left[n] -= 1
    return mine, peer, nodes[0]


def run(artifacts, tmp_path, p: dict, name: str):
    mine, peer, model = two_nodes_storing(p, START, STORES)
    sent = 0

    def react(rig, now):
        """The backplane's notices of node 0's frames so far, at the model's times."""
        nonlocal sent
        seen = len(rig.fabric.of_type(wire.FRAME))
        rig.queue.extend((mine[k][1], 0, b"") for k in range(sent, seen))
        sent = seen

    frames = [(at, 1, wire_frame(R.CPCI_T_WRITE, off, data, src=1)) for at, off, data in peer]
    rig = Rig(artifacts, tmp_path, props=props(p), frames=frames, step=1000,
              react=react, notice_nets=1, name=name)
    try:
        assert rig.bring_up() == START
        rig.q.memwrite(EXPORT, bytes(4 * STORES))
        for i in range(STORES):
            rig.store(1, 4 * i, 4, 0xA5000000 + i)
        got = rig.wait_frames(STORES)
        rig.q.clock_set(max(at for at, _, _ in peer) + 10_000)
        landed = rig.q.memread(EXPORT, 4 * STORES)
        counters = (rig.reg(R.CPCI_REG_TX_WRITES), rig.reg(R.CPCI_REG_RX_WRITES), rig.err())
    finally:
        rig.close()
    return got, mine, peer, model, landed, counters


@pytest.mark.parametrize("pw", [256, 16])
def test_two_nodes_storing_at_once_stall_on_a_full_buffer(artifacts, tmp_path, pw):
    p = dict(defaults(), pw=pw)
    got, mine, peer, model, landed, counters = run(artifacts, tmp_path, p, "a")
    # nothing lost: every store a frame, in order, with its data; the peer's all landed
    assert len(got) == STORES
    assert [(f["offset"], f["data"]) for f in got] == \
        [(4 * i, (0xA5000000 + i).to_bytes(4, "little")) for i in range(STORES)]
    assert landed == b"".join(data for _, _, data in peer)
    assert counters == (STORES, STORES, 0)
    # the storer stalled: the model's ready times, later than with an unbounded buffer
    assert [f["time"] for f in got] == [ready for ready, _ in mine]
    assert model.retries > STORES // 4
    assert got[-1]["time"] > START + STORES * Bridge(p).transaction(4) + p["bridge"]
    # never more of the buffer taken than it has, from the frames and the notices alone:
    # a store's entry is taken when its transaction ends, freed at its notice
    taken = [(ready - p["bridge"], notice) for ready, notice in
             zip((f["time"] for f in got), (n for _, n in mine))]
    for t, _ in taken:
        assert 4 * sum(1 for a, n in taken if a <= t < n) <= pw, t
    # deterministic: a second run is byte-identical
    again = run(artifacts, tmp_path, p, "b")[0]
    assert [(f["time"], f["payload"]) for f in again] == [(f["time"], f["payload"]) for f in got]


def test_a_buffer_that_cannot_hold_an_access_or_is_too_large_is_refused(artifacts, tmp_path):
    from retrolink.qtest.client import QtestError
    for prop in ("posted-write-bytes=4", "posted-write-bytes=1025",
                 "pci-width-bytes=1,posted-write-bytes=512",
                 "pci-width-bytes=16,posted-write-bytes=8"):
        with pytest.raises(QtestError) as e:
            Rig(artifacts, tmp_path, props=prop, fabric=False).close()
        assert "retrolink-cpci: posted-write-bytes must be" in str(e.value), prop


def test_the_machine_configuration_checks_the_buffer_as_qemu_does():
    from retrolink.boards.cpci import CpciBoard
    from retrolink.topologies.cpci_bus import CpciBusNetwork
    net = CpciBusNetwork(topology="cpci_bus")

    def problems(width: int, pw: int) -> list[str]:
        return CpciBoard(model="cpci", network="backplane", pci={"width_bytes": width},
                         bridge={"posted_write_bytes": pw}).check(net)

    assert problems(4, 256) == [] and problems(1, 256) == [] and problems(16, 16) == []
    assert "at most 256" in problems(1, 512)[0]
    assert "an 8-byte store takes 16" in problems(16, 8)[0]
