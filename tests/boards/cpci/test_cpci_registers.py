"""qtest: the CompactPCI bridge's control page (cpci-regs.h): identity, every register's
access rules (width, alignment, read-only, unknown), every error status it can set
(BAD_ACCESS, BAD_VALUE, DISABLED, SELF, NO_NODE) with its address, write-one-to-clear and
masks, IRQ_STATUS and MSI, doorbells rung (their frames), CTRL_RESET, the PCI time of
every access."""
import pytest
from cpci_model import Bridge, defaults
from cpci_rig import CTRL, EXPORT, EXPORT_SIZE, T0, Rig

from retrolink.qtest.cpci_regs import ERR_ALL, REGISTERS, R, db_ring_value

P = defaults()


@pytest.fixture
def rig(artifacts, tmp_path):
    r = Rig(artifacts, tmp_path)
    yield r
    r.close()


def test_identity(rig):
    assert rig.reg(R.CPCI_REG_ID) == R.CPCI_ID_MAGIC == 0x49435043
    assert rig.reg(R.CPCI_REG_VERSION) == R.CPCI_VERSION
    assert rig.reg(R.CPCI_REG_NODE) == 0
    assert rig.reg(R.CPCI_REG_NODES) == 4
    assert rig.reg(R.CPCI_REG_STATUS) == R.CPCI_STATUS_UP
    assert rig.reg(R.CPCI_REG_WINDOW_SIZE) == R.CPCI_WINDOW_SIZE
    assert rig.reg(R.CPCI_REG_MAC_LO) == 0x12005452
    assert rig.reg(R.CPCI_REG_MAC_HI) == 0x5634
    assert rig.reg(R.CPCI_REG_CTRL) == 0 and rig.err() == 0
    dev = rig.q.find_pci(R.CPCI_PCI_VENDOR_ID, R.CPCI_PCI_DEVICE_ID)
    assert rig.q.cfg_read(dev, 0x08) >> 16 == R.CPCI_PCI_CLASS


def test_a_lone_board_is_down_and_reaches_nobody(artifacts, tmp_path):
    r = Rig(artifacts, tmp_path, fabric=False)
    try:
        assert r.reg(R.CPCI_REG_NODES) == 0 and r.reg(R.CPCI_REG_STATUS) == 0
        r.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_ENABLE)
        r.set_reg(R.CPCI_REG_DB_RING, db_ring_value(1, 0))
        assert r.err() == R.CPCI_ERR_NO_NODE
    finally:
        r.close()


def test_every_register_refuses_a_bad_width_alignment_or_write(rig):
    q = rig.q
    for off, writable in REGISTERS.items():
        # a 2-byte read and a misaligned one: 0, BAD_ACCESS at that offset
        for size, addr in ((2, off), (4, off + 1)):
            rig.clear_err()
            assert q.read(size, CTRL + addr) == 0
            assert rig.err() == R.CPCI_ERR_BAD_ACCESS, hex(off)
            assert rig.reg(R.CPCI_REG_ERR_ADDR) == addr
        if not writable:
            before = rig.reg(off)
            rig.clear_err()
            rig.set_reg(off, 0x5A5A5000)
            assert rig.err() == R.CPCI_ERR_BAD_ACCESS and rig.reg(R.CPCI_REG_ERR_ADDR) == off
            if off != R.CPCI_REG_ERR_ADDR:          # that one names the write itself
                assert rig.reg(off) == before, hex(off)
    # DB_RING is write-only; unknown offsets
    for off in (R.CPCI_REG_DB_RING, 0x04c, 0x07c, 0x0a4, 0xffc):
        rig.clear_err()
        assert rig.reg(off) == 0
        assert rig.err() == R.CPCI_ERR_BAD_ACCESS and rig.reg(R.CPCI_REG_ERR_ADDR) == off
    for off in (0x04c, 0x0a4, 0xffc):
        rig.clear_err()
        rig.set_reg(off, 1)
        assert rig.err() == R.CPCI_ERR_BAD_ACCESS
    # an 8-byte store to CTRL writes nothing
    rig.clear_err()
    q.write(8, CTRL + R.CPCI_REG_CTRL, R.CPCI_CTRL_ENABLE)
    assert rig.reg(R.CPCI_REG_CTRL) == 0 and rig.err() == R.CPCI_ERR_BAD_ACCESS


