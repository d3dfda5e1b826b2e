"""qtest: the VIA NIC in a snapshot (QMP migrate to a file, -incoming from it), saved idle:
its registers, regions, CQs, VIs (states, posted receives, counts), mailbox and counters
come back and it goes on (a send goes, a posted receive takes a message); a stream with a
bad index, count or state is refused by post_load, naming it; a NIC with a send in
flight refuses to be saved, naming it, and goes on."""
import pytest
from snapshots import corruption_test, resume, save, save_completed
from via_rig import HANDLE, VA, Rig, descriptor, wire_frame

from retrolink.qtest.via_regs import R

T = 3_000_000
SECTION = "retrolink-via"
RECV = R.VIP_STATUS_DONE | R.VIP_STATUS_OP_RECEIVE
REGS = ("VIA_REG_CTRL", "VIA_REG_STATUS", "VIA_REG_IRQ_STATUS", "VIA_REG_IRQ_MASK",
        "VIA_REG_TPT_LO", "VIA_REG_TPT_PAGES", "VIA_REG_MR_INDEX", "VIA_REG_VI_INDEX",
        "VIA_REG_CQ_INDEX", "VIA_REG_CQ_COUNT", "VIA_REG_CQ_STATUS", "VIA_REG_CM_RX_COUNT",
        "VIA_REG_CM_RX_SRC", "VIA_REG_TX_MSGS", "VIA_REG_RX_MSGS", "VIA_REG_RX_DROPS",
        "VIA_REG_DESC_ERRORS", "VIA_REG_DB_REFUSED", "VIA_REG_NUM_NODES")


def registers(rig) -> dict:
    regs = {n: rig.reg(getattr(R, n)) for n in REGS}
    for v in (3, 4):
        for r in ("VIA_DB_STATE", "VIA_DB_SQ_DONE", "VIA_DB_RQ_DONE", "VIA_DB_ERROR"):
            regs[f"{v}.{r}"] = rig.db(v, getattr(R, r))
    return regs


@pytest.fixture(scope="module")
def snapshot(artifacts, tmp_path_factory):
    """A NIC at T: VI 3 connected to node 1's VI 7 that has sent one message (ACKed), VI 4
    connected to node 2's VI 5 with a receive posted, CQ 2 with an entry, a CM message in
    the mailbox, a refused post; saved."""
    tmp = tmp_path_factory.mktemp("via-snapshot")
    ack = wire_frame(R.VIA_F_ACK, src_vi=7, dst_vi=3, seq=0, status=RECV)
    cm = wire_frame(R.VIA_F_CM, src_node=2, payload=bytes(range(32)))
    rig = Rig(artifacts, tmp, name="src", qmp=True,
              frames=[(2_500_000, 1, ack), (2_600_000, 2, cm)])
    try:
        rig.bring_up()
        assert rig.cq(2) == 0
        rig.connect(3, peer=(1, 7), scq=2)
        rig.connect(4, peer=(2, 5))
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 100)]))
        rig.mem(64, descriptor([(VA + 0x6000, HANDLE, 200)], length=0))
        rig.post(3, 0, 0)
        rig.post(4, 1, 64)
        rig.post(4, 1, 65)                                  # refused: VIA_DBE_ALIGN
        rig.q.clock_set(T)
        assert rig.desc(0)["status"] == R.VIP_STATUS_DONE
        state = tmp / "via.state"
        regs = registers(rig)
        assert regs["VIA_REG_CM_RX_COUNT"] == 1 and regs["3.VIA_DB_SQ_DONE"] == 1
        save_completed(rig.q, state, rig.log)
    finally:
        rig.close()
    return state, regs


def test_state_survives_a_snapshot(artifacts, tmp_path, snapshot):
    state, regs = snapshot
    msg = bytes(range(150))
    data = wire_frame(R.VIA_F_DATA, src_vi=5, dst_vi=4, src_node=2, payload=msg)
    rig = Rig(artifacts, tmp_path, name="dst", qmp=True, incoming=state,
              frames=[(T + 100_000, 2, data)])
    try:
        resume(rig.q)
        rig.q.clock_set(T)
        assert registers(rig) == regs
        assert [rig.reg(0x148 + 4 * i) for i in range(2)] == [0x03020100, 0x07060504]
        # the posted receive takes a message; VI 3's next send goes with seq 1
        rig.mem(128, descriptor([(VA + 0x4000, HANDLE, 10)]))
        rig.post(3, 0, 128)
        rig.q.clock_set(T + 200_000)
        d = rig.desc(64)
        assert (d["status"], d["length"]) == (RECV, 150)
        assert rig.read(0x6000, 150) == msg
        out = [(f["type"], f["dst"], f["seq"]) for f in rig.wait_frames(2)]
        assert sorted(out) == [(R.VIA_F_DATA, 1, 1), (R.VIA_F_ACK, 2, 0)]
    finally:
        rig.close()


CORRUPTIONS = {
    "vi state": (("vi", 3, "state"), R.VIA_VI_CONNECTED, 9, "VI 3 state 9 is not a VIA_VI_*"),
    "queue head": (("vi", 4, "wq", 1, "head"), 0, 256, "VI 4 queue 1 has head 256, count 1"),
    "queue count": (("vi", 4, "wq", 1, "count"), 1, 257, "VI 4 queue 1 has head 0, count 257"),
    "vi index": (("vi_index",), 4, 64, "indexes MR 3, VI 64, CQ 2 out of range"),
    "cq entries": (("cq", 2, "entries"), 8, 6, "CQ 2 has 6 entries at 0x182000"),
    "region tag": (("mr", 0, "ptag"), 5, 256, "region 0: tag 256"),
    "mailbox": (("cm_rx", "count"), 9, 10, "CM mailbox has head 0, count 10"),
    "ctrl": (("ctrl",), R.VIA_CTRL_ENABLE, 3, "ctrl 0x3 has bits other than ENABLE"),
}


test_a_stream_with_a_bad_field_is_refused = corruption_test(CORRUPTIONS, SECTION, Rig)


def test_a_nic_with_a_send_in_flight_refuses_a_save_and_goes_on(artifacts, tmp_path):
    rig = Rig(artifacts, tmp_path, name="src", qmp=True, step=100_000)
    try:
        rig.bring_up()
        rig.connect(3, peer=(1, 7))
        rig.mem(0, descriptor([(VA + 0x4000, HANDLE, 100)]))
        rig.post(3, 0, 0)
        rig.q.clock_set(T)
        status = save(rig.q, tmp_path / "via.state")
        assert status["status"] == "failed", status
        assert "retrolink-via node 0: cannot save the NIC with work in flight; VI 3's send" \
            in rig.log.read_text()
        assert rig.q.qmp("cont") == {"return": {}}
        rig.deliver(T + 10_000, 1, wire_frame(R.VIA_F_ACK, src_vi=7, dst_vi=3, status=RECV))
        rig.q.clock_set(T + 10**6)
        assert rig.desc(0)["status"] == R.VIP_STATUS_DONE
        assert save(rig.q, tmp_path / "via.state")["status"] == "completed"
    finally:
        rig.close()
