"""qtest: the SX board's register interface, window bounds and every error status, on a
lone board (no fabric): no guest code runs, the test is the driver."""
import pytest

from retrolink.qtest.client import Qtest
from retrolink.qtest.sx_regs import R

REGS, WIN = 0xC0000000, 0xC1000000


@pytest.fixture
def board(artifacts, tmp_path):
    q = Qtest(artifacts.qemu, ["-device", "retrolink-sx,start-us=0"], tmp_path / "qemu.log")
    dev = q.find_pci(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID)
    q.map_bars(dev, {0: REGS, 2: WIN})
    yield q
    q.close()


def reg(q, off):
    return q.readl(REGS + off)


def test_identity(board):
    assert reg(board, R.SX_REG_ID) == R.SX_ID_VALUE
    assert reg(board, R.SX_REG_VERSION) == 1
    assert reg(board, R.SX_REG_NUM_NODES) == 1          # lone board
    assert reg(board, R.SX_REG_STATUS) & R.SX_STATUS_LINK_UP == 0


def test_sub_word_and_unknown_accesses_are_harmless(board):
    assert board.readb(REGS + R.SX_REG_ID) == 0
    board.writeb(REGS + R.SX_REG_CTRL, 0xFF)
    assert reg(board, R.SX_REG_CTRL) == 0
    assert reg(board, 0xFFC) == 0
    board.writel(REGS + R.SX_REG_ID, 0x1234)          # read-only: ignored
    assert reg(board, R.SX_REG_ID) == R.SX_ID_VALUE


def test_window_is_memory_of_the_right_size(board):
    board.memwrite(WIN + R.SX_WINDOW_SIZE - 4, b"\x01\x02\x03\x04")
    assert board.memread(WIN + R.SX_WINDOW_SIZE - 4, 4) == b"\x01\x02\x03\x04"
    # beyond the window is not the board's: reads as nothing, writes go nowhere
    board.memwrite(WIN + R.SX_WINDOW_SIZE, b"\xAA")
    assert board.memread(WIN + R.SX_WINDOW_SIZE, 1) in (b"\x00", b"\xff")


@pytest.mark.parametrize("setup,slot,err", [
    (lambda q: None, 0, "SX_ERR_DISABLED"),
    (lambda q: q.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE), R.SX_TX_SLOTS, "SX_ERR_SLOT"),
    (lambda q: q.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE), 0xFFFFFFFF, "SX_ERR_SLOT"),
])
def test_rejected_doorbells_raise_error(board, setup, slot, err):
    board.writel(REGS + R.SX_REG_IRQ_MASK, 0xF)
    setup(board)
    board.writel(REGS + R.SX_REG_TX_DOORBELL, slot)
    assert reg(board, R.SX_REG_ERROR) == getattr(R, err)
    assert reg(board, R.SX_REG_IRQ_STATUS) & R.SX_IRQ_ERROR
    assert reg(board, R.SX_REG_BAD_DOORBELLS) == 1
    assert reg(board, R.SX_REG_TX_COMPLETE) == 0      # nothing was queued
    board.writel(REGS + R.SX_REG_IRQ_STATUS, R.SX_IRQ_ERROR)   # write 1 to clear
    assert reg(board, R.SX_REG_IRQ_STATUS) & R.SX_IRQ_ERROR == 0


def send(q, slot, dst, length, tag=7):
    base = WIN + R.SX_TX_DESC_OFF + slot * R.SX_DESC_SIZE
    q.writel(base + R.SX_DESC_PEER, dst)
    q.writel(base + R.SX_DESC_LEN, length)
    q.writel(base + R.SX_DESC_TAG, tag)
    q.writel(REGS + R.SX_REG_TX_DOORBELL, slot)