def test_export_registers_take_pages_only_and_never_while_on(rig):
    def bad(off, val):
        rig.clear_err()
        before = rig.reg(off)
        rig.set_reg(off, val)
        assert rig.err() == R.CPCI_ERR_BAD_VALUE and rig.reg(R.CPCI_REG_ERR_ADDR) == off
        assert rig.reg(off) == before

    bad(R.CPCI_REG_EXPORT_LO, EXPORT + 0x800)
    bad(R.CPCI_REG_EXPORT_SIZE, 0x1800)
    bad(R.CPCI_REG_EXPORT_SIZE, R.CPCI_EXPORT_MAX + R.CPCI_PAGE_SIZE)
    rig.clear_err()
    rig.set_reg(R.CPCI_REG_EXPORT_LO, EXPORT)
    rig.set_reg(R.CPCI_REG_EXPORT_HI, 1)
    rig.set_reg(R.CPCI_REG_EXPORT_SIZE, R.CPCI_EXPORT_MAX)
    assert rig.err() == 0
    assert (rig.reg(R.CPCI_REG_EXPORT_LO), rig.reg(R.CPCI_REG_EXPORT_HI),
            rig.reg(R.CPCI_REG_EXPORT_SIZE)) == (EXPORT, 1, R.CPCI_EXPORT_MAX)
    rig.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_EXPORT)
    for off in (R.CPCI_REG_EXPORT_LO, R.CPCI_REG_EXPORT_HI, R.CPCI_REG_EXPORT_SIZE):
        bad(off, 0x2000)
    rig.set_reg(R.CPCI_REG_CTRL, 0)
    rig.clear_err()
    rig.set_reg(R.CPCI_REG_EXPORT_SIZE, EXPORT_SIZE)
    assert rig.err() == 0 and rig.reg(R.CPCI_REG_EXPORT_SIZE) == EXPORT_SIZE


def test_ctrl_and_err_mask_refuse_unknown_bits(rig):
    rig.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_ENABLE | 4)
    assert rig.err() == R.CPCI_ERR_BAD_VALUE and rig.reg(R.CPCI_REG_CTRL) == 0
    rig.clear_err()
    rig.set_reg(R.CPCI_REG_ERR_MASK, 0x80)
    assert rig.err() == R.CPCI_ERR_BAD_VALUE and rig.reg(R.CPCI_REG_ERR_MASK) == 0
    rig.clear_err()
    rig.set_reg(R.CPCI_REG_ERR_MASK, ERR_ALL)
    assert rig.err() == 0 and rig.reg(R.CPCI_REG_ERR_MASK) == ERR_ALL


def test_doorbell_ring_errors_and_frames(rig):
    rig.q.clock_set(T0)
    ring = R.CPCI_REG_DB_RING

    def refused(value, err):
        rig.clear_err()
        rig.set_reg(ring, value)
        assert rig.err() == err, (hex(value), rig.err())
        assert rig.reg(R.CPCI_REG_ERR_ADDR) == ring

    refused(db_ring_value(2, 0), R.CPCI_ERR_DISABLED)
    rig.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_ENABLE)
    refused(db_ring_value(0, 0), R.CPCI_ERR_SELF)
    refused(db_ring_value(4, 0), R.CPCI_ERR_NO_NODE)        # 4 nodes on the backplane
    refused(db_ring_value(R.CPCI_MAX_NODES, 0), R.CPCI_ERR_BAD_VALUE)
    refused(db_ring_value(1, R.CPCI_DB_PER_NODE), R.CPCI_ERR_BAD_VALUE)
    assert rig.reg(R.CPCI_REG_DB_SENT) == 0 and rig.frames() == []
    rig.clear_err()
    t = rig.q.clock_set(T0 + 100_000)
    rig.set_reg(ring, db_ring_value(2, 3))
    rig.set_reg(ring, db_ring_value(1, 0))
    assert rig.err() == 0 and rig.reg(R.CPCI_REG_DB_SENT) == 2
    frames = rig.wait_frames(2)
    b = Bridge(P)
    assert [(f["dst"], f["kind"], f["offset"], f["length"], f["src_node"], f["time"],
             len(f["payload"])) for f in frames] == [
        (2, R.CPCI_T_DOORBELL, 3, 0, 0, b.store(t, 4), R.CPCI_WIRE_HDR_SIZE),
        (1, R.CPCI_T_DOORBELL, 0, 0, 0, b.store(t, 4), R.CPCI_WIRE_HDR_SIZE)]


