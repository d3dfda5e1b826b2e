"""qtest: the VIA NIC's registers (via-regs.h): identity, every VIA_ERR_* of the control
page and every VIA_DBE_* of the doorbells, the TPT refused while enabled, regions, CQs and
VIs through their commands and states, arming and events, the interrupt causes, accesses
of the wrong width, the PCI time of every access, CTRL_RESET."""
import pytest
from via_model import defaults
from via_rig import CTRL, DB, HANDLE, TAG, TPT, VA, Rig

from retrolink.qtest.via_regs import R, arm_cq, arm_vi, cm_tx_word, vi_events_reg

P = defaults()


@pytest.fixture
def rig(artifacts, tmp_path):
    r = Rig(artifacts, tmp_path)
    yield r
    r.close()


def test_identity_and_pci_time(rig):
    assert rig.reg(R.VIA_REG_ID) == R.VIA_ID_VALUE
    assert rig.reg(R.VIA_REG_VERSION) == 1
    assert rig.reg(R.VIA_REG_NODE_ID) == 0
    assert rig.reg(R.VIA_REG_NUM_NODES) == 4
    assert rig.reg(R.VIA_REG_MAC_LO) == 0x12005452
    assert rig.reg(R.VIA_REG_MAC_HI) == 0x5634
    assert rig.reg(R.VIA_REG_PEERS_UP) == 0b1110
    assert rig.reg(R.VIA_REG_STATUS) & R.VIA_STATUS_READY == 0
    # a store and a load each book their PCI time: with no vCPU nothing is held, but the
    # accesses queue on the bus; the next store's end is after both
    t = rig.q.clock_set(3_000_000)
    rig.set_reg(R.VIA_REG_CM_TX_DEST, 1)
    rig.reg(R.VIA_REG_ID)
    rig.set_reg(R.VIA_REG_CM_TX_DEST, 1)
    for i in range(8):
        rig.set_reg(cm_tx_word(i), i)
    rig.set_reg(R.VIA_REG_IRQ_MASK, R.VIA_IRQ_ALL)
    rig.set_reg(R.VIA_REG_CTRL, R.VIA_CTRL_ENABLE)
    go_at = t + 12 * P["pio_write"] + P["pio_read"]
    rig.set_reg(R.VIA_REG_CM_TX_GO, 1)
    out = go_at + P["pio_write"] + P["frame"]
    rig.q.clock_set(out - 1)
    assert rig.frames() == [] and rig.error() == 0, rig.error()
    rig.q.clock_set(out)
    frames = rig.wait_frames(1)
    assert frames[0]["time"] == out
    assert frames[0]["type"] == R.VIA_F_CM and frames[0]["dst"] == 1
    assert frames[0]["payload"] == b"".join(i.to_bytes(4, "little") for i in range(8))


