"""qtest: the VIA NIC's behaviour rules (via-regs.h) with descriptors as VIPL lays them
out in registered memory and a fake switch playing the other NICs: protection errors
(nothing read or written, no data frame), format and length errors, a receive into
segments with its Status, Length and ImmediateData and the ACK (to the ns), a message with
no receive descriptor (both VIs broken, descriptors flushed), CQ entries and overflow,
datagrams and broadcast, BREAK, the connection mailbox."""
import pytest
from via_model import Nic, defaults
from via_rig import (DATA_PAGES, HANDLE, INVALID_HANDLE, INVALID_VA, OTHER_HANDLE, OTHER_VA,
                     PAGE, RO_HANDLE, RO_VA, VA, Rig, descriptor, wire_frame)

from retrolink.qtest.via_regs import R, cm_rx_word, vi_errors_reg

P = defaults()
DONE = R.VIP_STATUS_DONE
RECV = R.VIP_STATUS_DONE | R.VIP_STATUS_OP_RECEIVE
T = 2_200_000


def pattern(n: int, k: int = 11) -> bytes:
    return bytes((i * k + 1) & 0xFF for i in range(n))


def kinds(rig) -> list[int]:
    return [f["type"] for f in rig.wait_frames(1)]


SEND_PROTECTION = {
    "unregistered handle": (9, VA + 0x4000, 100),
    "outside its region": (HANDLE, VA + DATA_PAGES * PAGE - 10, 100),
    "region of another tag": (OTHER_HANDLE, OTHER_VA, 100),
    "TPT entry invalid": (INVALID_HANDLE, INVALID_VA, 100),
}


@pytest.mark.parametrize("case", SEND_PROTECTION)
def test_send_protection_error(artifacts, tmp_path, case):
    """A send naming memory it may not read completes with PROTECTION_ERROR at the model's
    time (fetch, check, Status write); no data frame leaves; the VI breaks (BREAK to its
    peer, VIA_IRQ_ERROR, its bit in VI_ERRORS) and the send posted after it is flushed."""
    handle, va, n = SEND_PROTECTION[case]
    rig = Rig(artifacts, tmp_path)
    try:
        rig.bring_up()
        rig.connect(5, peer=(2, 1))
        rig.mem(0, descriptor([(va, handle, n)]))
        rig.mem(64, descriptor([(VA + 0x4000, HANDLE, 10)]))
        before = rig.read(0x4000, 4096)
        t = rig.q.clock_set(T)
        done = Nic(P).error_send(t + P["pio_write"])
        rig.post(5, 0, 0)
        rig.post(5, 0, 64)
        rig.q.clock_set(done - 1)
        assert rig.desc(0)["status"] == 0
        rig.q.clock_set(done)
        assert rig.desc(0)["status"] == DONE | R.VIP_STATUS_PROTECTION_ERROR
        rig.q.clock_step(10**6)
        assert rig.desc(64)["status"] == DONE | R.VIP_STATUS_DESC_FLUSHED_ERROR
        assert kinds(rig) == [R.VIA_F_BREAK]
        brk = rig.frames()[0]
        assert (brk["dst"], brk["src_vi"], brk["dst_vi"]) == (2, 5, 1)
        assert rig.db(5, R.VIA_DB_STATE) == R.VIA_VI_ERROR
        assert rig.reg(vi_errors_reg(0)) == 1 << 5
        assert rig.reg(R.VIA_REG_IRQ_STATUS) & R.VIA_IRQ_ERROR
        assert rig.reg(R.VIA_REG_DESC_ERRORS) == 2 and rig.reg(R.VIA_REG_TX_MSGS) == 0
        assert rig.read(0x4000, 4096) == before
    finally:
        rig.close()


FORMAT = {
    "17 segments": (dict(seg_count=17), R.VIP_STATUS_FORMAT_ERROR),
    "RDMA write": (dict(control=R.VIP_CONTROL_OP_RDMAWRITE), R.VIP_STATUS_FORMAT_ERROR),
    "reserved control bit": (dict(control=0x10), R.VIP_STATUS_FORMAT_ERROR),
    "length not the segments' sum": (dict(length=99), R.VIP_STATUS_LENGTH_ERROR),
    "above VIA_MAX_MSG": (dict(length=R.VIA_MAX_MSG + 1, n=R.VIA_MAX_MSG + 1),
                          R.VIP_STATUS_LENGTH_ERROR),
}


