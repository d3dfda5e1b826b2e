"""qtest: the VIA NIC's sends and receives on a fake switch, every frame's leaving and
every Status write timed to the ns against an independent model of its components
(via_model.py), from the parameters src/retrolink/boards/via.py declares:
- every BAR store costs pio-write-ns, and a post's descriptor fetch starts at its end;
- a DMA transfer costs dma-setup-ns and its bytes at dma-rate, one at a time;
- the NIC's engine checks a descriptor in desc-ns and builds or checks a frame in
  frame-ns, one job at a time;
- a connected send completes when its ACK has been checked; the receiver ACKs once its
  receive descriptor's Status write-back has ended."""
import pytest
from via_model import FRAME, Nic, defaults, props
from via_rig import DATA, HANDLE, VA, Rig, descriptor, wire_frame

from retrolink.qtest.via_regs import R

P = defaults()
SLOW = dict(P, dma_rate=50_000_000, dma_setup=900, desc=2500, frame=700, pio_write=400)
DONE_SEND = R.VIP_STATUS_DONE
DONE_RECV = R.VIP_STATUS_DONE | R.VIP_STATUS_OP_RECEIVE


def pattern(n: int, k: int = 7) -> bytes:
    return bytes((i * k + 3) & 0xFF for i in range(n))


def status_at(rig, off: int, when: int, value: int) -> None:
    """The descriptor at off gets its Status exactly at `when`."""
    rig.q.clock_set(when - 1)
    assert rig.desc(off)["status"] == 0
    rig.q.clock_set(when)
    assert rig.desc(off)["status"] == value


@pytest.mark.parametrize("p", [P, SLOW], ids=["defaults", "slow"])
@pytest.mark.parametrize("length", [0, 100, FRAME, 3 * FRAME + 5])
def test_connected_send(artifacts, tmp_path, p, length):
    """A send of `length` bytes on VI 3 connected to node 1's VI 7: its frames leave at the
    model's times with the data, and its Status is written once the ACK is checked."""
    t = 2_200_000
    nic = Nic(p)
    outs = nic.send(t + p["pio_write"], length)
    # the ACK arrives 5 us after the last frame left
    ack_at = outs[-1] + 5000
    ack = wire_frame(R.VIA_F_ACK, src_vi=7, dst_vi=3, seq=0, status=DONE_RECV)
    _, done = nic.ack(ack_at)
    cqe = nic.cqe(done)
    rig = Rig(artifacts, tmp_path, props=props(p), frames=[(ack_at, 1, ack)])
    try:
        rig.bring_up()
        assert rig.cq(2) == 0
        rig.connect(3, peer=(1, 7), scq=2)
        assert rig.q.clock_set(t) == t
        data = pattern(length)
        rig.mem(0x4000, data)
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, length)]))
        rig.post(3, 0, 0)
        rig.q.clock_set(outs[-1] - 1)
        if len(outs) > 1:
            rig.wait_frames(len(outs) - 1)
        assert len(rig.frames()) == len(outs) - 1
        rig.q.clock_set(outs[-1])
        frames = rig.wait_frames(len(outs))
        assert [f["time"] for f in frames] == outs
        assert b"".join(f["payload"] for f in frames) == data
        assert all(f["dst"] == 1 and f["type"] == R.VIA_F_DATA and f["src_vi"] == 3 and
                   f["dst_vi"] == 7 and f["msg_len"] == length for f in frames)
        assert frames[0]["flags"] & R.VIA_FF_FIRST and frames[-1]["flags"] & R.VIA_FF_LAST
        status_at(rig, 0, done, DONE_SEND)
        rig.q.clock_set(cqe - 1)
        assert rig.cq_entries(2, 1) == [(0, 0)]
        rig.q.clock_set(cqe)
        assert rig.cq_entries(2, 1) == [(R.VIA_CQE_VALID | 3, 0)]
        assert rig.db(3, R.VIA_DB_SQ_DONE) == 1
        assert rig.reg(R.VIA_REG_TX_MSGS) == 1
    finally:
        rig.close()


def test_two_sends_back_to_back(artifacts, tmp_path):
    """Two sends posted at once on one VI: the second is fetched as soon as the DMA has
    read the first's last piece (the first waits for its ACK meanwhile, the NIC's engine
    building its last frame first), and each completes, in order, when its ACK comes."""
    t = 2_200_000
    nic = Nic(P)
    first = nic.send(t + P["pio_write"], 3000)
    second = nic.send(nic.dma_free, 100)
    ack1_at = first[-1] + 7000
    ack2_at = second[-1] + 7000
    assert ack1_at < ack2_at
    _, done1 = nic.ack(ack1_at)
    nic.cqe(done1)
    _, done2 = nic.ack(ack2_at)
    acks = [(ack1_at, 1, wire_frame(R.VIA_F_ACK, src_vi=7, dst_vi=3, seq=0, status=DONE_RECV)),
            (ack2_at, 1, wire_frame(R.VIA_F_ACK, src_vi=7, dst_vi=3, seq=1, status=DONE_RECV))]
    rig = Rig(artifacts, tmp_path, frames=acks)
    try:
        rig.bring_up()
        assert rig.cq(2) == 0
        rig.connect(3, peer=(1, 7), scq=2)
        rig.mem(0x4000, pattern(3000))
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 3000)]))
        rig.mem(64, descriptor([(VA + 0x4000, HANDLE, 100)]))
        rig.q.clock_set(t)
        rig.post(3, 0, 0)
        rig.post(3, 0, 64)
        rig.q.clock_set(second[-1])
        frames = rig.wait_frames(3)
        assert [(f["time"], f["seq"]) for f in frames] == \
            [(first[0], 0), (first[1], 0), (second[0], 1)]
        status_at(rig, 64, done2, DONE_SEND)
        assert rig.desc(0)["status"] == DONE_SEND
        assert rig.db(3, R.VIA_DB_SQ_DONE) == 2
    finally:
        rig.close()