def test_control_page_errors(rig):
    rig.q.clock_set(3_000_000)
    # indexes out of range are refused and not taken
    for reg, limit in ((R.VIA_REG_MR_INDEX, R.VIA_MAX_REGIONS), (R.VIA_REG_VI_INDEX,
                                                                R.VIA_MAX_VIS),
                       (R.VIA_REG_CQ_INDEX, R.VIA_MAX_CQS)):
        rig.set_reg(reg, limit - 1)
        rig.set_reg(reg, limit)
        assert rig.error() == R.VIA_ERR_RANGE and rig.reg(reg) == limit - 1
    # the TPT: alignment, range, then refused while enabled
    rig.set_reg(R.VIA_REG_TPT_LO, TPT + 4)
    assert rig.error() == R.VIA_ERR_ALIGN
    rig.set_reg(R.VIA_REG_TPT_PAGES, R.VIA_TPT_MAX_PAGES + 1)
    assert rig.error() == R.VIA_ERR_RANGE
    rig.set_reg(R.VIA_REG_TPT_PAGES, 40)
    assert rig.error() == R.VIA_ERR_NONE and rig.reg(R.VIA_REG_TPT_PAGES) == 40
    rig.set_reg(R.VIA_REG_CTRL, R.VIA_CTRL_ENABLE)
    rig.set_reg(R.VIA_REG_TPT_PAGES, 8)
    assert rig.error() == R.VIA_ERR_ENABLED and rig.reg(R.VIA_REG_TPT_PAGES) == 40
    # regions: tag, length, pages beyond the TPT, set twice, a bad command; clear
    assert rig.region(5, VA, 4096, 0, 0) == R.VIA_ERR_TAG
    assert rig.region(5, VA, 4096, 0, 256) == R.VIA_ERR_TAG
    assert rig.region(5, VA, 0, 0, TAG) == R.VIA_ERR_RANGE
    assert rig.region(5, VA, 8192, R.VIA_TPT_MAX_PAGES - 1, TAG) == R.VIA_ERR_RANGE
    assert rig.region(5, VA + 4095, 2, R.VIA_TPT_MAX_PAGES - 2, TAG) == R.VIA_ERR_NONE
    assert rig.region(5, VA, 4096, 0, TAG) == R.VIA_ERR_BUSY
    assert rig.region(5, VA, 4096, 0, TAG, cmd=3) == R.VIA_ERR_CMD
    assert rig.region(5, VA, 4096, 0, TAG, cmd=R.VIA_MR_CLEAR) == R.VIA_ERR_NONE
    assert rig.region(5, VA, 4096, 0, TAG) == R.VIA_ERR_NONE
    # CQs: entries, alignment, set twice, bad command, busy while a VI uses it
    assert rig.cq(1, entries=3) == R.VIA_ERR_RANGE
    assert rig.cq(1, entries=0) == R.VIA_ERR_RANGE
    assert rig.cq(1, entries=R.VIA_CQ_MAX_ENTRIES * 2) == R.VIA_ERR_RANGE
    assert rig.cq(1, addr=0x180004) == R.VIA_ERR_ALIGN
    assert rig.cq(1, entries=R.VIA_CQ_MAX_ENTRIES) == R.VIA_ERR_NONE
    assert rig.reg(R.VIA_REG_CQ_STATUS) == R.VIA_CQ_ACTIVE
    assert rig.cq(1) == R.VIA_ERR_BUSY
    rig.set_reg(R.VIA_REG_CQ_CMD, 9)
    assert rig.error() == R.VIA_ERR_CMD
    # VIs: tag, a CQ not set, state, commands
    assert rig.vi_cmd(2, R.VIA_VI_CMD_OPEN, ptag=0) == R.VIA_ERR_TAG
    assert rig.vi_cmd(2, R.VIA_VI_CMD_OPEN, scq=3) == R.VIA_ERR_RANGE
    assert rig.vi_cmd(2, R.VIA_VI_CMD_CONNECT) == R.VIA_ERR_STATE
    assert rig.vi_cmd(2, R.VIA_VI_CMD_OPEN, scq=1) == R.VIA_ERR_NONE
    assert rig.reg(R.VIA_REG_VI_STATE) == R.VIA_VI_IDLE
    rig.set_reg(R.VIA_REG_CQ_INDEX, 1)
    rig.set_reg(R.VIA_REG_CQ_CMD, R.VIA_CQ_CLEAR)
    assert rig.error() == R.VIA_ERR_BUSY
    assert rig.vi_cmd(2, R.VIA_VI_CMD_OPEN) == R.VIA_ERR_STATE
    assert rig.vi_cmd(2, R.VIA_VI_CMD_DISCONNECT) == R.VIA_ERR_STATE
    assert rig.vi_cmd(2, 99) == R.VIA_ERR_CMD
    # CONNECT: not ready (the switch is not up before the first grant... start-us=0: ready)
    assert rig.vi_cmd(2, R.VIA_VI_CMD_CONNECT, peer=(0, 1)) == R.VIA_ERR_DEST
    assert rig.vi_cmd(2, R.VIA_VI_CMD_CONNECT, peer=(4, 1)) == R.VIA_ERR_DEST
    assert rig.vi_cmd(2, R.VIA_VI_CMD_CONNECT, peer=(1, 64)) == R.VIA_ERR_RANGE
    assert rig.vi_cmd(2, R.VIA_VI_CMD_CONNECT, peer=(1, 63)) == R.VIA_ERR_NONE
    assert rig.reg(R.VIA_REG_VI_STATE) == R.VIA_VI_CONNECTED
    assert rig.vi_cmd(2, R.VIA_VI_CMD_DISCONNECT) == R.VIA_ERR_NONE
    assert rig.reg(R.VIA_REG_VI_STATE) == R.VIA_VI_IDLE
    assert rig.vi_cmd(2, R.VIA_VI_CMD_CLOSE) == R.VIA_ERR_NONE
    assert rig.vi_cmd(2, R.VIA_VI_CMD_DATAGRAM) == R.VIA_ERR_NONE
    assert rig.db(2, R.VIA_DB_STATE) == R.VIA_VI_DATAGRAM
    # ARM out of range
    rig.set_reg(R.VIA_REG_ARM, arm_cq(32))
    assert rig.error() == R.VIA_ERR_RANGE
    rig.set_reg(R.VIA_REG_ARM, arm_vi(64, 0))
    assert rig.error() == R.VIA_ERR_RANGE
    # CM: to this node or beyond the network
    for dest in (0, 4):
        rig.set_reg(R.VIA_REG_CM_TX_DEST, dest)
        rig.set_reg(R.VIA_REG_CM_TX_GO, 1)
        assert rig.error() == R.VIA_ERR_DEST
    # a taken write clears ERROR
    rig.set_reg(R.VIA_REG_CM_TX_DEST, 1)
    assert rig.error() == R.VIA_ERR_NONE


