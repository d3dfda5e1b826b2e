"""qtest: the FC adapter's registers, its DVMA windows, every error status, the receive
ring, reset. The test is the driver; the adapter is node 0 of a 2-node fake fabric (or
alone). docs/boards/fc.md; include/retrolink/regs/fc-regs.h."""
import time

import pytest
from fc_rig import CHAN, CTRL, DATA, RING_PAGE, RING_SLOTS, RO_PAGE, TABLE, Rig, \
    deliver_on_first_sync

from retrolink import wire
from retrolink.qtest.fc_regs import RX_SLOT, R, irq_error, irq_rx, parse_wire, pio_send, \
    wire_frame

ALL_ERRORS = ("WINDOW", "LENGTH", "DEST", "BUSY", "DISABLED", "CHANNEL_ON", "CONFIG")


@pytest.fixture
def rig(artifacts, tmp_path):
    r = Rig(artifacts, tmp_path, extra=["-d", "guest_errors"])
    yield r
    r.close()


def test_identity_and_mac(rig):
    assert rig.reg(R.FC_REG_ID) == R.FC_ID_VALUE
    assert rig.reg(R.FC_REG_VERSION) == 1
    assert rig.reg(R.FC_REG_NODE_ID) == 0 and rig.u(1, R.FC_U_NODE_ID) == 0
    rig.q.clock_step(2 * 1_000_000)             # the cluster starts (WELCOME: 2 nodes)
    assert rig.reg(R.FC_REG_NUM_NODES) == 2 and rig.u(0, R.FC_U_NUM_NODES) == 2
    assert rig.reg(R.FC_REG_PEERS_UP) == 0b10
    assert rig.reg(R.FC_REG_MAC_LO) == int.from_bytes(bytes([0x52, 0x54, 0x00, 0x12]), "little")
    assert rig.reg(R.FC_REG_MAC_HI) == int.from_bytes(bytes([0x34, 0x56]), "little")
    assert rig.reg(R.FC_REG_STATUS) & R.FC_STATUS_LINK_UP
    assert rig.reg(R.FC_REG_STATUS) & R.FC_STATUS_READY == 0
    rig.set_reg(R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
    assert rig.reg(R.FC_REG_STATUS) & R.FC_STATUS_READY


def test_access_widths_are_enforced_and_logged(rig):
    """32-bit registers; the PIO buffer takes aligned 32- and 64-bit stores: anything else
    reads 0, writes nothing, and says so in the guest_errors log."""
    q = rig.q
    assert q.read(2, CTRL + R.FC_REG_ID) == 0
    assert q.read(8, CTRL + R.FC_REG_ID) == 0
    assert q.read(4, CTRL + R.FC_REG_ID + 2) == 0
    q.write(2, CTRL + R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
    q.write(8, CTRL + R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
    assert rig.reg(R.FC_REG_CTRL) == 0
    q.write(2, CHAN + R.FC_U_TX_LEN, 5)
    assert rig.u(0, R.FC_U_TX_LEN) == 0
    assert q.read(4, CHAN + R.FC_U_PIO_BUF) == 0            # write-only
    q.write(1, CHAN + R.FC_U_PIO_BUF, 0xAA)                 # refused
    q.write(4, CHAN + R.FC_U_PIO_BUF + 2, 0xAA)             # unaligned: refused
    q.write(8, CHAN + R.FC_U_PIO_BUF + 4, 0xAA)             # unaligned 64-bit: refused
    q.write(8, CHAN + R.FC_U_PIO_BUF + 8, 0x1122334455667788)   # fine
    q.write(4, CHAN + R.FC_U_PIO_BUF + 16, 0x99AABBCC)          # fine
    assert rig.reg(0xFFC) == 0                              # unknown
    rig.set_reg(R.FC_REG_ID, 0x1234)                        # read-only
    assert rig.reg(R.FC_REG_ID) == R.FC_ID_VALUE
    log = rig.log.read_text()
    for what in ("2-byte read at control page offset 0x0 refused",
                 "8-byte read at control page offset 0x0 refused",
                 "4-byte read at control page offset 0x2 refused",
                 "2-byte write at control page offset 0x10 refused",
                 "4-byte read at channel page offset 0x800 refused",
                 "1-byte write at channel page offset 0x800 refused",
                 "4-byte write at channel page offset 0x802 refused",
                 "8-byte write at channel page offset 0x804 refused",
                 "4-byte read at control page offset 0xffc refused",
                 "4-byte write at control page offset 0x0 refused"):
        assert what in log, (what, log[-3000:])
    assert "offset 0x808 refused" not in log and "offset 0x810 refused" not in log


def test_pio_buffer_stores_reach_the_frame(rig):
    rig.q.clock_step(2 * 1_000_000)
    rig.bring_up()
    rig.q.write(8, CHAN + CHAN_PAGE(1) + R.FC_U_PIO_BUF, 0x1122334455667788)
    rig.q.write(4, CHAN + CHAN_PAGE(1) + R.FC_U_PIO_BUF + 8, 0x99AABBCC)
    rig.set_u(1, R.FC_U_PIO_TAG, 0xC0FFEE)
    rig.set_u(1, R.FC_U_PIO_SEND, pio_send(12, 1))
    assert rig.u(1, R.FC_U_TX_STATUS) == R.FC_ERR_NONE
    rig.q.clock_step(100_000)
    frames = rig.fabric.wait_for(wire.FRAME)
    assert len(frames) == 1 and frames[0]["dst"] == 1
    f = parse_wire(frames[0]["payload"])
    assert f["payload"] == bytes.fromhex("8877665544332211ccbbaa99")
    assert (f["type"], f["tag"], f["d_id"], f["s_id"], f["msg_len"], f["offset"]) == \
        (R.FC_TYPE_USER, 0xC0FFEE, 1, 0, 12, 0)
    assert f["f_ctl"] == R.FC_FCTL_FIRST | R.FC_FCTL_LAST and f["r_ctl"] == R.FC_RCTL_DATA
    assert rig.ch(1, R.FC_CH_TX_FRAMES) == 1


def CHAN_PAGE(c):
    return c * R.FC_CHAN_PAGE_SIZE


def refused(rig, c, err):
    """The last send of channel c was refused with err, counted, and interrupted."""
    assert rig.u(c, R.FC_U_TX_STATUS) == getattr(R, f"FC_ERR_{err}")
    assert rig.reg(R.FC_REG_IRQ_STATUS) & irq_error(c)
    return rig.ch(c, R.FC_CH_ERRORS)


@pytest.mark.parametrize("what,err", [
    ("adapter off", "DISABLED"), ("channel off", "DISABLED"),
    ("length 0", "LENGTH"), ("length above FC_MAX_SEND", "LENGTH"),
    ("to itself", "DEST"), ("to no such port", "DEST"),
    ("unmapped range", "WINDOW"), ("partly mapped range", "WINDOW"),
    ("beyond the table", "WINDOW"), ("while a send reads memory", "BUSY"),
])
def test_dma_send_errors(rig, what, err):
    rig.q.clock_step(2 * 1_000_000)
    if what == "adapter off":
        rig.write_table()
    elif what == "channel off":
        rig.bring_up(channels=(0,))
    else:
        rig.bring_up()
    args = {"adapter off": (0, 64), "channel off": (0, 64), "length 0": (0, 0),
            "length above FC_MAX_SEND": (0, R.FC_MAX_SEND + 1),
            "to itself": (0, 64, 0), "to no such port": (0, 64, 2),
            # DVMA page 81 has no valid entry; pages 63 (valid) .. 64 (ring) ok, but 80 is
            # read-only and 81 not valid: a send over 80..81 is partly mapped
            "unmapped range": (81 * 4096, 64),
            "partly mapped range": (80 * 4096 + 4000, 200),
            "beyond the table": (95 * 4096 + 100, 8192),
            "while a send reads memory": (0, 64)}[what]
    c = 1
    memory_before = rig.q.memread(DATA, 64)
    if what == "while a send reads memory":
        rig.dma_send(c, 0, 100_000)
        assert rig.u(c, R.FC_U_TX_BUSY) == 1
    rig.dma_send(c, *args)
    assert refused(rig, c, err) == 1
    if what != "while a send reads memory":
        assert rig.u(c, R.FC_U_TX_BUSY) == 0
        rig.q.clock_step(1_000_000)
        assert rig.fabric.of_type(wire.FRAME) == []         # nothing was read or sent
        assert rig.ch(c, R.FC_CH_TX_FRAMES) == 0
    assert rig.q.memread(DATA, 64) == memory_before


@pytest.mark.parametrize("what,err", [
    ("adapter off", "DISABLED"), ("length above FC_PIO_MAX", "LENGTH"),
    ("to itself", "DEST"), ("to no such port", "DEST"), ("queue full", "BUSY"),
])
def test_pio_send_errors(rig, what, err):
    rig.q.clock_step(2 * 1_000_000)
    if what != "adapter off":
        rig.bring_up()
    val = {"adapter off": pio_send(8, 1), "length above FC_PIO_MAX": pio_send(R.FC_PIO_MAX + 1, 1),
           "to itself": pio_send(8, 0), "to no such port": pio_send(8, 7),
           "queue full": pio_send(8, 1)}[what]
    if what == "queue full":
        for _ in range(2):                              # tx-queue-frames = 2
            rig.set_u(1, R.FC_U_PIO_SEND, pio_send(R.FC_PIO_MAX, 1))
        assert rig.u(1, R.FC_U_TXQ_FREE) == 0
    rig.set_u(1, R.FC_U_PIO_SEND, val)
    assert refused(rig, 1, err) == 1


def test_control_errors_channel_on_config_disabled(rig):
    rig.write_table()
    rig.configure(1)
    rig.set_ch(1, R.FC_CH_CTRL, R.FC_CH_ENABLE)             # adapter off
    assert rig.reg(R.FC_REG_ERROR) == R.FC_ERR_DISABLED
    assert rig.ch(1, R.FC_CH_STATUS) & R.FC_CHS_ENABLED == 0
    rig.set_reg(R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
    # each bad configuration is refused with CONFIG, and the channel stays off
    for reg, bad in ((R.FC_CH_DVMA_LO, TABLE + 4), (R.FC_CH_DVMA_PAGES, 0),
                     (R.FC_CH_DVMA_PAGES, R.FC_DVMA_MAX_PAGES + 1),
                     (R.FC_CH_RX_RING, RING_PAGE * 4096 + 8), (R.FC_CH_RX_SLOTS, 0),
                     (R.FC_CH_RX_SLOTS, R.FC_RX_MAX_SLOTS + 1),
                     (R.FC_CH_RX_SLOTS, RING_SLOTS + 1),          # into an unmapped page
                     (R.FC_CH_RX_RING, RO_PAGE * 4096),           # read-only page
                     (R.FC_CH_RX_RING, 0)):                       # data pages: read-only
        rig.configure(1)
        rig.set_reg(R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
        rig.set_ch(1, reg, bad)
        rig.set_ch(1, R.FC_CH_CTRL, R.FC_CH_ENABLE)
        assert rig.reg(R.FC_REG_ERROR) == R.FC_ERR_CONFIG, (reg, bad)
        assert rig.ch(1, R.FC_CH_STATUS) & R.FC_CHS_ENABLED == 0
        rig.set_reg(R.FC_REG_CTRL, 0)
    rig.set_reg(R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
    rig.configure(1)
    rig.set_ch(1, R.FC_CH_CTRL, R.FC_CH_ENABLE)
    assert rig.ch(1, R.FC_CH_STATUS) == R.FC_CHS_ENABLED | R.FC_CHS_IDLE
    rig.set_ch(1, R.FC_CH_RX_SLOTS, 1)                      # enabled: refused
    assert rig.reg(R.FC_REG_ERROR) == R.FC_ERR_CHANNEL_ON
    assert rig.ch(1, R.FC_CH_RX_SLOTS) == RING_SLOTS
    log = rig.log.read_text()
    assert "configuring an enabled channel refused" in log


def test_receive_into_the_ring_drops_when_full_and_release(artifacts, tmp_path):
    """Frames of TYPE USER go to channel 1's ring in order, payload then header with
    VALID; with the 4 slots full the next one is dropped and counted; RX_RELEASE gives
    slots back; TYPE IP goes to channel 0, which is off here: dropped and counted."""
    payloads = [bytes([i]) * (100 + i) for i in range(6)]
    frames = [(2_000_000 + i * 100_000, wire_frame(1, 0, R.FC_TYPE_USER, p, tag=0x50 + i))
              for i, p in enumerate(payloads[:5])]
    frames.append((2_600_000, wire_frame(1, 0, R.FC_TYPE_USER, payloads[5], tag=0x55)))
    frames.append((2_700_000, wire_frame(1, 0, R.FC_TYPE_IP, b"ip", tag=1)))
    rig = Rig(artifacts, tmp_path, on_sync=deliver_on_first_sync(frames),
              extra=["-d", "guest_errors"])
    try:
        rig.bring_up(channels=(1,))
        rig.q.clock_set(2_450_000)
        for j in range(RING_SLOTS):
            flags, length, src, tag, off, msg_len = RX_SLOT.unpack_from(rig.slot(j))
            assert flags == R.FC_RXS_VALID | R.FC_TYPE_USER << 8 | \
                (R.FC_FCTL_FIRST | R.FC_FCTL_LAST) << 16
            assert (length, src, tag, off, msg_len) == (100 + j, 1, 0x50 + j, 0, 100 + j)
            assert rig.slot(j)[32:32 + length] == payloads[j]
        assert rig.ch(1, R.FC_CH_RX_FRAMES) == 4
        assert rig.ch(1, R.FC_CH_RX_DROPS) == 1 and rig.u(1, R.FC_U_RX_DROPS) == 1
        assert rig.reg(R.FC_REG_IRQ_STATUS) & irq_rx(1)
        # the host consumes slots 0 and 1 and gives them back; frame 5 goes to slot 0
        rig.set_u(1, R.FC_U_RX_RELEASE, 2)
        rig.q.clock_set(2_800_000)
        flags, length, _, tag, _, _ = RX_SLOT.unpack_from(rig.slot(0))
        assert (length, tag) == (105, 0x55) and rig.slot(0)[32:32 + 105] == payloads[5]
        assert rig.ch(1, R.FC_CH_RX_FRAMES) == 5 and rig.ch(1, R.FC_CH_RX_DROPS) == 1
        assert rig.ch(0, R.FC_CH_RX_DROPS) == 1            # the IP frame: channel 0 off
        # giving back more than the host holds is refused
        rig.set_u(1, R.FC_U_RX_RELEASE, 5)
        assert "RX_RELEASE 5 refused: the host holds 3 slots" in rig.log.read_text()
        rig.set_u(1, R.FC_U_RX_RELEASE, 3)                 # what it holds: fine
    finally:
        rig.close()


def test_reset_clears_everything_and_aborts(rig):
    rig.q.clock_step(2 * 1_000_000)
    rig.bring_up()
    rig.dma_send(1, 0, 200_000)
    rig.set_u(1, R.FC_U_TX_TAG, 9)
    assert rig.u(1, R.FC_U_TX_BUSY) == 1
    rig.set_reg(R.FC_REG_CTRL, R.FC_CTRL_RESET)
    assert rig.reg(R.FC_REG_CTRL) == 0 and rig.reg(R.FC_REG_IRQ_STATUS) == 0
    assert rig.reg(R.FC_REG_IRQ_MASK) == 0
    for c in (0, 1):
        assert rig.ch(c, R.FC_CH_STATUS) == R.FC_CHS_IDLE
        assert rig.ch(c, R.FC_CH_DVMA_PAGES) == 0 and rig.u(c, R.FC_U_TX_TAG) == 0
        assert rig.u(c, R.FC_U_TX_BUSY) == 0
    rig.q.clock_step(10_000_000)
    assert rig.fabric.of_type(wire.FRAME) == []


def test_disabling_a_channel_aborts_its_dma_at_once(rig):
    """The DMA send stops when the CTRL write returns: no frame goes out after it, and
    memory changed after it is never read."""
    rig.q.clock_step(2 * 1_000_000)
    rig.bring_up()
    rig.dma_send(1, 0, 64 * 4096)
    rig.q.clock_step(100_000)                      # the first frame out, most still to read
    # the fake fabric reads QEMU's socket in its own thread: wait for the frame, not the
    # host (the second frame leaves at ~109 us, after this step)
    sent = len(rig.fabric.wait_for(wire.FRAME, 1))
    assert rig.u(1, R.FC_U_TX_BUSY) == 1 and sent == 1
    rig.set_ch(1, R.FC_CH_CTRL, 0)
    assert rig.u(1, R.FC_U_TX_BUSY) == 0 and rig.ch(1, R.FC_CH_STATUS) & R.FC_CHS_IDLE
    rig.q.clock_step(10_000_000)
    time.sleep(0.5)                                # a frame sent late would be in by now
    assert len(rig.fabric.of_type(wire.FRAME)) == sent
    assert rig.u(1, R.FC_U_TX_DONE) == 0


def test_bad_property_values_are_refused(artifacts, tmp_path):
    from retrolink.qtest.client import QtestError
    for prop in ("dma-rate=0", "pio-rate=0", "adapter-rate=0", "tx-queue-frames=0",
                 "tx-queue-frames=17", "start-us=60000001"):
        with pytest.raises(QtestError) as e:
            Rig(artifacts, tmp_path, props=prop, fabric=False).close()
        assert "retrolink-fc:" in str(e.value), str(e.value)


def test_every_error_status_is_tested():
    """Each FC_ERR_* a send or a control write can give has a test above (LINK_DOWN needs
    a peer going down: test_fc_model.py)."""
    for err in ALL_ERRORS:
        assert hasattr(R, f"FC_ERR_{err}")


def test_ready_comes_start_us_after_enable(artifacts, tmp_path):
    """ENABLE starts link initialization and login: READY, channel enables and sends come
    exactly start-us later (before: FC_ERR_DISABLED)."""
    rig = Rig(artifacts, tmp_path, props="start-us=250")
    try:
        rig.write_table()
        rig.configure(1)
        t0 = rig.q.clock_set(2_000_000)
        rig.set_reg(R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
        assert rig.reg(R.FC_REG_STATUS) & R.FC_STATUS_READY == 0
        rig.set_ch(1, R.FC_CH_CTRL, R.FC_CH_ENABLE)
        assert rig.reg(R.FC_REG_ERROR) == R.FC_ERR_DISABLED
        rig.q.clock_set(t0 + 250_000 - 1)
        assert rig.reg(R.FC_REG_STATUS) & R.FC_STATUS_READY == 0
        rig.q.clock_set(t0 + 250_000)
        assert rig.reg(R.FC_REG_STATUS) & R.FC_STATUS_READY
        rig.set_ch(1, R.FC_CH_CTRL, R.FC_CH_ENABLE)
        assert rig.ch(1, R.FC_CH_STATUS) & R.FC_CHS_ENABLED
    finally:
        rig.close()
