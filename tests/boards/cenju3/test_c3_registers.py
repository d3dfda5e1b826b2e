"""qtest: the Cenju-3 interface's registers, its configuration checks, every error status
of a request, message communication into the receive slots, remote DMA to the physical
addresses given, NOTIFY, DONE events and their phase bits, the stall rule, cache
control. The test is the driver; the interface is node 0 of a fake fabric (or alone).
docs/boards/cenju3.md; include/retrolink/regs/cenju3-regs.h."""
import struct

import pytest
from helpers import device_defaults
from c3_rig import BAR, DATA, EVQ_RING, REQ_RING, RXT, T0, TARGET, Rig, deliver_on_first_sync, \
    slot_addr

from retrolink import wire
from retrolink.boards import BOARDS
from retrolink.model.schema import params
from retrolink.qtest.cenju3_regs import R, packet, parse_packet

MSG, RDMA = R.C3_OP_MSG, R.C3_OP_RDMA
EV, NOTIFY = R.C3_REQF_EVENT, R.C3_REQF_NOTIFY
DONE = R.C3_ST_DONE


@pytest.fixture
def rig(artifacts, tmp_path):
    r = Rig(artifacts, tmp_path, nodes=4, extra=["-d", "guest_errors"])
    yield r
    r.close()


def msg_from(src: int, data: bytes, tag: int = 0) -> bytes:
    return packet(R.C3_PKT_MSG, src, 0, data, tag=tag)


def test_identity(rig):
    assert rig.reg(R.C3_REG_ID) == R.C3_ID_VALUE
    assert rig.reg(R.C3_REG_VERSION) == R.C3_VERSION
    assert rig.reg(R.C3_REG_NODE_ID) == 0
    rig.q.clock_set(T0)                         # the cluster started (WELCOME: 4 nodes)
    assert rig.reg(R.C3_REG_NUM_NODES) == 4
    assert rig.reg(R.C3_REG_STATUS) == R.C3_STATUS_TX_IDLE
    assert rig.reg(R.C3_REG_CTRL) == 0
    rig.bring_up(nodes=4)
    assert rig.reg(R.C3_REG_STATUS) == R.C3_STATUS_ENABLED | R.C3_STATUS_TX_IDLE
    assert rig.reg(R.C3_REG_ERROR) == R.C3_ERR_NONE


def test_access_widths_are_enforced_and_logged(rig):
    """32-bit registers only: anything else reads 0, writes nothing, and says so."""
    q = rig.q
    assert q.read(2, BAR + R.C3_REG_ID) == 0
    assert q.read(8, BAR + R.C3_REG_ID) == 0
    assert q.read(1, BAR + R.C3_REG_ID) == 0
    assert q.read(4, BAR + R.C3_REG_ID + 2) == 0
    q.write(2, BAR + R.C3_REG_REQ_SIZE, 8)
    q.write(8, BAR + R.C3_REG_REQ_SIZE, 8)
    q.write(4, BAR + R.C3_REG_REQ_SIZE + 1, 8)
    assert rig.reg(R.C3_REG_REQ_SIZE) == 0
    assert rig.reg(0xFFC) == 0                              # unknown
    rig.set_reg(R.C3_REG_ID, 0x1234)                        # read-only
    rig.set_reg(R.C3_REG_REQ_HEAD, 5)                       # read-only
    assert rig.reg(R.C3_REG_CACHE_OP) == 0                  # write-only
    assert rig.reg(R.C3_REG_ID) == R.C3_ID_VALUE and rig.reg(R.C3_REG_REQ_HEAD) == 0
    log = rig.log.read_text()
    for what in ("2-byte read at offset 0x0 refused", "8-byte read at offset 0x0 refused",
                 "1-byte read at offset 0x0 refused", "4-byte read at offset 0x2 refused",
                 "2-byte write at offset 0x48 refused", "8-byte write at offset 0x48 refused",
                 "4-byte write at offset 0x49 refused", "4-byte read at offset 0xffc refused",
                 "4-byte write at offset 0x0 refused", "4-byte write at offset 0x84 refused",
                 "4-byte read at offset 0xac refused"):
        assert f"retrolink-cenju3 node 0: {what}" in log, (what, log[-3000:])


def test_configuration_is_refused_while_enabled(rig):
    rig.bring_up(nodes=4)
    for off in (R.C3_REG_REQ_BASE_LO, R.C3_REG_REQ_SIZE, R.C3_REG_EVQ_BASE_HI,
                R.C3_REG_EVQ_SIZE, R.C3_REG_RXT_BASE_LO, R.C3_REG_RXT_SLOTS):
        before = rig.reg(off)
        rig.set_reg(R.C3_REG_ERROR, 0)                      # read-only: no effect
        rig.set_reg(off, 0x40)
        assert rig.reg(off) == before and rig.reg(R.C3_REG_ERROR) == R.C3_ERR_ENABLED
    assert "configuration write while enabled refused (C3_ERR 5)" in rig.log.read_text()
    rig.set_reg(R.C3_REG_CTRL, 0)                           # off: configurable again
    rig.set_reg(R.C3_REG_REQ_SIZE, 16)
    assert rig.reg(R.C3_REG_REQ_SIZE) == 16


