"""qtest: the CompactPCI bridge's windows (BAR2) and the target side. Stores become
frames with the right offset, data and ready time (the independent model, to the ns),
N stores exactly N frames; the refused ones (own window, no such node, disabled, a bad
width or alignment) with their error and address; loads; a peer's writes landing in the
export at their time, refused outside it or while it is off, doorbells and their masks
and MSI, a doorbell after writes landing after them, a peer's load served."""
import pytest
from cpci_model import Bridge, defaults
from cpci_rig import EXPORT, EXPORT_SIZE, T0, Rig

from retrolink.qtest.cpci_regs import R, db_bit, wire_frame

P = defaults()
UP = T0 + 100_000                       # bring_up's end
ARRIVE = 3_000_000                      # peers' frames arrive from here


@pytest.fixture
def rig(artifacts, tmp_path):
    r = Rig(artifacts, tmp_path)
    yield r
    r.close()


def test_stores_become_one_frame_each_at_the_model_s_ready_time(rig):
    t = rig.bring_up()
    b = Bridge(P)
    stores = [(1, 0x100, 4, 0x11223344), (2, 0x7, 1, 0xAB), (3, 0x22, 2, 0xBEEF),
              (1, 0xFFFF8, 8, 0x0102030405060708), (2, 0x104, 4, 0xCAFEF00D)]
    for node, off, size, val in stores:
        rig.store(node, off, size, val)
    frames = rig.wait_frames(len(stores))
    assert len(frames) == len(stores)
    for f, (node, off, size, val) in zip(frames, stores):
        assert (f["dst"], f["kind"], f["offset"], f["length"], f["src_node"]) == \
            (node, R.CPCI_T_WRITE, off, size, 0)
        assert f["data"] == val.to_bytes(size, "little")
        assert f["time"] == b.store(t, size), (f, b)
    assert rig.reg(R.CPCI_REG_TX_WRITES) == len(stores)
    assert rig.reg(R.CPCI_REG_TX_BYTES) == sum(s[2] for s in stores)
    assert rig.err() == 0


@pytest.mark.parametrize("count", [1, 16, 100])
def test_n_posted_stores_are_n_transactions(rig, count):
    """A CPU copy in 4-byte stores: each its own transaction, 5 PCI clocks apart."""
    t = rig.bring_up()
    for i in range(count):
        rig.store(1, 4 * i, 4, i)
    frames = rig.wait_frames(count)
    assert len(frames) == count
    cost = (P["arb"] + P["addr"] + 1 + P["turn"]) * P["cycle"]
    assert [f["time"] for f in frames] == [t + (i + 1) * cost + P["bridge"]
                                           for i in range(count)]
    assert [f["offset"] for f in frames] == [4 * i for i in range(count)]


def test_refused_window_accesses(rig):
    rig.q.clock_set(T0)

    def refused(node, off, size, err, load=False):
        rig.clear_err()
        if load:
            assert rig.load(node, off, size) == (1 << 8 * size) - 1
        else:
            rig.store(node, off, size, 0x55)
        assert rig.err() == err, (node, hex(off), size, rig.err())
        assert rig.reg(R.CPCI_REG_ERR_ADDR) == node * R.CPCI_WINDOW_SIZE + off

    refused(1, 0x10, 4, R.CPCI_ERR_DISABLED)
    refused(1, 0x10, 4, R.CPCI_ERR_DISABLED, load=True)
    rig.bring_up()
    refused(0, 0x10, 4, R.CPCI_ERR_SELF)
    refused(0, 0x10, 4, R.CPCI_ERR_SELF, load=True)
    refused(4, 0x10, 4, R.CPCI_ERR_NO_NODE)
    refused(7, 0xFFFFC, 4, R.CPCI_ERR_NO_NODE, load=True)
    refused(1, 0x11, 4, R.CPCI_ERR_BAD_ACCESS)              # misaligned
    refused(1, 0x12, 4, R.CPCI_ERR_BAD_ACCESS)
    refused(1, 0x4, 8, R.CPCI_ERR_BAD_ACCESS)
    refused(1, 0x11, 2, R.CPCI_ERR_BAD_ACCESS, load=True)
    assert rig.frames() == [] and rig.reg(R.CPCI_REG_TX_WRITES) == 0
    assert rig.reg(R.CPCI_REG_TX_READS) == 0