@pytest.mark.parametrize("dst,length,err", [
    (0, R.SX_MAX_MSG + 1, "SX_ERR_LENGTH"),
    (0, 0xFFFFFFFF, "SX_ERR_LENGTH"),
    (0, 64, "SX_ERR_DEST"),          # self
    (5, 64, "SX_ERR_DEST"),          # no such node
])
def test_bad_descriptors_complete_with_status(board, dst, length, err):
    board.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
    send(board, 3, dst, length)
    v = reg(board, R.SX_REG_TX_COMPLETE)
    assert v & R.SX_TXC_VALID and v & 0xFF == 3 and (v >> 8) & 0xFF == getattr(R, err)
    assert reg(board, R.SX_REG_TX_COMPLETE) == 0      # popped
    assert reg(board, R.SX_REG_IRQ_STATUS) & R.SX_IRQ_TXDONE
    assert reg(board, R.SX_REG_TX_ERRORS) == 1
    send(board, 3, dst, length)                       # the slot is free again
    assert reg(board, R.SX_REG_TX_COMPLETE) & R.SX_TXC_VALID


def test_rx_release_of_a_slot_the_host_does_not_hold(board):
    board.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
    for slot in (0, R.SX_RX_SLOTS, 0x7FFFFFFF):
        board.writel(REGS + R.SX_REG_RX_RELEASE, slot)
        assert reg(board, R.SX_REG_ERROR) == R.SX_ERR_RX_SLOT
    assert reg(board, R.SX_REG_RX_POP) == 0


def test_reset_clears_state(board):
    board.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
    board.writel(REGS + R.SX_REG_IRQ_MASK, 0xF)
    send(board, 0, 9, 1)
    board.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_RESET)
    assert reg(board, R.SX_REG_CTRL) == 0 and reg(board, R.SX_REG_IRQ_STATUS) == 0
    assert reg(board, R.SX_REG_TX_COMPLETE) == 0


def test_doorbells_wait_for_the_sxm_to_start(artifacts, tmp_path):
    """ENABLE starts the SXM: READY and doorbells come exactly start-us later."""
    q = Qtest(artifacts.qemu, ["-device", "retrolink-sx,start-us=250"], tmp_path / "qemu.log")
    try:
        dev = q.find_pci(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID)
        q.map_bars(dev, {0: REGS, 2: WIN})
        t0 = q.clock_set(1_000_000)
        q.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
        assert reg(q, R.SX_REG_STATUS) & R.SX_STATUS_READY == 0
        q.writel(REGS + R.SX_REG_TX_DOORBELL, 0)
        assert reg(q, R.SX_REG_ERROR) == R.SX_ERR_DISABLED
        q.clock_set(t0 + 250_000 - 1)
        assert reg(q, R.SX_REG_STATUS) & R.SX_STATUS_READY == 0
        q.clock_set(t0 + 250_000)
        assert reg(q, R.SX_REG_STATUS) & R.SX_STATUS_READY
        q.writel(REGS + R.SX_REG_TX_DOORBELL, R.SX_TX_SLOTS)
        assert reg(q, R.SX_REG_ERROR) == R.SX_ERR_SLOT       # past the start check now
        assert reg(q, R.SX_REG_BAD_DOORBELLS) == 2
    finally:
        q.close()


def test_bad_property_values_are_refused(artifacts, tmp_path):
    from retrolink.qtest.client import QtestError
    for prop in ("sxm-mips=fast", "sxm-mips=0", "bus-channels=0", "confirm-bytes=1"):
        with pytest.raises(QtestError) as e:
            q = Qtest(artifacts.qemu, ["-device", f"retrolink-sx,{prop}"], tmp_path / "q.log")
            try:
                q.clock_step(1)     # QEMU exits once realize fails
            finally:
                q.close()
        assert "retrolink-sx:" in str(e.value), str(e.value)