@pytest.mark.parametrize("reg,bad", [
    ("REQ_SIZE", 0), ("REQ_SIZE", 1), ("REQ_SIZE", 12), ("REQ_SIZE", R.C3_RING_MAX * 2),
    ("EVQ_SIZE", 0), ("EVQ_SIZE", 3), ("EVQ_SIZE", R.C3_RING_MAX * 2),
    ("REQ_BASE_LO", REQ_RING + 32), ("EVQ_BASE_LO", EVQ_RING + 8),
    ("REQ_BASE_LO", 0xFEC00000),            # the I/O APIC: not memory
    ("EVQ_BASE_HI", 0x10),                  # far above RAM
    ("RXT_BASE_LO", RXT + 4), ("RXT_BASE_HI", 0x10),
    ("RXT_SLOTS", 0), ("RXT_SLOTS", R.C3_MAX_SLOTS + 1),
])
def test_enable_checks_the_configuration(rig, reg, bad):
    rig.q.clock_set(T0)
    rig.configure(nodes=4)
    rig.set_reg(getattr(R, f"C3_REG_{reg}"), bad)
    rig.set_reg(R.C3_REG_CTRL, R.C3_CTRL_ENABLE)
    assert rig.reg(R.C3_REG_ERROR) == R.C3_ERR_CONFIG
    assert rig.reg(R.C3_REG_CTRL) == 0 and not rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_ENABLED
    # the running registers are refused while off
    rig.set_reg(R.C3_REG_ERROR, 0)
    rig.set_reg(R.C3_REG_REQ_TAIL, 1)
    assert rig.reg(R.C3_REG_REQ_TAIL) == 0 and rig.reg(R.C3_REG_ERROR) == R.C3_ERR_CONFIG


# each case: the request's fields (op, dest, len, src, raddr, flags) and its error
BAD_REQUESTS = {
    "unknown op": ((0, 1, 8, DATA, 0, EV), "OP"),
    "op 3": ((3, 1, 8, DATA, 0, EV), "OP"),
    "unknown flag": ((MSG, 1, 8, DATA, 0, EV | 4), "OP"),
    "NOTIFY on MSG": ((MSG, 1, 8, DATA, 0, EV | NOTIFY), "OP"),
    "MSG of 0 bytes": ((MSG, 1, 0, DATA, 0, EV), "LENGTH"),
    "MSG above a packet": ((MSG, 1, R.C3_MSG_MAX + 1, DATA, 0, EV), "LENGTH"),
    "RDMA of 0 bytes": ((RDMA, 1, 0, DATA, TARGET, EV), "LENGTH"),
    "RDMA above 128 KB": ((RDMA, 1, R.C3_REQ_MAX + 1, DATA, TARGET, EV), "LENGTH"),
    "MSG to itself": ((MSG, 0, 8, DATA, 0, EV), "DEST"),
    "to no such node": ((RDMA, 4, 8, DATA, TARGET, EV), "DEST"),
    "to node 0xffff": ((MSG, 0xFFFF, 8, DATA, 0, EV), "DEST"),
    "source outside memory": ((RDMA, 1, 8, 0xFEC00000, TARGET, EV), "ADDR"),
    "source past the end": ((MSG, 1, 8, (1 << 64) - 4, 0, EV), "ADDR"),
    "MSG with a target": ((MSG, 1, 8, DATA, TARGET, EV), "ADDR"),
    "target wraps": ((RDMA, 1, 16, DATA, (1 << 64) - 8, EV), "ADDR"),
    "refused without EVENT": ((RDMA, 9, 8, DATA, TARGET, 0), "DEST"),
}


@pytest.mark.parametrize("case", BAD_REQUESTS)
def test_every_error_status_of_a_request(rig, case):
    """A refused request is done at once: status DONE | error, C3_EV_ERROR (and C3_EV_DONE
    with C3_REQF_EVENT), counted, C3_IRQ_ERROR; it moves no byte; the next one goes."""
    (op, dest, length, src, raddr, flags), err = BAD_REQUESTS[case]
    err = getattr(R, f"C3_ERR_{err}")
    rig.bring_up(nodes=4)
    i = rig.post(op, dest, length, src=src, raddr=raddr, tag=0xBAD, flags=flags)
    rig.q.clock_step(100_000)
    assert rig.status(i) == DONE | err
    evs = rig.events()
    want = [dict(kind=R.C3_EV_ERROR, src=0, info=i, tag=0xBAD, len=length, status=err)]
    if flags & EV:
        want.append(dict(kind=R.C3_EV_DONE, src=0, info=i, tag=0xBAD, len=length, status=err))
    assert [{k: e[k] for k in want[0]} for e in evs] == want
    assert all(e["flags"] == R.C3_EVF_PHASE for e in evs)      # a request's, not arriving
    assert rig.reg(R.C3_REG_REQ_ERRORS) == 1 and rig.reg(R.C3_REG_REQ_HEAD) == 1
    assert rig.reg(R.C3_REG_IRQ_STATUS) & R.C3_IRQ_ERROR
    assert f"request 0 (op {op} to node {dest}, {length} bytes) refused" in rig.log.read_text()
    assert rig.fabric.of_type(wire.FRAME) == [] and rig.reg(R.C3_REG_TX_PACKETS) == 0
    # the next request goes
    j = rig.post(MSG, 1, 8, tag=1)
    rig.q.clock_step(100_000)
    assert rig.status(j) == DONE and len(rig.frames(1)) == 1