class Peers:
    """The fake backplane's other bridges: each READ the board sends is answered by its
    target after `round_trip` ns (from the READ's ready time), with `data`, or refused;
    `first` frames are delivered at the first sync of the board's load."""

    def __init__(self, data: bytes = bytes(range(1, 9)), round_trip: int = 2000,
                 abort: bool = False, first=(), gate=None):
        self.data, self.round_trip, self.abort, self.first = data, round_trip, abort, first
        self.gate = gate            # answer only once gate(rig) is true
        self.answered: dict[int, int] = {}          # tag -> completion arrival

    def react(self, rig, now):
        for f in rig.frames():
            if f["kind"] == R.CPCI_T_READ and f["src_node"] == 0 and self.first:
                rig.queue.extend(self.first)
                self.first = ()
            if f["kind"] != R.CPCI_T_READ or f["tag"] in self.answered or \
                    (self.gate and not self.gate(rig)):
                continue
            at = max(now, f["time"] + self.round_trip)
            self.answered[f["tag"]] = at
            rig.queue.append((at, f["dst"], wire_frame(
                R.CPCI_T_READ_DONE, f["offset"], b"" if self.abort else self.data[:f["length"]],
                length=f["length"], src=f["dst"], tag=f["tag"],
                flags=R.CPCI_FF_ABORT if self.abort else 0)))


@pytest.mark.parametrize("size", [1, 2, 4, 8])
def test_a_load_holds_the_access_until_its_completion_is_back(artifacts, tmp_path, size):
    peers = Peers()
    rig = Rig(artifacts, tmp_path, step=10_000, react=peers.react)
    try:
        t = rig.bring_up()
        b = Bridge(P)
        val = rig.load(2, 0x40, size)
        assert val == int.from_bytes(peers.data[:size], "little")
        (read,) = rig.frames()
        ready = b.store(t, size)            # the first attempt, then the bridge
        assert (read["dst"], read["kind"], read["offset"], read["length"], read["time"],
                len(read["payload"])) == (2, R.CPCI_T_READ, 0x40, size, ready,
                                          R.CPCI_WIRE_HDR_SIZE)
        arrival = peers.answered[read["tag"]]
        # the CPU's retry reads the data: the node's PCI is busy until then, so a store
        # made at once is ready only after it
        done = arrival + b.transaction(size)
        rig.store(1, 0, 4, 0x1234)
        out = rig.wait_frames(2)[1]
        assert out["time"] == done + b.transaction(4) + P["bridge"]
        assert rig.reg(R.CPCI_REG_TX_READS) == 1 and rig.err() == 0
    finally:
        rig.close()


def test_a_load_the_peer_refuses_reads_all_ones(artifacts, tmp_path):
    rig = Rig(artifacts, tmp_path, step=10_000, react=Peers(abort=True).react)
    try:
        rig.bring_up()
        assert rig.load(3, 0x100, 4) == 0xFFFFFFFF
        assert rig.err() == R.CPCI_ERR_PEER_ABORT
        assert rig.reg(R.CPCI_REG_ERR_ADDR) == 3 * R.CPCI_WINDOW_SIZE + 0x100
    finally:
        rig.close()


def test_a_load_no_completion_can_reach_reads_all_ones(rig):
    """The fake fabric granted never at its first sync: nothing can arrive any more."""
    rig.bring_up()
    assert rig.load(1, 0x40, 8) == 0xFFFFFFFFFFFFFFFF
    assert rig.err() == R.CPCI_ERR_PEER_ABORT
    assert rig.reg(R.CPCI_REG_TX_READS) == 1