def send_and_receive(rig, t: int, room: int) -> int:
    """VI 3 connected to node 1's VI 7 and VI 4 to its VI 9; a receive of `room` bytes
    posted on VI 4 (at region offset 0x8000), then at t a 5000-byte send on VI 3: t."""
    rig.bring_up()
    rig.connect(3, peer=(1, 7))
    rig.connect(4, peer=(1, 9))
    rig.mem(0x4000, pattern(5000))
    rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 5000)]))
    rig.mem(64, descriptor([(VA + 0x8000, HANDLE, room)], length=0))
    rig.post(4, 1, 64)
    rig.q.clock_set(t)
    rig.post(3, 0, 0)
    return t


def test_reset_drops_what_is_in_flight(artifacts, tmp_path):
    """CTRL_RESET while a send's data is being read and a receive is being written: no
    frame leaves after it, nothing is written, the NIC is back at power-on."""
    msg = pattern(4000)
    frame = wire_frame(R.VIA_F_DATA, src_vi=9, dst_vi=4, msg_len=4000, payload=msg[:2048])
    rig = Rig(artifacts, tmp_path, frames=[(2_200_500, 1, frame)])
    try:
        t = send_and_receive(rig, 2_200_000, 4000)
        rig.q.clock_set(t + 6000)          # the first piece's DMA and the frame's write
        rig.set_reg(R.VIA_REG_CTRL, R.VIA_CTRL_RESET)
        rig.q.clock_step(10**6)
        assert rig.frames() == []
        assert rig.desc(0)["status"] == 0 and rig.desc(64)["status"] == 0
        assert rig.read(0x8000, 2048) == bytes(2048)
        assert rig.db(3, R.VIA_DB_STATE) == R.VIA_VI_CLOSED
        assert rig.reg(R.VIA_REG_CTRL) == 0
    finally:
        rig.close()


def test_a_disabled_nic_sends_nothing(artifacts, tmp_path):
    """A send posted on a connected VI after ENABLE was cleared: TRANSPORT_ERROR, the VI
    breaks, and its BREAK never leaves (the NIC is off the switch)."""
    rig = Rig(artifacts, tmp_path)
    try:
        rig.bring_up()
        rig.connect(3, peer=(1, 7))
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 10)]))
        rig.set_reg(R.VIA_REG_CTRL, 0)
        rig.post(3, 0, 0)
        rig.q.clock_step(10**6)
        assert rig.desc(0)["status"] == DONE_SEND | R.VIP_STATUS_TRANSPORT_ERROR
        assert rig.db(3, R.VIA_DB_STATE) == R.VIA_VI_ERROR
        assert rig.frames() == []
    finally:
        rig.close()


@pytest.mark.parametrize("key", ["dma_rate", "dma_setup", "desc", "frame"])
def test_every_component_moves_the_model(key):
    """The timed tests can fail: with any one component off by a little, the model's times
    for a send, its ACK and a receive are not the device's (which match the unchanged
    model above)."""
    def times(p):
        nic = Nic(p)
        out = nic.send(2_000_000, 5000)
        return out, nic.ack(out[-1] + 1000), nic.receive([(3_000_000, 2048), (3_020_000, 100)])
    off = dict(P, **{key: P[key] + (10**6 if key == "dma_rate" else 1)})
    assert times(off) != times(P)


def test_a_receive_shares_the_dma_engine_with_a_send(artifacts, tmp_path):
    """A 5000-byte send on VI 3 while a 2048-byte message for VI 4 arrives during its first
    piece's DMA: every job is booked on its server when the event that causes it happens,
    in time order, so the receive's fetch and data write go between the send's pieces and
    the receive's Status write between its second and third."""
    t, p, f = 2_200_000, P, P["frame"]
    nic = Nic(p)
    c = nic.fetch(t + p["pio_write"], 1)             # the doorbell's store ends
    d0 = nic.dma(c, 2048)                            # the send's first piece
    a = c + 5000                                     # the message arrives meanwhile
    chk = nic.engine(a, f)
    rx_ready = nic.fetch(chk, 1)
    w = nic.dma(max(chk, rx_ready), 2048)            # its data, booked at its arrival
    out0 = nic.engine(d0, f)
    p1 = nic.dma(d0, 2048)
    assert a < d0 < w < p1
    wb = nic.status(w, receive=True)                 # booked when its data is written
    out1 = nic.engine(p1, f)
    p2 = nic.dma(p1, 5000 - 4096)
    assert p1 < wb < p2
    ack = nic.engine(wb, f)
    out2 = nic.engine(p2, f)
    msg = pattern(2048, 13)
    frame = wire_frame(R.VIA_F_DATA, src_vi=9, dst_vi=4, payload=msg)
    rig = Rig(artifacts, tmp_path, frames=[(a, 1, frame)])
    try:
        send_and_receive(rig, t, 4096)
        status_at(rig, 64, wb, DONE_RECV)
        rig.q.clock_set(out2)
        frames = rig.wait_frames(4)
        assert [(x["time"], x["type"]) for x in frames] == \
            [(out0, R.VIA_F_DATA), (out1, R.VIA_F_DATA), (ack, R.VIA_F_ACK),
             (out2, R.VIA_F_DATA)]
        assert rig.read(0x8000, 2048) == msg
    finally:
        rig.close()