@pytest.mark.parametrize("case", FORMAT)
def test_format_and_length_errors(artifacts, tmp_path, case):
    """On a datagram VI: the descriptor completes with its error, nothing is sent, the VI
    stays in DATAGRAM mode and its next send goes."""
    kw, status = FORMAT[case]
    kw = dict(kw)
    n = kw.pop("n", 100)
    rig = Rig(artifacts, tmp_path)
    try:
        rig.bring_up()
        assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == 0
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, n)], reserved=1, **kw))
        rig.mem(64, descriptor([(VA + 0x4000, HANDLE, 10)], reserved=3))
        rig.post(2, 0, 0)
        rig.post(2, 0, 64)
        rig.q.clock_step(10**6)
        assert rig.desc(0)["status"] == DONE | status
        assert rig.desc(64)["status"] == DONE
        assert [(f["type"], f["dst"], len(f["payload"])) for f in rig.wait_frames(1)] == \
            [(R.VIA_F_DGRAM, 3, 10)]
        assert rig.db(2, R.VIA_DB_STATE) == R.VIA_VI_DATAGRAM
        assert rig.db(2, R.VIA_DB_SQ_DONE) == 2
    finally:
        rig.close()


def data_frames(msg: bytes, src_vi: int, dst_vi: int, seq: int = 0, imm: int | None = None,
                type_=R.VIA_F_DATA) -> list[bytes]:
    out = []
    for off in range(0, max(len(msg), 1), R.VIA_FRAME_PAYLOAD):
        piece = msg[off:off + R.VIA_FRAME_PAYLOAD]
        flags = (R.VIA_FF_FIRST if off == 0 else 0) | \
            (R.VIA_FF_LAST if off + len(piece) == len(msg) else 0) | \
            (R.VIA_FF_IMMEDIATE if imm is not None else 0)
        out.append(wire_frame(type_, src_vi=src_vi, dst_vi=dst_vi, seq=seq, offset=off,
                              msg_len=len(msg), payload=piece, flags=flags,
                              immediate=imm or 0))
    return out


def test_receive_timed_with_immediate_data(artifacts, tmp_path):
    """A 5000-byte message with ImmediateData from node 1's VI 9 into VI 4's receive
    descriptor of two segments: the data lands across them, Length, ImmediateData and
    Status are written, and the ACK leaves, at the model's times; a CQ entry follows."""
    msg = pattern(5000)
    arrivals = [T + 100_000 + 20_000 * i for i in range(3)]
    frames = [(at, 1, f) for at, f in zip(arrivals, data_frames(msg, 9, 4, imm=0xABCD1234))]
    nic = Nic(P)
    written, ack = nic.receive([(at, len(f) - 32) for at, (_, _, f) in zip(arrivals, frames)],
                               segs=2)
    cqe = nic.cqe(written)
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        assert rig.cq(0) == 0
        rig.connect(4, peer=(1, 9), rcq=0)
        rig.mem(0x100, descriptor([(VA + 0x8000, HANDLE, 3000), (VA + 0xA000, HANDLE, 4000)],
                                  length=0))
        rig.q.clock_set(T)
        rig.post(4, 1, 0x100)
        rig.q.clock_set(written - 1)
        assert rig.desc(0x100)["status"] == 0
        rig.q.clock_set(written)
        d = rig.desc(0x100)
        assert (d["status"], d["length"], d["immediate"]) == \
            (RECV | R.VIP_STATUS_IMMEDIATE, 5000, 0xABCD1234)
        assert rig.read(0x8000, 3000) + rig.read(0xA000, 2000) == msg
        assert rig.read(0xA000 + 2000, 16) == bytes(16)
        rig.q.clock_set(ack)
        acks = rig.wait_frames(1)
        assert [(f["time"], f["type"], f["dst"], f["src_vi"], f["dst_vi"], f["seq"],
                 f["status"]) for f in acks] == \
            [(ack, R.VIA_F_ACK, 1, 4, 9, 0, RECV | R.VIP_STATUS_IMMEDIATE)]
        rig.q.clock_set(cqe)
        assert rig.cq_entries(0, 2) == [(R.VIA_CQE_VALID | 1 << 16 | 4, 0), (0, 0)]
        assert rig.reg(R.VIA_REG_RX_MSGS) == 1 and rig.db(4, R.VIA_DB_RQ_DONE) == 1
    finally:
        rig.close()