def test_a_node_waiting_for_its_load_serves_a_peer_s(artifacts, tmp_path):
    """Two nodes loading from each other: node 1 answers this node's load only once this
    node has answered node 1's (as node 1 would, held in its own load). The waiting node
    runs its own events the grants allow: it serves the peer, and both loads end."""
    def served(rig):
        return any(f["kind"] == R.CPCI_T_READ_DONE for f in rig.frames())

    first = [(UP + 500, 1, wire_frame(R.CPCI_T_READ, 0x20, length=4, src=1, tag=9))]
    peers = Peers(first=first, gate=served)
    rig = Rig(artifacts, tmp_path, step=2_000, react=peers.react)
    try:
        b = Bridge(P)
        rig.bring_up()
        rig.q.memwrite(EXPORT + 0x20, b"\xAA\xBB\xCC\xDD")
        assert rig.load(1, 0x80, 4) == int.from_bytes(peers.data[:4], "little")
        done = [f for f in rig.frames() if f["kind"] == R.CPCI_T_READ_DONE]
        assert len(done) == 1 and done[0]["data"] == b"\xAA\xBB\xCC\xDD"
        assert done[0]["tag"] == 9 and done[0]["time"] == b.serve(UP + 500, 4)
        assert rig.reg(R.CPCI_REG_RX_READS) == 1 and rig.err() == 0
    finally:
        rig.close()


def test_peer_writes_land_in_the_export_at_their_time(artifacts, tmp_path):
    b = Bridge(P)
    frames = [(ARRIVE, 1, wire_frame(R.CPCI_T_WRITE, 0x10, b"\x01\x02\x03\x04", src=1)),
              (ARRIVE, 2, wire_frame(R.CPCI_T_WRITE, 0x18, bytes(range(8)), src=2)),
              (ARRIVE + 5000, 3, wire_frame(R.CPCI_T_WRITE, 0x3FFF, b"\xEE", src=3))]
    lands = [b.land(ARRIVE, 4), b.land(ARRIVE, 8), b.land(ARRIVE + 5000, 1)]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        q = rig.q
        q.memwrite(EXPORT, bytes(0x40))
        q.clock_set(lands[0] - 1)
        assert q.memread(EXPORT + 0x10, 4) == bytes(4)
        q.clock_set(lands[0])
        assert q.memread(EXPORT + 0x10, 4) == b"\x01\x02\x03\x04"
        q.clock_set(lands[1] - 1)
        assert q.memread(EXPORT + 0x18, 8) == bytes(8)
        q.clock_set(lands[1])
        assert q.memread(EXPORT + 0x18, 8) == bytes(range(8))
        q.clock_set(lands[2])
        assert q.memread(EXPORT + 0x3FFF, 1) == b"\xEE"
        assert rig.reg(R.CPCI_REG_RX_WRITES) == 3 and rig.reg(R.CPCI_REG_RX_BYTES) == 13
        assert rig.err() == 0 and rig.reg(R.CPCI_REG_RX_REJECTED) == 0
    finally:
        rig.close()


def test_peer_accesses_outside_the_export_or_while_off_are_refused(artifacts, tmp_path):
    frames = [(ARRIVE, 1, wire_frame(R.CPCI_T_WRITE, EXPORT_SIZE - 2, b"abcd", src=1)),
              (ARRIVE + 10_000, 1, wire_frame(R.CPCI_T_WRITE, 0x20, b"xy", src=1)),
              (ARRIVE + 20_000, 2, wire_frame(R.CPCI_T_DOORBELL, 1, src=2))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.q.memwrite(EXPORT + EXPORT_SIZE - 4, bytes(4))
        rig.q.clock_set(ARRIVE + 5000)
        assert rig.err() == R.CPCI_ERR_INBOUND
        assert rig.reg(R.CPCI_REG_ERR_ADDR) == EXPORT_SIZE - 2
        assert rig.reg(R.CPCI_REG_RX_REJECTED) == 1
        assert rig.q.memread(EXPORT + EXPORT_SIZE - 4, 4) == bytes(4)
        rig.clear_err()
        rig.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_ENABLE)        # the export off
        rig.q.clock_set(ARRIVE + 15_000)
        assert rig.err() == R.CPCI_ERR_INBOUND and rig.reg(R.CPCI_REG_RX_REJECTED) == 2
        assert rig.q.memread(EXPORT + 0x20, 2) == bytes(2)
        rig.clear_err()
        rig.set_reg(R.CPCI_REG_CTRL, 0)                         # disabled: no doorbell
        rig.q.clock_set(ARRIVE + 25_000)
        assert rig.err() == R.CPCI_ERR_INBOUND and rig.reg(R.CPCI_REG_RX_REJECTED) == 3
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 0
        assert rig.reg(R.CPCI_REG_RX_WRITES) == 0
    finally:
        rig.close()