def test_every_access_costs_one_transaction_on_the_node_pci(rig):
    """With no vCPU nothing is held, but the accesses queue on the node's PCI: a doorbell
    rung after k accesses at the same instant is ready after all of them."""
    t = rig.q.clock_set(T0)
    b = Bridge(P)
    rig.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_ENABLE)
    b.access(t, 4)
    for k in range(5):
        rig.reg(R.CPCI_REG_ID)
        b.access(t, 4)
    rig.q.read(2, CTRL + R.CPCI_REG_ID)                     # refused: costs its time too
    b.access(t, 2)
    rig.set_reg(R.CPCI_REG_DB_RING, db_ring_value(3, 1))
    (f,) = rig.wait_frames(1)
    assert f["time"] == b.store(t, 4) == t + 8 * 150 + P["bridge"]


def test_errors_are_write_one_to_clear_and_interrupt_unless_masked(rig):
    q = rig.q
    dev = q.find_pci(R.CPCI_PCI_VENDOR_ID, R.CPCI_PCI_DEVICE_ID)
    box = 0x00300000
    q.msi_to_ram(dev, box, 0x4321)
    rig.set_reg(R.CPCI_REG_ERR_MASK, R.CPCI_ERR_BAD_ACCESS)
    rig.reg(0x04c)                                          # BAD_ACCESS: masked
    assert rig.err() == R.CPCI_ERR_BAD_ACCESS
    assert rig.reg(R.CPCI_REG_IRQ_STATUS) == 0
    assert q.memread(box, 4) == bytes(4)
    rig.set_reg(R.CPCI_REG_CTRL, 1 << 5)                    # BAD_VALUE: unmasked
    assert rig.err() == R.CPCI_ERR_BAD_ACCESS | R.CPCI_ERR_BAD_VALUE
    assert rig.reg(R.CPCI_REG_IRQ_STATUS) == R.CPCI_IRQ_ERROR
    assert int.from_bytes(q.memread(box, 4), "little") == 0x4321
    q.memwrite(box, bytes(4))
    rig.set_reg(R.CPCI_REG_ERR_STATUS, R.CPCI_ERR_BAD_VALUE)   # one bit cleared
    assert rig.err() == R.CPCI_ERR_BAD_ACCESS
    assert rig.reg(R.CPCI_REG_IRQ_STATUS) == 0
    rig.set_reg(R.CPCI_REG_ERR_MASK, 0)                     # pending, now unmasked: an MSI
    assert rig.reg(R.CPCI_REG_IRQ_STATUS) == R.CPCI_IRQ_ERROR
    assert int.from_bytes(q.memread(box, 4), "little") == 0x4321
    rig.clear_err()
    assert rig.err() == 0 and rig.reg(R.CPCI_REG_IRQ_STATUS) == 0


def test_ctrl_reset_is_power_on(rig):
    rig.bring_up()
    rig.set_reg(R.CPCI_REG_DB_MASK, 0xF0)
    rig.set_reg(R.CPCI_REG_ERR_MASK, 3)
    rig.set_reg(R.CPCI_REG_DB_RING, db_ring_value(1, 1))
    rig.reg(0x04c)
    assert rig.reg(R.CPCI_REG_DB_SENT) == 1 and rig.err()
    rig.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_RESET)
    for off in (R.CPCI_REG_CTRL, R.CPCI_REG_EXPORT_LO, R.CPCI_REG_EXPORT_SIZE,
                R.CPCI_REG_DB_MASK, R.CPCI_REG_ERR_MASK, R.CPCI_REG_ERR_STATUS,
                R.CPCI_REG_ERR_ADDR, R.CPCI_REG_DB_SENT, R.CPCI_REG_DB_STATUS):
        assert rig.reg(off) == 0, hex(off)
    assert rig.reg(R.CPCI_REG_NODES) == 4       # still on the backplane