def test_receive_protection_and_length(artifacts, tmp_path):
    """A receive descriptor on a read-only TPT entry: PROTECTION_ERROR, memory untouched,
    the ACK says so and the VI breaks. On another VI a message larger than the receive's
    segments: LENGTH_ERROR on the receive."""
    msg = pattern(300)
    frames = [(T + 100_000, 1, data_frames(msg, 9, 4)[0]),
              (T + 200_000, 2, data_frames(msg, 3, 6)[0])]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.connect(4, peer=(1, 9))
        rig.connect(6, peer=(2, 3))
        before = rig.q.memread(0x200000 + 32 * PAGE, PAGE)
        rig.mem(0, descriptor([(RO_VA, RO_HANDLE, 1000)], length=0))
        rig.mem(64, descriptor([(VA + 0x4000, HANDLE, 299)], length=0))
        rig.post(4, 1, 0)
        rig.post(6, 1, 64)
        rig.q.clock_set(T + 300_000)
        assert rig.desc(0)["status"] == RECV | R.VIP_STATUS_PROTECTION_ERROR
        assert rig.desc(64)["status"] == RECV | R.VIP_STATUS_LENGTH_ERROR
        assert rig.q.memread(0x200000 + 32 * PAGE, PAGE) == before
        assert rig.read(0x4000, 300) == bytes(300)
        acks = [(f["dst"], f["dst_vi"], f["status"]) for f in rig.wait_frames(2)]
        assert acks == [(1, 9, RECV | R.VIP_STATUS_PROTECTION_ERROR),
                        (2, 3, RECV | R.VIP_STATUS_LENGTH_ERROR)]
        assert rig.db(4, R.VIA_DB_STATE) == R.VIA_VI_ERROR
        assert rig.db(6, R.VIA_DB_STATE) == R.VIA_VI_ERROR
        assert rig.reg(vi_errors_reg(0)) == (1 << 4) | (1 << 6)
    finally:
        rig.close()


def test_no_receive_descriptor_breaks_both_vis(artifacts, tmp_path):
    """A message to a VI with no receive posted: the ACK carries TRANSPORT_ERROR and the VI
    breaks, flushing its posted send; at the sender, that ACK completes the send with
    TRANSPORT_ERROR and flushes the next one (sent meanwhile, waiting for its own ACK) and
    the posted receive."""
    msg = pattern(100)
    ack_err = wire_frame(R.VIA_F_ACK, src_vi=9, dst_vi=1, seq=0,
                         status=RECV | R.VIP_STATUS_TRANSPORT_ERROR)
    frames = [(T + 100_000, 1, data_frames(msg, 9, 4)[0]), (T + 150_000, 2, ack_err)]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.connect(4, peer=(1, 9))          # receives with nothing posted
        rig.connect(1, peer=(2, 9))          # sends; its peer has no receive
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 100)]))
        rig.mem(64, descriptor([(VA + 0x4000, HANDLE, 100)]))
        rig.mem(128, descriptor([(VA + 0x5000, HANDLE, 100)], length=0))
        rig.q.clock_set(T)
        rig.post(1, 0, 0)
        rig.post(1, 0, 64)
        rig.post(1, 1, 128)
        rig.q.clock_set(T + 300_000)
        out = [(f["type"], f["dst"], f["status"]) for f in rig.wait_frames(3)]
        assert out == [(R.VIA_F_DATA, 2, 0), (R.VIA_F_DATA, 2, 0),
                       (R.VIA_F_ACK, 1, R.VIP_STATUS_TRANSPORT_ERROR)]
        assert rig.desc(0)["status"] == DONE | R.VIP_STATUS_TRANSPORT_ERROR
        assert rig.desc(64)["status"] == DONE | R.VIP_STATUS_DESC_FLUSHED_ERROR
        assert rig.desc(128)["status"] == RECV | R.VIP_STATUS_DESC_FLUSHED_ERROR
        assert rig.db(4, R.VIA_DB_STATE) == R.VIA_VI_ERROR
        assert rig.db(1, R.VIA_DB_STATE) == R.VIA_VI_ERROR
        assert rig.reg(vi_errors_reg(0)) == (1 << 4) | (1 << 1)
        # DISCONNECT takes it back to IDLE; receives may be posted again
        assert rig.vi_cmd(1, R.VIA_VI_CMD_DISCONNECT) == 0
        assert rig.db(1, R.VIA_DB_STATE) == R.VIA_VI_IDLE
    finally:
        rig.close()