def test_doorbells_their_masks_and_msi(artifacts, tmp_path):
    frames = [(ARRIVE, 3, wire_frame(R.CPCI_T_DOORBELL, 2, src=3)),
              (ARRIVE + 10_000, 1, wire_frame(R.CPCI_T_DOORBELL, 0, src=1)),
              (ARRIVE + 20_000, 2, wire_frame(R.CPCI_T_DOORBELL, 3, src=2))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        q = rig.q
        b = Bridge(P)
        rig.bring_up()
        box = 0x00300000
        q.msi_to_ram(q.find_pci(R.CPCI_PCI_VENDOR_ID, R.CPCI_PCI_DEVICE_ID), box, 0x1234)
        rig.set_reg(R.CPCI_REG_DB_MASK, 1 << db_bit(1, 0))
        land = b.land(ARRIVE, 0)
        q.clock_set(land - 1)
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 0
        q.clock_set(land)
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 1 << db_bit(3, 2)
        assert rig.reg(R.CPCI_REG_IRQ_STATUS) == R.CPCI_IRQ_DOORBELL
        assert int.from_bytes(q.memread(box, 4), "little") == 0x1234
        q.memwrite(box, bytes(4))
        rig.set_reg(R.CPCI_REG_DB_STATUS, 1 << db_bit(3, 2))      # write one to clear
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 0 and rig.reg(R.CPCI_REG_IRQ_STATUS) == 0
        q.clock_set(ARRIVE + 15_000)                               # masked: no interrupt
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 1 << db_bit(1, 0)
        assert rig.reg(R.CPCI_REG_IRQ_STATUS) == 0 and q.memread(box, 4) == bytes(4)
        rig.set_reg(R.CPCI_REG_DB_MASK, 0)                         # unmasked: now
        assert rig.reg(R.CPCI_REG_IRQ_STATUS) == R.CPCI_IRQ_DOORBELL
        assert int.from_bytes(q.memread(box, 4), "little") == 0x1234
        q.memwrite(box, bytes(4))
        q.clock_set(ARRIVE + 25_000)                               # pending already: an MSI
        assert int.from_bytes(q.memread(box, 4), "little") == 0x1234
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 1 << db_bit(1, 0) | 1 << db_bit(2, 3)
        assert rig.reg(R.CPCI_REG_DB_RECEIVED) == 3 and rig.err() == 0
    finally:
        rig.close()


def test_a_doorbell_after_writes_lands_after_them(artifacts, tmp_path):
    writes = [wire_frame(R.CPCI_T_WRITE, 4 * i, bytes([i + 1]) * 4, src=1) for i in range(3)]
    frames = [(ARRIVE, 1, w) for w in writes] + \
        [(ARRIVE, 1, wire_frame(R.CPCI_T_DOORBELL, 2, src=1))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        b = Bridge(P)
        lands = [b.land(ARRIVE, 4) for _ in writes]
        bell = b.land(ARRIVE, 0)
        assert bell > lands[-1]
        rig.bring_up()
        rig.q.memwrite(EXPORT, bytes(12))
        rig.q.clock_set(bell - 1)
        assert rig.q.memread(EXPORT, 12) == b"\x01" * 4 + b"\x02" * 4 + b"\x03" * 4
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 0
        rig.q.clock_set(bell)
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 1 << db_bit(1, 2)
    finally:
        rig.close()


def test_a_peer_s_load_is_served_with_its_completion(artifacts, tmp_path):
    frames = [(ARRIVE, 2, wire_frame(R.CPCI_T_READ, 0x30, length=4, src=2, tag=77)),
              (ARRIVE, 1, wire_frame(R.CPCI_T_READ, 0x38, length=8, src=1, tag=5)),
              (ARRIVE + 50_000, 1, wire_frame(R.CPCI_T_READ, EXPORT_SIZE, length=4, src=1,
                                              tag=6))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        b = Bridge(P)
        rig.bring_up()
        rig.q.memwrite(EXPORT + 0x30, bytes(range(0x30, 0x40)))
        rig.q.clock_set(ARRIVE + 100_000)
        out = rig.wait_frames(3)
        # same arrival: the fabric's delivery order (sorted by arrival, then as given)
        want = [(2, 77, 0x30, bytes(range(0x30, 0x34)), 0, b.serve(ARRIVE, 4)),
                (1, 5, 0x38, bytes(range(0x38, 0x40)), 0, b.serve(ARRIVE, 8)),
                (1, 6, EXPORT_SIZE, b"", R.CPCI_FF_ABORT, b.serve(ARRIVE + 50_000, 4))]
        assert [(f["dst"], f["tag"], f["offset"], f["data"], f["flags"], f["time"])
                for f in out] == want
        assert all(f["kind"] == R.CPCI_T_READ_DONE for f in out)
        assert rig.reg(R.CPCI_REG_RX_READS) == 2 and rig.reg(R.CPCI_REG_RX_REJECTED) == 1
        assert rig.err() == R.CPCI_ERR_INBOUND
    finally:
        rig.close()


def test_a_reset_still_answers_a_peer_s_load(artifacts, tmp_path):
    """The peer waits for its completion: a reset while the load is served refuses it."""
    frames = [(ARRIVE, 2, wire_frame(R.CPCI_T_READ, 0x30, length=4, src=2, tag=3))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        b = Bridge(P)
        rig.bring_up()
        rig.q.clock_set(ARRIVE + 10)
        rig.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_RESET)
        rig.q.clock_set(ARRIVE + 100_000)
        (done,) = rig.wait_frames(1)
        assert (done["kind"], done["tag"], done["flags"], done["time"]) == \
            (R.CPCI_T_READ_DONE, 3, R.CPCI_FF_ABORT, b.serve(ARRIVE, 4))
    finally:
        rig.close()


def test_without_bus_mastering_peers_accesses_are_refused(artifacts, tmp_path):
    frames = [(ARRIVE, 1, wire_frame(R.CPCI_T_WRITE, 0x10, b"abcd", src=1)),
              (ARRIVE, 2, wire_frame(R.CPCI_T_READ, 0x10, length=4, src=2, tag=4))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        dev = rig.q.find_pci(R.CPCI_PCI_VENDOR_ID, R.CPCI_PCI_DEVICE_ID)
        rig.q.cfg_write(dev, 0x04, 0x2)                    # memory space, no bus master
        rig.q.clock_set(ARRIVE + 100_000)
        (done,) = rig.wait_frames(1)
        assert done["flags"] == R.CPCI_FF_ABORT and done["tag"] == 4
        assert rig.reg(R.CPCI_REG_RX_REJECTED) == 2 and rig.reg(R.CPCI_REG_RX_WRITES) == 0
        assert rig.err() == R.CPCI_ERR_INBOUND
    finally:
        rig.close()


def test_malformed_frames_are_dropped(artifacts, tmp_path):
    bad = [wire_frame(R.CPCI_T_WRITE, 0x10, b"abcd", length=3, src=1),     # len mismatch
           wire_frame(R.CPCI_T_WRITE, 0x10, b"abcd", src=2),               # src not sender
           wire_frame(R.CPCI_T_DOORBELL, R.CPCI_DB_PER_NODE, src=1),       # no such bit
           wire_frame(9, 0, src=1),                                        # no such type
           wire_frame(R.CPCI_T_WRITE, 0x10, bytes(9), src=1),              # too long
           wire_frame(R.CPCI_T_READ_DONE, 0, b"", length=4, src=1),        # no load waits
           b"\x01\x00"]                                                    # short
    rig = Rig(artifacts, tmp_path, frames=[(ARRIVE, 1, f) for f in bad])
    try:
        rig.bring_up()
        rig.q.memwrite(EXPORT, bytes(0x20))
        rig.q.clock_set(ARRIVE + 100_000)
        assert rig.q.memread(EXPORT, 0x20) == bytes(0x20)
        assert rig.reg(R.CPCI_REG_RX_WRITES) == 0 and rig.reg(R.CPCI_REG_DB_STATUS) == 0
        assert rig.err() == 0
    finally:
        rig.close()