def test_registers_take_32_bit_accesses_only(artifacts, tmp_path):
    """sx-regs.h: 32-bit accesses only. A readq of TX_COMPLETE once popped a completion
    and the RX_POP entry next to it (the access was split in two): every other width and
    every unaligned access now reads 0, writes nothing, pops nothing, and is logged."""
    q = Qtest(artifacts.qemu, ["-device", "retrolink-sx,start-us=0", "-d", "guest_errors"],
              tmp_path / "qemu.log")
    try:
        dev = q.find_pci(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID)
        q.map_bars(dev, {0: REGS, 2: WIN})
        q.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
        for slot in (1, 2):
            send(q, slot, 0, 64)                        # to itself: completes at once
        assert q.read(8, REGS + R.SX_REG_TX_COMPLETE) == 0
        assert q.read(2, REGS + R.SX_REG_TX_COMPLETE) == 0
        assert q.read(4, REGS + R.SX_REG_TX_COMPLETE + 2) == 0     # unaligned
        assert q.read(2, REGS + R.SX_REG_ID) == 0
        q.write(8, REGS + R.SX_REG_TX_DOORBELL, 3)
        q.write(2, REGS + R.SX_REG_CTRL, R.SX_CTRL_RESET)
        assert reg(q, R.SX_REG_BAD_DOORBELLS) == 0 and reg(q, R.SX_REG_CTRL) == R.SX_CTRL_ENABLE
        assert reg(q, R.SX_REG_TX_COMPLETE) & 0xFF == 1             # nothing was popped
        assert reg(q, R.SX_REG_TX_COMPLETE) & 0xFF == 2
        assert reg(q, R.SX_REG_TX_COMPLETE) == 0
    finally:
        q.close()
    log = (tmp_path / "qemu.log").read_text()
    for what in ("8-byte read at register offset 0x24", "2-byte read at register offset 0x24",
                 "4-byte read at register offset 0x26", "8-byte write at register offset 0x20"):
        assert f"retrolink-sx: {what} refused" in log, log[-2000:]


def test_a_realize_that_fails_part_way_leaves_nothing_behind(asan_qemu, tmp_path):
    """Hotplugged with -only-migratable, the board once connected to the fabric and then
    failed to add its migration blocker, and realize left the link's sync timer armed for
    the first grant: there it called the freed board (ASan: heap-use-after-free in
    sx_promise). Realize now undoes its steps. The board has no blocker any more (it is
    migratable: test_sx_snapshot.py), so -only-migratable takes it, and the last step that
    can fail is the link: a board that cannot reach its fabric leaves MSI, its BARs and its
    event queue behind it undone, and the slot usable for the next one."""
    from retrolink.fuzz.engine import SANITIZER_ENV
    q = Qtest(asan_qemu, ["-only-migratable", "-device", "pcie-root-port,id=rp"],
              tmp_path / "qemu.log", env=SANITIZER_ENV, qmp=True)
    try:
        r = q.qmp("device_add", driver="retrolink-sx", bus="rp", fabric=str(tmp_path / "none"))
        assert "retrolink-sx: cannot connect to the fabric" in r["error"]["desc"], r
        q.clock_step(2_000_000)
        assert q.qmp("device_add", driver="retrolink-sx", bus="rp", id="sx") == {"return": {}}
        q.clock_step(2_000_000)
    finally:
        status = q.close()
    log = (tmp_path / "qemu.log").read_text()
    assert status == 0 and "Sanitizer" not in log, log[-3000:]


def test_trace_events_name_registers_and_refusals(artifacts, tmp_path):
    """-trace 'retrolink_sx_*' logs each register access by name, and a refused doorbell
    with its error (qemu/trace-events)."""
    trace = tmp_path / "trace.txt"
    q = Qtest(artifacts.qemu, ["-device", "retrolink-sx,start-us=0",
                               "-trace", f"enable=retrolink_sx_*,file={trace}"],
              tmp_path / "qemu.log")
    try:
        dev = q.find_pci(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID)
        q.map_bars(dev, {0: REGS, 2: WIN})
        reg(q, R.SX_REG_ID)
        q.writel(REGS + R.SX_REG_TX_DOORBELL, R.SX_TX_SLOTS)       # out of range
    finally:
        q.close()
    text = trace.read_text()
    assert f"read ID (0x0) = 0x{R.SX_ID_VALUE:x}" in text, text
    assert f"write TX_DOORBELL (0x{R.SX_REG_TX_DOORBELL:x}) = 0x{R.SX_TX_SLOTS:x}" in text
    assert f"doorbell refused, SX_ERR {R.SX_ERR_SLOT}" in text