def test_cq_entries_and_overflow(artifacts, tmp_path):
    """Three completions into a CQ of two entries nobody consumes: two entries, then an
    overflow (CQ_STATUS, CQ_ERRORS, VIA_IRQ_ERROR); an armed CQ raises DONE with its bit."""
    rig = Rig(artifacts, tmp_path)
    try:
        rig.bring_up()
        assert rig.cq(3, entries=2) == 0
        assert rig.vi_cmd(7, R.VIA_VI_CMD_OPEN, rcq=3) == 0
        rig.set_reg(R.VIA_REG_ARM, 0x10000 | 3)
        for off in (0, 64, 128):
            rig.post(7, 1, off)
        assert rig.vi_cmd(7, R.VIA_VI_CMD_CLOSE) == 0
        rig.q.clock_step(10**6)
        assert rig.cq_entries(3, 2) == [(R.VIA_CQE_VALID | 1 << 16 | 7, 0),
                                        (R.VIA_CQE_VALID | 1 << 16 | 7, 1)]
        rig.set_reg(R.VIA_REG_CQ_INDEX, 3)
        assert rig.reg(R.VIA_REG_CQ_COUNT) == 2
        assert rig.reg(R.VIA_REG_CQ_STATUS) == R.VIA_CQ_ACTIVE | R.VIA_CQ_OVERFLOW
        assert rig.reg(R.VIA_REG_CQ_ERRORS) == 1 << 3
        assert rig.reg(R.VIA_REG_CQ_EVENTS) == 1 << 3
        assert rig.reg(R.VIA_REG_IRQ_STATUS) == R.VIA_IRQ_ERROR | R.VIA_IRQ_DONE
        assert rig.db(7, R.VIA_DB_RQ_DONE) == 3
    finally:
        rig.close()


def test_datagram_broadcast_timed(artifacts, tmp_path):
    """A broadcast datagram of 3000 bytes: each piece read once, a frame copy built for
    each other node, in node order; the send completes when its last copy has left."""
    msg = pattern(3000)
    nic = Nic(P)
    outs = nic.send(T + P["pio_write"], len(msg), copies=3)
    done = nic.status(outs[-1])
    rig = Rig(artifacts, tmp_path)
    try:
        rig.bring_up()
        assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == 0
        rig.mem(0x4000, msg)
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 3000)], reserved=R.VIA_DEST_BROADCAST,
                              control=R.VIP_CONTROL_IMMEDIATE, immediate=77))
        rig.q.clock_set(T)
        rig.post(2, 0, 0)
        rig.q.clock_set(outs[-1])
        frames = rig.wait_frames(6)
        assert [(f["time"], f["dst"], f["type"], f["offset"]) for f in frames] == \
            [(t, d, R.VIA_F_DGRAM, off) for t, (off, d) in
             zip(outs, [(0, 1), (0, 2), (0, 3), (2048, 1), (2048, 2), (2048, 3)])]
        assert all(f["immediate"] == 77 and f["src_vi"] == 2 and f["dst_vi"] == 2
                   for f in frames)
        assert frames[0]["payload"] + frames[3]["payload"] == msg
        rig.q.clock_set(done - 1)
        assert rig.desc(0)["status"] == 0
        rig.q.clock_set(done)
        assert rig.desc(0)["status"] == DONE
    finally:
        rig.close()


def test_datagram_receive_and_drops(artifacts, tmp_path):
    """A datagram to a VI in datagram mode with a receive posted lands; one to a VI with
    none, and one to a VI not in datagram mode, are dropped and counted."""
    msg = pattern(50)
    frames = [(T + 100_000, 3, data_frames(msg, 2, 2, type_=R.VIA_F_DGRAM)[0]),
              (T + 110_000, 3, data_frames(msg, 2, 2, type_=R.VIA_F_DGRAM)[0]),
              (T + 120_000, 3, data_frames(msg, 5, 5, type_=R.VIA_F_DGRAM)[0])]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == 0
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 64)], length=0))
        rig.post(2, 1, 0)
        rig.q.clock_set(T + 300_000)
        d = rig.desc(0)
        assert (d["status"], d["length"]) == (RECV, 50)
        assert rig.read(0x4000, 50) == msg
        assert rig.reg(R.VIA_REG_RX_DROPS) == 2 and rig.reg(R.VIA_REG_RX_MSGS) == 1
        assert rig.frames() == []                       # no ACK for a datagram
    finally:
        rig.close()