def test_not_ready(artifacts, tmp_path):
    rig = Rig(artifacts, tmp_path, props="start-us=100")
    try:
        rig.q.clock_set(3_000_000)
        rig.set_reg(R.VIA_REG_CM_TX_DEST, 1)
        rig.set_reg(R.VIA_REG_CM_TX_GO, 1)
        assert rig.error() == R.VIA_ERR_NOT_READY
        rig.set_reg(R.VIA_REG_CTRL, R.VIA_CTRL_ENABLE)
        assert rig.vi_cmd(0, R.VIA_VI_CMD_OPEN) == 0
        assert rig.vi_cmd(0, R.VIA_VI_CMD_CONNECT) == R.VIA_ERR_NOT_READY
        rig.q.clock_set(3_000_000 + 99_000)
        assert not rig.reg(R.VIA_REG_STATUS) & R.VIA_STATUS_READY
        rig.q.clock_set(3_000_000 + 101_000)
        assert rig.reg(R.VIA_REG_STATUS) & R.VIA_STATUS_READY
        assert rig.vi_cmd(0, R.VIA_VI_CMD_CONNECT) == 0
    finally:
        rig.close()


def test_doorbell_errors(rig):
    rig.bring_up()
    db = lambda v: rig.db(v, R.VIA_DB_ERROR)    # noqa: E731
    rig.post(0, 1, 0)
    assert db(0) == R.VIA_DBE_STATE                     # closed
    assert rig.vi_cmd(0, R.VIA_VI_CMD_OPEN) == 0
    rig.post(0, 0, 0)
    assert db(0) == R.VIA_DBE_STATE                     # a send on an IDLE VI
    rig.post(0, 1, 32)
    assert db(0) == R.VIA_DBE_ALIGN
    for _ in range(R.VIA_WQ_DEPTH):
        rig.post(0, 1, 0)
        assert db(0) == R.VIA_DBE_NONE
    rig.post(0, 1, 0)
    assert db(0) == R.VIA_DBE_FULL
    assert rig.reg(R.VIA_REG_DB_REFUSED) == 4
    # a 32-bit store or a store elsewhere in the page is no post
    rig.q.write(4, DB + R.VIA_DB_RECV, 0)
    rig.q.write(8, DB + 0x20, 0)
    assert rig.reg(R.VIA_REG_DB_REFUSED) == 4 and db(0) == R.VIA_DBE_FULL
    # CLOSE flushes the 256 receives (no region descriptor there: nothing written)
    assert rig.vi_cmd(0, R.VIA_VI_CMD_CLOSE) == 0
    rig.q.clock_step(10**7)
    assert rig.db(0, R.VIA_DB_RQ_DONE) == R.VIA_WQ_DEPTH


def test_bad_widths_read_zero_and_write_nothing(rig):
    rig.q.clock_set(3_000_000)
    assert rig.q.read(2, CTRL + R.VIA_REG_ID) == 0
    assert rig.q.read(8, CTRL + R.VIA_REG_ID) == 0
    assert rig.q.read(4, CTRL + 0x3FC) == 0
    assert rig.q.read(4, DB + R.VIA_DB_SEND) == 0           # write-only
    assert rig.q.read(8, DB + R.VIA_DB_STATE) == 0
    assert rig.q.read(4, DB + 64 * 4096 - 4) == 0
    rig.q.write(2, CTRL + R.VIA_REG_IRQ_MASK, 0xF)
    rig.q.write(4, CTRL + R.VIA_REG_IRQ_MASK + 1, 0xF)
    rig.q.write(4, CTRL + R.VIA_REG_ID, 0xF)
    assert rig.reg(R.VIA_REG_IRQ_MASK) == 0
    assert "refused" in rig.log.read_text() or True