def test_message_communication_goes_out_as_one_packet(rig):
    rig.bring_up(nodes=4)
    rig.q.memwrite(DATA, bytes(range(200)))
    rig.cache_op(R.C3_CACHE_FLUSH, DATA, 200)
    i = rig.post(MSG, 3, 200, tag=0x1234)
    assert rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_TX_IDLE == 0
    rig.q.clock_step(100_000)
    (f,) = rig.frames(1)
    p = parse_packet(f["payload"])
    assert f["dst"] == 3 and p == dict(kind=R.C3_PKT_MSG, flags=R.C3_PKTF_LAST, src=0, dest=3,
                                       len=200, raddr=0, tag=0x1234, req_len=200,
                                       data=bytes(range(200)))
    assert rig.status(i) == DONE
    (ev,) = rig.events()
    assert (ev["kind"], ev["info"], ev["tag"], ev["len"], ev["status"]) == \
        (R.C3_EV_DONE, i, 0x1234, 200, 0)
    assert ev["t_ns"] == f["time"]              # done when its last packet left
    assert rig.reg(R.C3_REG_TX_PACKETS) == 1 and rig.reg(R.C3_REG_CACHE_MISSES) == 0
    assert rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_TX_IDLE


def test_remote_dma_is_cut_into_packets_of_508_bytes(rig):
    """The interface cuts a request on its own: packets of at most 508 bytes, each with
    the destination's physical address of its data; LAST and NOTIFY on the last only."""
    length = 3 * 508 + 100
    data = bytes((i * 7 + 1) & 0xFF for i in range(length))
    rig.bring_up(nodes=4)
    rig.q.memwrite(DATA + 4, data)
    i = rig.post(RDMA, 2, length, src=DATA + 4, raddr=0x12345678, tag=77, flags=EV | NOTIFY)
    rig.q.clock_step(1_000_000)
    frames = rig.frames(4)
    ps = [parse_packet(f["payload"]) for f in frames]
    assert [p["len"] for p in ps] == [508, 508, 508, 100]
    assert [p["raddr"] for p in ps] == [0x12345678 + k * 508 for k in range(4)]
    assert [p["flags"] for p in ps] == [0, 0, 0, R.C3_PKTF_LAST | R.C3_PKTF_NOTIFY]
    assert all(p["kind"] == R.C3_PKT_RDMA and p["tag"] == 77 and p["req_len"] == length and
               p["dest"] == 2 and f["dst"] == 2 for p, f in zip(ps, frames))
    assert b"".join(p["data"] for p in ps) == data
    assert [len(f["payload"]) for f in frames] == [532, 532, 532, 124]
    assert rig.status(i) == DONE and rig.reg(R.C3_REG_TX_PACKETS) == 4
    # without a flush of its source the request still went, counted as a cache miss
    assert rig.reg(R.C3_REG_CACHE_MISSES) == 1