@pytest.mark.parametrize("type_", [R.VIA_F_DGRAM, R.VIA_F_DATA])
def test_a_message_right_behind_another_waits_for_its_write(artifacts, tmp_path, type_):
    """A short message whose frame arrives while the DMA still writes the last frame of
    the one before (a large IP fragment, then the small last one) is taken once that write
    ends: both land, in order, nothing dropped."""
    big, small = pattern(4096), pattern(50, 7)
    first = data_frames(big, 9, 2, type_=type_)
    second = data_frames(small, 9, 2, seq=1, type_=type_)
    frames = [(T + 100_000, 1, first[0]), (T + 117_000, 1, first[1]),
              (T + 117_600, 1, second[0])]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        if type_ == R.VIA_F_DGRAM:
            assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == 0
        else:
            rig.connect(2, peer=(1, 9))
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 4096)], length=0))
        rig.mem(0x100, descriptor([(VA + 0x6000, HANDLE, 64)], length=0))
        rig.post(2, 1, 0)
        rig.post(2, 1, 0x100)
        rig.q.clock_set(T + 300_000)
        assert [(rig.desc(a)["status"], rig.desc(a)["length"]) for a in (0, 0x100)] == \
            [(RECV, 4096), (RECV, 50)]
        assert rig.read(0x4000, 4096) == big and rig.read(0x6000, 50) == small
        assert rig.reg(R.VIA_REG_RX_DROPS) == 0 and rig.reg(R.VIA_REG_RX_MSGS) == 2
        assert rig.db(2, R.VIA_DB_RQ_DONE) == 2
    finally:
        rig.close()


def two_frames_written(a1: int, a2: int) -> tuple[int, int]:
    """A 4096-byte message's two frames arriving at a1 and a2 (one receive descriptor):
    when the NIC has checked the second, and when its data is written (receive())."""
    nic = Nic(P)
    c1 = nic.engine(a1, P["frame"])
    ready = nic.fetch(c1, 1)
    nic.dma(max(c1, ready), 2048)
    c2 = nic.engine(a2, P["frame"])
    return c2, nic.dma(max(c2, ready), 2048)


def test_frames_behind_a_waiting_frame_wait_behind_it(artifacts, tmp_path):
    """A two-frame datagram message right behind another: its first frame comes while
    the write of the one before still runs, and waits for it; its second comes once that
    write is over but before the NIC has checked the first. The NIC takes them in the
    order they came: both messages land, nothing is dropped (taking the second at once
    found no message under way, dropped it, and left the first waiting for ever)."""
    big, nxt = pattern(4096), pattern(2098, 5)
    first = data_frames(big, 2, 2, type_=R.VIA_F_DGRAM)
    second = data_frames(nxt, 2, 2, seq=1, type_=R.VIA_F_DGRAM)
    a1, a2 = T + 100_000, T + 117_000
    _, end = two_frames_written(a1, a2)
    assert P["frame"] > 70          # the second frame comes before the first is checked
    frames = [(a1, 1, first[0]), (a2, 1, first[1]),
              (end - 50, 1, second[0]), (end + 20, 1, second[1])]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == 0
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 4096)], length=0))
        rig.mem(0x100, descriptor([(VA + 0x6000, HANDLE, 4096)], length=0))
        rig.post(2, 1, 0)
        rig.post(2, 1, 0x100)
        rig.q.clock_set(T + 300_000)
        assert [(rig.desc(a)["status"], rig.desc(a)["length"]) for a in (0, 0x100)] == \
            [(RECV, 4096), (RECV, 2098)]
        assert rig.read(0x4000, 4096) == big and rig.read(0x6000, 2098) == nxt
        assert rig.reg(R.VIA_REG_RX_DROPS) == 0 and rig.reg(R.VIA_REG_RX_MSGS) == 2
    finally:
        rig.close()