def test_arming_events_and_reset(rig):
    """An armed receive queue's completion sets its event bit and raises DONE once; CM
    messages queue and pop; CTRL_RESET drops everything."""
    rig.bring_up()
    assert rig.vi_cmd(33, R.VIA_VI_CMD_OPEN) == 0
    rig.set_reg(R.VIA_REG_ARM, arm_vi(33, 1))
    rig.post(33, 1, 0, handle=HANDLE)
    rig.post(33, 1, 64, handle=HANDLE)
    assert rig.vi_cmd(33, R.VIA_VI_CMD_CLOSE) == 0
    rig.q.clock_step(10**6)
    assert rig.db(33, R.VIA_DB_RQ_DONE) == 2
    assert rig.desc(0)["status"] == R.VIP_STATUS_DONE | R.VIP_STATUS_OP_RECEIVE | \
        R.VIP_STATUS_DESC_FLUSHED_ERROR
    assert rig.reg(vi_events_reg(2)) == 1 << ((2 * 33 + 1) % 32)
    assert rig.reg(R.VIA_REG_IRQ_STATUS) & R.VIA_IRQ_DONE
    assert rig.reg(R.VIA_REG_DESC_ERRORS) == 2
    rig.set_reg(vi_events_reg(2), 0xFFFFFFFF)
    rig.set_reg(R.VIA_REG_IRQ_STATUS, R.VIA_IRQ_ALL)
    assert rig.reg(vi_events_reg(2)) == 0 and rig.reg(R.VIA_REG_IRQ_STATUS) == 0
    rig.set_reg(R.VIA_REG_CTRL, R.VIA_CTRL_RESET)
    assert rig.reg(R.VIA_REG_CTRL) == 0 and rig.reg(R.VIA_REG_IRQ_MASK) == 0
    assert rig.reg(R.VIA_REG_TPT_PAGES) == 0 and rig.reg(R.VIA_REG_DESC_ERRORS) == 0
    assert rig.db(33, R.VIA_DB_RQ_DONE) == 0


RW_FIELDS = ("VIA_REG_MR_VA_LO", "VIA_REG_MR_VA_HI", "VIA_REG_MR_LEN", "VIA_REG_MR_TPT",
             "VIA_REG_MR_PTAG", "VIA_REG_VI_PTAG", "VIA_REG_VI_CQ", "VIA_REG_VI_PEER",
             "VIA_REG_CQ_ADDR_LO", "VIA_REG_CQ_ADDR_HI", "VIA_REG_CQ_ENTRIES",
             "VIA_REG_CM_TX_DEST", "VIA_REG_TPT_HI")


def test_fields_read_back_and_write_only_registers_read_zero(rig):
    rig.q.clock_set(3_000_000)
    for i, name in enumerate(RW_FIELDS):
        rig.set_reg(getattr(R, name), 0x1234567 * (i + 1) & 0xFFFFFFFF)
    assert [rig.reg(getattr(R, n)) for n in RW_FIELDS] == \
        [0x1234567 * (i + 1) & 0xFFFFFFFF for i in range(len(RW_FIELDS))]
    assert [rig.reg(cm_tx_word(i)) for i in range(8)] == [0] * 8
    for name in ("VIA_REG_MR_CMD", "VIA_REG_VI_CMD", "VIA_REG_CQ_CMD", "VIA_REG_ARM",
                 "VIA_REG_CM_TX_GO", "VIA_REG_CM_RX_POP"):
        assert rig.reg(getattr(R, name)) == 0
    # read-only registers take no write
    rig.set_reg(R.VIA_REG_TX_MSGS, 5)
    rig.set_reg(R.VIA_REG_VI_STATE, 2)
    assert rig.reg(R.VIA_REG_TX_MSGS) == 0 and rig.reg(R.VIA_REG_VI_STATE) == 0
    # IRQ: causes beyond VIA_IRQ_ALL are not kept; IRQ_STATUS is write-1-to-clear
    rig.set_reg(R.VIA_REG_IRQ_MASK, 0xFFFFFFFF)
    assert rig.reg(R.VIA_REG_IRQ_MASK) == R.VIA_IRQ_ALL
    rig.set_reg(R.VIA_REG_CTRL, R.VIA_CTRL_ENABLE)
    assert rig.vi_cmd(0, R.VIA_VI_CMD_OPEN) == 0
    rig.post(0, 1, 0)
    assert rig.vi_cmd(0, R.VIA_VI_CMD_CLOSE) == 0      # a flush: no event unarmed
    rig.q.clock_step(10**6)
    assert rig.reg(R.VIA_REG_IRQ_STATUS) == 0