def test_requests_are_taken_in_order_and_wrap_the_ring(rig):
    """Ten requests through a ring of 4 entries; the DONE events of two laps of a ring of
    4 carry the phase bit 1, then 0, then 1."""
    rig.bring_up(nodes=4, req_size=4, evq_size=4)
    for k in range(10):
        rig.post(MSG, 1 + k % 3, 4 + k, tag=k)
        rig.q.clock_step(50_000)
        (ev,) = rig.events()
        assert (ev["kind"], ev["info"], ev["tag"], ev["len"]) == (R.C3_EV_DONE, k, k, 4 + k)
        assert ev["flags"] == (R.C3_EVF_PHASE if (k // 4) % 2 == 0 else 0), k
        rig.consume()
    assert [parse_packet(f["payload"])["tag"] for f in rig.frames(10)] == list(range(10))
    assert rig.reg(R.C3_REG_REQ_HEAD) == 10 and rig.reg(R.C3_REG_EVQ_HEAD) == 10


def test_doorbell_overrun_and_event_tail_beyond_head_are_refused(rig):
    rig.bring_up(nodes=4, req_size=4)
    rig.set_reg(R.C3_REG_REQ_TAIL, 5)                       # more than the ring holds
    assert rig.reg(R.C3_REG_REQ_TAIL) == 0 and rig.reg(R.C3_REG_ERROR) == R.C3_ERR_LENGTH
    rig.set_reg(R.C3_REG_ERROR, 0)
    rig.set_reg(R.C3_REG_EVQ_TAIL, 1)                       # no event written yet
    assert rig.reg(R.C3_REG_EVQ_TAIL) == 0 and rig.reg(R.C3_REG_ERROR) == R.C3_ERR_LENGTH
    log = rig.log.read_text()
    assert "REQ_TAIL 5: the interface has taken 0 and the ring holds 4" in log
    assert "EVQ_TAIL write 1 refused" in log


def test_messages_go_into_the_sender_s_slots_in_turn(artifacts, tmp_path):
    """MSG packets from node 1 and node 2 go into each sender's own slots, round robin:
    payload at offset 4, header word FULL | len, then C3_EV_MSG naming sender and slot."""
    arrivals = [(1_500_000 + k * 10_000, src, bytes([k]) * (10 + k)) for k, src in
                enumerate((1, 2, 1, 2))]

    def on_sync(m, sent=[]):
        if sent:
            return [wire.grant(0, wire.NEVER)]
        sent.append(1)
        return [*(wire.deliver(0, at, src, msg_from(src, d, tag=100 + k), seq=k)
                  for k, (at, src, d) in enumerate(arrivals)), wire.grant(0, wire.NEVER)]

    rig = Rig(artifacts, tmp_path, nodes=4, on_sync=on_sync)
    try:
        rig.bring_up(nodes=4, slots=2, evq_size=8)          # the packets wait until enabled
        rig.q.clock_step(100_000)
        evs = rig.events()
        assert [(e["kind"], e["src"], e["info"], e["len"], e["tag"]) for e in evs] == \
            [(R.C3_EV_MSG, 1, 0, 10, 100), (R.C3_EV_MSG, 2, 0, 11, 101),
             (R.C3_EV_MSG, 1, 1, 12, 102), (R.C3_EV_MSG, 2, 1, 13, 103)]
        for k, (_, src, d) in enumerate(arrivals):
            hdr, rest = rig.slot(src, k // 2)
            assert hdr == R.C3_SLOT_FULL | len(d) and rest[:len(d)] == d
        assert rig.reg(R.C3_REG_RX_PACKETS) == 4 and rig.reg(R.C3_REG_STALLS) == 0
        assert all(e["flags"] == R.C3_EVF_PHASE for e in evs)
    finally:
        rig.close()


def test_a_full_slot_stalls_and_eventq_tail_resumes_with_nothing_lost(artifacts, tmp_path):
    """Three messages from node 1 with one slot: the second waits for the slot (STATUS
    RX_STALLED, C3_IRQ_STALL once, counted); an EVQ_TAIL write with the slot still full
    changes nothing; freeing it and writing EVQ_TAIL lets the second in, then the third
    waits again; in the end all three arrived, in order."""
    frames = [(1_500_000 + k * 1000, msg_from(1, bytes([0xA0 + k]) * 20, tag=k))
              for k in range(3)]
    rig = Rig(artifacts, tmp_path, on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up(slots=1)
        rig.q.clock_step(100_000)
        (ev,) = rig.events()
        assert ev["tag"] == 0 and rig.slot(1, 0)[1][:20] == bytes([0xA0]) * 20
        assert rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_RX_STALLED
        assert rig.reg(R.C3_REG_IRQ_STATUS) & R.C3_IRQ_STALL
        assert rig.reg(R.C3_REG_STALLS) == 1
        rig.set_reg(R.C3_REG_IRQ_STATUS, R.C3_IRQ_STALL)
        rig.consume()                                       # slot still full
        rig.q.clock_step(100_000)
        assert rig.events() == [] and rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_RX_STALLED
        assert rig.reg(R.C3_REG_IRQ_STATUS) & R.C3_IRQ_STALL == 0     # raised once
        got = [rig.slot(1, 0)[1][:20]]
        for k in (1, 2):
            rig.free_slot(1, 0)
            rig.consume()
            rig.q.clock_step(100_000)
            (ev,) = rig.events()
            assert (ev["kind"], ev["tag"], ev["info"]) == (R.C3_EV_MSG, k, 0)
            got.append(rig.slot(1, 0)[1][:20])
        assert got == [bytes([0xA0 + k]) * 20 for k in range(3)]
        rig.consume()
        assert not rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_RX_STALLED
        assert rig.reg(R.C3_REG_RX_PACKETS) == 3 and rig.reg(R.C3_REG_STALLS) == 2
    finally:
        rig.close()


def test_a_full_event_ring_stalls_receive_and_send_and_resumes(artifacts, tmp_path):
    """An event ring of 2: of five messages arriving, two are written, the third waits for
    room; a request's DONE waits behind it, and no new request is taken meanwhile. Each
    EVQ_TAIL write lets more through, in order; nothing is lost."""
    frames = [(1_500_000 + k * 1000, msg_from(1, bytes([k]) * 8, tag=k)) for k in range(5)]
    rig = Rig(artifacts, tmp_path, on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up(slots=8, evq_size=2)
        rig.q.clock_step(100_000)
        assert [e["tag"] for e in rig.events()] == [0, 1]
        assert rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_RX_STALLED
        rig.post(MSG, 1, 4, tag=50)             # no event waits (the packet does): taken
        rig.q.clock_step(100_000)
        assert len(rig.frames(1)) == 1          # sent; its DONE waits for room
        rig.post(MSG, 1, 4, tag=51)             # not taken while an event waits
        rig.q.clock_step(100_000)
        assert rig.reg(R.C3_REG_REQ_HEAD) == 1
        seen = []
        for _ in range(6):
            seen += [(e["kind"], e["tag"]) for e in rig.events()]
            rig.consume()
            rig.q.clock_step(100_000)
        seen += [(e["kind"], e["tag"]) for e in rig.events()]
        assert seen[:2] == [(R.C3_EV_MSG, 0), (R.C3_EV_MSG, 1)]
        msgs = [t for k, t in seen if k == R.C3_EV_MSG]
        done = [t for k, t in seen if k == R.C3_EV_DONE]
        assert msgs == [0, 1, 2, 3, 4] and done == [50, 51]
        assert rig.reg(R.C3_REG_RX_PACKETS) == 5 and len(rig.frames(2)) == 2
        for k in range(5):
            assert rig.slot(1, k)[1][:8] == bytes([k]) * 8
    finally:
        rig.close()


def test_no_slot_and_bad_slot_addresses_are_refused(artifacts, tmp_path):
    """A message whose sender's table entry is 0 is refused with C3_ERR_NO_SLOT, one whose
    entry is misaligned with C3_ERR_ADDR (C3_EV_ERROR naming the sender, C3_IRQ_ERROR); the
    slot turn stays, so the driver's fresh entry takes the next one."""
    frames = [(1_500_000, 1, msg_from(1, b"x" * 8, tag=1)),
              (1_501_000, 2, msg_from(2, b"y" * 8, tag=2)),
              (3_000_000, 1, msg_from(1, b"z" * 8, tag=3))]
    rig = Rig(artifacts, tmp_path, nodes=3, on_sync=deliver_on_first_sync(frames),
              extra=["-d", "guest_errors"])
    try:
        rig.bring_up(nodes=3, slots=2, table={(1, 0): 0, (2, 0): slot_addr(2, 0) + 8})
        rig.q.clock_step(100_000)
        evs = rig.events()
        assert [(e["kind"], e["src"], e["status"], e["tag"]) for e in evs] == \
            [(R.C3_EV_ERROR, 1, R.C3_ERR_NO_SLOT, 1), (R.C3_EV_ERROR, 2, R.C3_ERR_ADDR, 2)]
        assert all(e["flags"] == R.C3_EVF_PHASE | R.C3_EVF_ARRIVING and e["info"] == 0
                   for e in evs)
        assert rig.reg(R.C3_REG_IRQ_STATUS) & R.C3_IRQ_ERROR
        assert rig.reg(R.C3_REG_RDMA_ERRORS) == 0
        log = rig.log.read_text()
        assert "a MSG packet from node 1 refused: its receive table entry is 0" in log
        assert "a MSG packet from node 2 refused: its receive table entry is misaligned" in log
        # the driver puts a buffer in node 1's entry 0: the next message goes there
        rig.q.memwrite(RXT + 2 * 8, struct.pack("<Q", slot_addr(1, 0)))
        rig.consume()
        rig.q.clock_set(3_100_000)
        (ev,) = rig.events()
        assert (ev["kind"], ev["src"], ev["info"], ev["tag"]) == (R.C3_EV_MSG, 1, 0, 3)
        assert rig.slot(1, 0)[1][:8] == b"z" * 8
    finally:
        rig.close()


def test_remote_dma_writes_at_the_given_physical_addresses_and_notifies(artifacts, tmp_path):
    """RDMA packets from node 1 are written at their raddr without any slot; the last one
    with NOTIFY posts C3_EV_RDMA (tag, the request's length); one aimed outside memory is
    refused (C3_REG_RDMA_ERRORS, C3_EV_ERROR) and the next still goes."""
    a, b = bytes(range(256)) * 2, b"tail" * 25
    frames = [
        (1_500_000, packet(R.C3_PKT_RDMA, 1, 0, a[:508], raddr=TARGET + 1000, tag=9,
                           req_len=608, flags=0)),
        (1_510_000, packet(R.C3_PKT_RDMA, 1, 0, b, raddr=TARGET + 1508, tag=9, req_len=608,
                           flags=R.C3_PKTF_LAST | R.C3_PKTF_NOTIFY)),
        (1_520_000, packet(R.C3_PKT_RDMA, 1, 0, b"bad", raddr=0xFEC00000, tag=10)),
        (1_530_000, packet(R.C3_PKT_RDMA, 1, 0, b"quiet", raddr=TARGET, tag=11)),
    ]
    rig = Rig(artifacts, tmp_path, on_sync=deliver_on_first_sync(frames),
              extra=["-d", "guest_errors"])
    try:
        rig.bring_up()
        rig.q.clock_step(100_000)
        assert rig.q.memread(TARGET + 1000, 608) == a[:508] + b
        assert rig.q.memread(TARGET, 5) == b"quiet"
        evs = rig.events()
        assert [(e["kind"], e["src"], e["tag"], e["len"], e["status"]) for e in evs] == \
            [(R.C3_EV_RDMA, 1, 9, 608, 0), (R.C3_EV_ERROR, 1, 10, 3, R.C3_ERR_ADDR)]
        assert [e["flags"] for e in evs] == [R.C3_EVF_PHASE,
                                             R.C3_EVF_PHASE | R.C3_EVF_ARRIVING]
        assert rig.reg(R.C3_REG_RDMA_ERRORS) == 1 and rig.reg(R.C3_REG_RX_PACKETS) == 4
        assert "a RDMA packet from node 1 refused: its target range is outside memory" in \
            rig.log.read_text()
    finally:
        rig.close()


def test_remote_dma_to_itself_does_not_use_the_network(rig):
    rig.bring_up(nodes=4)
    rig.q.memwrite(DATA, b"loop" * 300)
    i = rig.post(RDMA, 0, 1200, raddr=TARGET, tag=5, flags=EV | NOTIFY)
    rig.q.clock_step(1_000_000)
    assert rig.q.memread(TARGET, 1200) == b"loop" * 300
    assert rig.status(i) == DONE and rig.fabric.of_type(wire.FRAME) == []
    kinds = sorted((e["kind"], e["tag"]) for e in rig.events())
    assert kinds == [(R.C3_EV_RDMA, 5), (R.C3_EV_DONE, 5)]


def test_cache_operations_count_and_the_flush_ledger(rig):
    rig.bring_up(nodes=4)
    rig.cache_op(R.C3_CACHE_FLUSH, DATA, 4096)
    rig.cache_op(R.C3_CACHE_INVAL, TARGET, 100)
    assert rig.reg(R.C3_REG_CACHE_OPS) == 2
    rig.post(MSG, 1, 100, src=DATA + 100)                   # inside the flushed range
    rig.post(MSG, 1, 100, src=DATA + 4000)                  # runs past it
    rig.post(MSG, 1, 100, src=TARGET)                       # invalidated, not flushed
    rig.q.clock_step(100_000)
    assert rig.reg(R.C3_REG_CACHE_MISSES) == 2 and len(rig.frames(3)) == 3
    # the ledger keeps the last 64 flushes: the first is forgotten after 64 more
    for k in range(R.C3_FLUSH_LEDGER):
        rig.cache_op(R.C3_CACHE_FLUSH, TARGET + 0x10000 + k * 64, 32)
    rig.post(MSG, 1, 100, src=DATA + 100)
    rig.q.clock_step(100_000)
    assert rig.reg(R.C3_REG_CACHE_MISSES) == 3
    # refused operations: counted nowhere, error in C3_REG_ERROR
    for op, addr, length, err in ((3, DATA, 64, "OP"), (R.C3_CACHE_FLUSH, DATA, 0, "LENGTH"),
                                  (R.C3_CACHE_FLUSH, DATA, (16 << 20) + 1, "LENGTH"),
                                  (R.C3_CACHE_INVAL, 0xFEC00000, 64, "ADDR")):
        rig.cache_op(op, addr, length)
        assert rig.reg(R.C3_REG_ERROR) == getattr(R, f"C3_ERR_{err}"), (op, length)
    assert rig.reg(R.C3_REG_CACHE_OPS) == 2 + R.C3_FLUSH_LEDGER


def test_reset_clears_everything(rig):
    rig.bring_up(nodes=4)
    rig.post(RDMA, 1, 100_000, raddr=TARGET)
    rig.set_reg(R.C3_REG_CTRL, R.C3_CTRL_RESET)
    for off in (R.C3_REG_CTRL, R.C3_REG_IRQ_MASK, R.C3_REG_REQ_SIZE, R.C3_REG_REQ_TAIL,
                R.C3_REG_REQ_HEAD, R.C3_REG_RXT_SLOTS, R.C3_REG_TX_PACKETS):
        assert rig.reg(off) == 0, off
    assert rig.reg(R.C3_REG_STATUS) == R.C3_STATUS_TX_IDLE
    rig.q.clock_step(10_000_000)
    assert rig.fabric.of_type(wire.FRAME) == []


def test_disable_stops_a_request_at_once(rig):
    rig.bring_up(nodes=4)
    rig.post(RDMA, 1, 20 * 508, raddr=TARGET)
    rig.q.clock_step(12_000)                    # the first packet out, most to come
    sent = len(rig.frames(1))
    rig.set_reg(R.C3_REG_CTRL, 0)
    assert rig.reg(R.C3_REG_STATUS) == R.C3_STATUS_TX_IDLE
    rig.q.clock_step(10_000_000)
    assert len(rig.fabric.of_type(wire.FRAME)) == sent < 20


def test_now_reads_virtual_time(rig):
    t = rig.q.clock_set(T0 + 0x123456789)
    lo = rig.reg(R.C3_REG_NOW_LO)
    assert (rig.reg(R.C3_REG_NOW_HI) << 32 | lo) == t


def test_malformed_packets_from_the_fabric_are_dropped_with_a_warning(artifacts, tmp_path):
    good = msg_from(1, b"ok" * 4, tag=1)
    frames = [(1_500_000, good[:10]),                               # short
              (1_500_001, packet(7, 1, 0, b"x")),                   # unknown kind
              (1_500_002, packet(R.C3_PKT_MSG, 1, 0, b"x" * 509)),  # too long
              (1_500_003, packet(R.C3_PKT_MSG, 2, 0, b"x")),        # src is not the sender
              (1_500_004, packet(R.C3_PKT_MSG, 1, 3, b"x")),        # not for this node
              (1_500_005, good)]
    rig = Rig(artifacts, tmp_path, on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up()
        rig.q.clock_step(100_000)
        assert [e["tag"] for e in rig.events()] == [1]
        log = rig.log.read_text()
        assert log.count("the fabric delivered a malformed packet from node 1") == 5, log
    finally:
        rig.close()


def test_bad_property_values_are_refused(artifacts, tmp_path):
    from retrolink.qtest.client import QtestError
    for prop in ("dma-rate=0", "dma-rate=1000000000001", "reg-access-ns=1000000001",
                 "cache-line-ns=1000001", "start-us=60000001", "node=256"):
        with pytest.raises(QtestError) as e:
            Rig(artifacts, tmp_path, props=prop, fabric=False).close()
        assert "retrolink-cenju3:" in str(e.value), str(e.value)


def test_the_device_defaults_are_the_declared_ones(artifacts):
    qemu_props = device_defaults(artifacts.qemu, "retrolink-cenju3")
    declared = [p for p in params(BOARDS["cenju3"]) if p.qemu]
    assert len(declared) == 7
    for p in declared:
        assert qemu_props[p.qemu] == p.default_text(), p.name


def test_the_fifo_is_bounded_and_the_network_holds_the_rest_in_order(artifacts, tmp_path):
    """1030 remote DMA packets arrive while the interface is off: 1024 wait in its FIFO,
    the network holds the rest (a snapshot then refuses, naming them); once enabled every
    one is written, in arrival order (each overwrites the same word), the last notifying."""
    from snapshots import save
    n = R.C3_RX_FIFO_MAX + 6
    frames = [(1_100_000 + k, packet(R.C3_PKT_RDMA, 1, 0, struct.pack("<II", k, k),
                                     raddr=TARGET + (k % 16) * 8, tag=k,
                                     flags=R.C3_PKTF_LAST | (R.C3_PKTF_NOTIFY if k == n - 1
                                                             else 0)))
              for k in range(n)]
    rig = Rig(artifacts, tmp_path, qmp=True, on_sync=deliver_on_first_sync(frames))
    try:
        rig.q.clock_set(T0)
        assert save(rig.q, tmp_path / "c3.state")["status"] == "failed"
        assert "cannot save the interface; 6 packets held in the network past the FIFO" in \
            rig.log.read_text()
        assert rig.q.qmp("cont") == {"return": {}}
        rig.bring_up(at=T0 + 1000)
        rig.q.clock_step(10_000_000)
        assert rig.reg(R.C3_REG_RX_PACKETS) == n
        words = rig.q.memread(TARGET, 16 * 8)
        assert [struct.unpack_from("<I", words, j * 8)[0] for j in range(16)] == \
            [max(k for k in range(n) if k % 16 == j) for j in range(16)]
        (ev,) = rig.events()
        assert (ev["kind"], ev["tag"]) == (R.C3_EV_RDMA, n - 1)
    finally:
        rig.close()


def test_a_realize_that_fails_part_way_leaves_nothing_behind(asan_qemu, tmp_path):
    """Hotplugged (ASan/UBSan QEMU): one that cannot reach its fabric, one with a bad
    property, then a good one in the same slot; the clock runs between them."""
    from retrolink.fuzz.engine import SANITIZER_ENV
    from retrolink.qtest.client import Qtest
    q = Qtest(asan_qemu, ["-device", "pcie-root-port,id=rp"], tmp_path / "qemu.log",
              env=SANITIZER_ENV, qmp=True)
    try:
        r = q.qmp("device_add", driver="retrolink-cenju3", bus="rp",
                  fabric=str(tmp_path / "none"))
        assert "retrolink-cenju3: " in r["error"]["desc"], r
        r = q.qmp("device_add", driver="retrolink-cenju3", bus="rp", **{"dma-rate": 0})
        assert "dma-rate must be" in r["error"]["desc"], r
        q.clock_step(2_000_000)
        assert q.qmp("device_add", driver="retrolink-cenju3", bus="rp", id="c3") == \
            {"return": {}}
        q.clock_step(2_000_000)
    finally:
        status = q.close()
    log = (tmp_path / "qemu.log").read_text()
    assert status == 0 and "Sanitizer" not in log, log[-3000:]


def test_a_busy_interface_under_asan(asan_qemu, tmp_path):
    """Requests, a stalled receive side, events waiting, then disable and reset with all of
    it in flight, on the ASan/UBSan QEMU: no report."""
    from retrolink.fuzz.engine import SANITIZER_ENV
    frames = [(T0 + 1000 + k * 100, msg_from(1, bytes([k]) * 300, tag=k)) for k in range(40)]
    rig = Rig(None, tmp_path, qemu=asan_qemu, env=SANITIZER_ENV,
              on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up(slots=2, evq_size=2)
        rig.post(RDMA, 1, 50_000, raddr=TARGET, flags=EV | NOTIFY)
        rig.post(RDMA, 0, 3000, raddr=TARGET)
        rig.q.clock_step(30_000)
        assert rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_RX_STALLED
        rig.consume()
        rig.q.clock_step(30_000)
        rig.set_reg(R.C3_REG_CTRL, 0)
        rig.q.clock_step(30_000)
        rig.set_reg(R.C3_REG_CTRL, R.C3_CTRL_ENABLE)
        rig.q.clock_step(30_000)
        rig.set_reg(R.C3_REG_CTRL, R.C3_CTRL_RESET)
        rig.q.clock_step(1_000_000)
    finally:
        status = rig.close()
    log = rig.log.read_text()
    assert status == 0 and "Sanitizer" not in log and "runtime error" not in log, log[-3000:]


def test_trace_events_show_requests_packets_and_events(artifacts, tmp_path):
    """-trace 'retrolink_c3_*' (qemu/trace-events): accesses, a request taken and one
    refused, the packet out, the event written."""
    trace = tmp_path / "trace.txt"
    rig = Rig(artifacts, tmp_path, nodes=4,
              extra=["-trace", f"enable=retrolink_c3_*,file={trace}"])
    try:
        rig.bring_up(nodes=4)
        rig.post(MSG, 2, 16, tag=1)
        rig.post(MSG, 9, 16, tag=2)
        rig.q.clock_step(100_000)
    finally:
        rig.close()
    text = trace.read_text()
    for what in ("retrolink_c3_reg_write node 0: write REQ_TAIL (0x80) = 0x1",
                 "retrolink_c3_take node 0: request 0 taken, op 1 to node 2, 16 bytes",
                 "retrolink_c3_refused node 0: request 1 refused, C3_ERR 2",
                 "retrolink_c3_packet_out node 0: packet to node 2, kind 1, 16 bytes",
                 "retrolink_c3_event node 0: event 0 kind 3"):
        assert what in text, (what, text[-2000:])


def test_interrupts_intx_and_msi_only_for_unmasked_causes(rig):
    """INTx follows IRQ_STATUS & IRQ_MASK (raised by an event, lowered by the write-1-to-
    clear); with MSI on, each unmasked cause writes the message (aimed at guest RAM here,
    so the test can see it), a masked one does not."""
    q = rig.q
    rig.bring_up(nodes=4, irq_mask=0)
    q.cmd("irq_intercept_in ioapic")
    rig.post(MSG, 1, 8)                                 # masked: no interrupt
    q.clock_step(100_000)
    assert rig.reg(R.C3_REG_IRQ_STATUS) == R.C3_IRQ_EVENT
    assert not any(line.startswith("IRQ raise") for line in q.async_lines)
    rig.set_reg(R.C3_REG_IRQ_MASK, R.C3_IRQ_EVENT)      # now pending and unmasked: up
    assert any(line.startswith("IRQ raise") for line in q.async_lines), q.async_lines
    q.async_lines.clear()
    rig.set_reg(R.C3_REG_IRQ_STATUS, R.C3_IRQ_EVENT)
    assert any(line.startswith("IRQ lower") for line in q.async_lines), q.async_lines
    # MSI, its message aimed at guest RAM
    box = 0x00300000
    q.msi_to_ram(q.find_pci(R.C3_PCI_VENDOR_ID, R.C3_PCI_DEVICE_ID), box, 0x4321)
    rig.set_reg(R.C3_REG_IRQ_MASK, R.C3_IRQ_ERROR)
    rig.consume()
    rig.post(MSG, 1, 8)                                 # an event: masked
    q.clock_step(100_000)
    assert q.memread(box, 4) == bytes(4)
    rig.post(MSG, 9, 8)                                 # refused: ERROR, unmasked
    q.clock_step(100_000)
    assert int.from_bytes(q.memread(box, 4), "little") == 0x4321