def test_a_frame_that_waits_again_keeps_its_place(artifacts, tmp_path):
    """Three two-frame datagrams back to back. The second's frames wait for the first's
    write; the third's first frame comes just before that write ends and is checked
    just after, by when the second message is being written, so it waits again; the
    third's second frame comes in between. The NIC keeps them in the order they came:
    all three land, nothing is dropped (the second frame used to be taken before the
    first it had waited behind: dropped, and the first left opening a message that the
    next message's frames could never complete)."""
    msgs = [pattern(4096), pattern(2098, 5), pattern(2100, 7)]
    frames1, frames2, frames3 = (data_frames(m, 2, 2, seq=i, type_=R.VIA_F_DGRAM)
                                 for i, m in enumerate(msgs))
    a1, a2 = T + 100_000, T + 117_000
    c2, end = two_frames_written(a1, a2)
    assert end - c2 > 1_000 and P["frame"] > 70
    frames = [(a1, 1, frames1[0]), (a2, 1, frames1[1]),
              (c2 + 200, 1, frames2[0]), (c2 + 400, 1, frames2[1]),
              (end - 50, 1, frames3[0]), (end + 20, 1, frames3[1])]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == 0
        for i in range(3):
            rig.mem(0x100 * i, descriptor([(VA + 0x4000 + 0x2000 * i, HANDLE, 8192)],
                                          length=0))
            rig.post(2, 1, 0x100 * i)
        rig.q.clock_set(T + 400_000)
        assert [(rig.desc(0x100 * i)["status"], rig.desc(0x100 * i)["length"])
                for i in range(3)] == [(RECV, len(m)) for m in msgs]
        assert [rig.read(0x4000 + 0x2000 * i, len(m)) for i, m in enumerate(msgs)] == msgs
        assert rig.reg(R.VIA_REG_RX_DROPS) == 0 and rig.reg(R.VIA_REG_RX_MSGS) == 3
    finally:
        rig.close()


def test_a_dropped_message_is_dropped_to_its_last_frame(artifacts, tmp_path):
    """A two-frame datagram that finds no receive descriptor is one drop, and the NIC
    follows its frames to the last: the next message, with a descriptor posted, lands
    (a dropped message's second frame counted as another drop and left the VI waiting
    for a frame that never came, every later message dropped)."""
    lost, nxt = pattern(3000), pattern(50, 3)
    frames = [(T + 100_000 + 20_000 * i, 1, f) for i, f in
              enumerate(data_frames(lost, 2, 2, type_=R.VIA_F_DGRAM) +
                        data_frames(nxt, 2, 2, seq=1, type_=R.VIA_F_DGRAM))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == 0
        rig.q.clock_set(T + 130_000)             # the first message has come: nothing posted
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 64)], length=0))
        rig.post(2, 1, 0)
        rig.q.clock_set(T + 300_000)
        assert (rig.desc(0)["status"], rig.desc(0)["length"]) == (RECV, 50)
        assert rig.read(0x4000, 50) == nxt
        assert rig.reg(R.VIA_REG_RX_DROPS) == 1 and rig.reg(R.VIA_REG_RX_MSGS) == 1
    finally:
        rig.close()


def test_break_from_the_peer(artifacts, tmp_path):
    brk = wire_frame(R.VIA_F_BREAK, src_vi=9, dst_vi=4)
    rig = Rig(artifacts, tmp_path, frames=[(T + 100_000, 1, brk),
                                           (T + 100_000, 2, brk)])
    try:
        rig.bring_up()
        rig.connect(4, peer=(1, 9))
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 10)], length=0))
        rig.post(4, 1, 0)
        rig.q.clock_set(T + 200_000)
        assert rig.db(4, R.VIA_DB_STATE) == R.VIA_VI_ERROR
        assert rig.desc(0)["status"] == RECV | R.VIP_STATUS_DESC_FLUSHED_ERROR
        assert rig.frames() == []
    finally:
        rig.close()


def test_connection_mailbox(artifacts, tmp_path):
    """CM messages queue (VIA_IRQ_CM), the head is read and popped; the 17th finds the
    mailbox full and is dropped and counted."""
    words = lambda k: b"".join((k * 100 + i).to_bytes(4, "little") for i in range(8))  # noqa
    frames = [(T + 100_000 + 1000 * k, 1 + k % 3, wire_frame(R.VIA_F_CM, src_node=1 + k % 3,
                                                             payload=words(k)))
              for k in range(R.VIA_CM_FIFO + 1)]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.q.clock_set(T + 200_000)
        assert rig.reg(R.VIA_REG_IRQ_STATUS) & R.VIA_IRQ_CM
        assert rig.reg(R.VIA_REG_CM_RX_COUNT) == R.VIA_CM_FIFO
        assert rig.reg(R.VIA_REG_RX_DROPS) == 1
        for k in range(R.VIA_CM_FIFO):
            assert rig.reg(R.VIA_REG_CM_RX_SRC) == 1 + k % 3
            assert [rig.reg(cm_rx_word(i)) for i in range(8)] == \
                [k * 100 + i for i in range(8)]
            rig.set_reg(R.VIA_REG_CM_RX_POP, 0)
        assert rig.reg(R.VIA_REG_CM_RX_COUNT) == 0
        rig.set_reg(R.VIA_REG_CM_RX_POP, 0)
        assert rig.reg(R.VIA_REG_CM_RX_COUNT) == 0
    finally:
        rig.close()
