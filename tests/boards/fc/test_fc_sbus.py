"""qtest: the FC adapter's SBus card (retrolink-fc-sbus, qemu/fc/fc-sbus.c) on the
SPARCstation 5 node's machine (retrolink-SS-5): the FCode PROM at offset 0 of its slot, its
registers big-endian at the slot offsets fc-regs.h gives, DMA through the sun4m IOMMU, its
interrupt at its SBus level of the interrupt controller, a snapshot; a bad slot or PROM
refused by name, two cards in two slots. The same adapter as
the PCI card's tests drive (test_fc_registers.py), whose rig this one extends; the
endianness tests run on both cards. docs/boards/fc.md, "The SBus card"."""
import struct

import pytest
from fc_rig import DATA, IOMMU_AFSR, IOMMU_REGS, SBUS_SLOT0, Rig, SbusRig, \
    deliver_on_first_sync
from snapshots import save_completed, wait_loaded

from retrolink import wire
from retrolink.build.fcode import prom_path
from retrolink.qtest.client import Qtest, QtestClosed
from retrolink.qtest.fc_regs import R, irq_rx, parse_wire, pio_send, \
    wire_frame

BUSES = ("pci", "sbus")


def make_rig(bus, artifacts, sparc, tmp_path, **kw):
    if bus == "pci":
        return Rig(artifacts, tmp_path, **kw)
    return SbusRig(sparc, tmp_path, **kw)


@pytest.fixture
def sbus(sparc, tmp_path):
    r = SbusRig(sparc, tmp_path, extra=["-d", "guest_errors"])
    yield r
    r.close()


def test_the_prom_at_slot_offset_0_is_the_built_fcode(sbus):
    image = prom_path("fc").read_bytes()
    assert image[0] in (0xF1, 0xFD)                 # an FCode header: OpenBIOS runs it
    assert sbus.q.memread(SBUS_SLOT0, len(image)) == image
    sbus.q.writel(SBUS_SLOT0, 0)                     # a ROM: writes change nothing
    assert sbus.q.memread(SBUS_SLOT0, 4) == image[:4]


def test_the_registers_are_at_the_slot_offsets_of_fc_regs_h(sbus):
    assert sbus.reg(R.FC_REG_ID) == R.FC_ID_VALUE
    assert sbus.u(1, R.FC_U_NODE_ID) == 0
    sbus.set_reg(R.FC_REG_IRQ_MASK, 0x5)
    assert sbus.reg(R.FC_REG_IRQ_MASK) == 0x5
    # between the two regions nothing answers (the read is refused by the bus)
    assert sbus.q.readl(SBUS_SLOT0 + R.FC_SBUS_CTRL_OFFSET + R.FC_CTRL_PAGE_SIZE) == 0


@pytest.mark.parametrize("bus", BUSES)
def test_a_register_reads_the_same_value_in_its_card_s_byte_order(bus, artifacts, sparc,
                                                                  tmp_path):
    """The CPU's 32-bit load of FC_REG_ID gives FC_ID_VALUE on either machine; the bytes
    the access carries are the card's order: little-endian on PCI, big-endian on SBus."""
    rig = make_rig(bus, artifacts, sparc, tmp_path)
    try:
        assert rig.reg(R.FC_REG_ID) == R.FC_ID_VALUE
        order = "<" if bus == "pci" else ">"
        assert rig.q.memread(rig.ctrl + R.FC_REG_ID, 4) == struct.pack(order + "I",
                                                                       R.FC_ID_VALUE)
    finally:
        rig.close()


@pytest.mark.parametrize("bus", BUSES)
def test_a_pio_store_puts_the_cpu_s_bytes_on_the_wire(bus, artifacts, sparc, tmp_path):
    """A 64-bit store of V into the PIO buffer sends V's bytes as the storing CPU holds
    them in memory: little-endian from the PC, big-endian from the SPARCstation."""
    rig = make_rig(bus, artifacts, sparc, tmp_path)
    try:
        rig.q.clock_step(2 * 1_000_000)
        rig.bring_up()
        page = rig.chan + R.FC_CHAN_PAGE_SIZE
        rig.q.write(8, page + R.FC_U_PIO_BUF, 0x1122334455667788)
        rig.set_u(1, R.FC_U_PIO_SEND, pio_send(8, 1))
        rig.q.clock_step(100_000)
        f = parse_wire(rig.fabric.wait_for(wire.FRAME)[0]["payload"])
        assert f["payload"] == (0x1122334455667788).to_bytes(8, "little" if bus == "pci"
                                                             else "big")
    finally:
        rig.close()


@pytest.mark.parametrize("bus", BUSES)
def test_a_receive_slot_header_reads_the_same_on_either_cpu(bus, artifacts, sparc, tmp_path):
    """The adapter writes a slot's header in its card's byte order, so the CPU's own
    32-bit load of a field (the tag 0x11223344, distinct bytes) reads the value on either
    machine, and the bytes in memory differ between them."""
    frame = wire_frame(1, 0, R.FC_TYPE_USER, b"endian", tag=0x11223344)
    rig = make_rig(bus, artifacts, sparc, tmp_path,
                   on_sync=deliver_on_first_sync([(2_000_000, frame)]))
    try:
        rig.bring_up(channels=(1,))
        rig.q.clock_set(2_500_000)
        slot = rig.slot_address(0)
        tag_at = slot + 12                      # struct fc_rx_slot: flags, len, src, tag
        assert rig.q.readl(tag_at) == 0x11223344
        order = "little" if bus == "pci" else "big"
        assert rig.q.memread(tag_at, 4) == (0x11223344).to_bytes(4, order)
        assert rig.q.readl(slot + 4) == len(b"endian")
        assert rig.q.memread(slot + 32, 6) == b"endian"
    finally:
        rig.close()


def test_a_dma_send_reads_memory_through_the_iommu(sparc, tmp_path):
    """The DVMA table and the data are at DVMA addresses, which the IOMMU translates: the
    frames carry what is at the physical pages behind them."""
    rig = SbusRig(sparc, tmp_path)
    try:
        data = bytes(range(256)) * 12
        rig.q.memwrite(DATA, data)
        rig.q.clock_step(2 * 1_000_000)
        rig.bring_up()
        rig.dma_send(1, 0, len(data))
        rig.q.clock_step(1_000_000)
        frames = rig.fabric.wait_for(wire.FRAME, 2)
        assert b"".join(parse_wire(f["payload"])["payload"] for f in frames) == data
        assert rig.u(1, R.FC_U_TX_STATUS) == R.FC_ERR_NONE
    finally:
        rig.close()


def test_dvma_the_iommu_does_not_map_reaches_no_memory(sparc, tmp_path):
    """A page the adapter's own table maps but the IOMMU does not: its DMA reads zeros
    there, as from no memory on a bus, and the IOMMU records the fault; the pages the
    IOMMU maps come through."""
    hole = DATA // 4096 + 1                     # the send's second page
    rig = SbusRig(sparc, tmp_path, iommu_valid=lambda page: page != hole)
    try:
        data = bytes(range(1, 256)) * 16 + b"x" * 2000     # 6080 bytes: 2 pages, 3 frames
        rig.q.memwrite(DATA, data)
        rig.q.clock_step(2 * 1_000_000)
        rig.bring_up()
        rig.dma_send(1, 0, len(data))
        rig.q.clock_step(1_000_000)
        sent = b"".join(parse_wire(f["payload"])["payload"]
                        for f in rig.fabric.wait_for(wire.FRAME, 3))
        assert sent[:4096] == data[:4096] and sent[4096:] == bytes(len(data) - 4096)
        assert rig.q.readl(IOMMU_REGS + IOMMU_AFSR) >> 31 == 1        # IOMMU_AFSR_ERR
    finally:
        rig.close()


def test_the_interrupt_is_at_its_sbus_level(sparc, tmp_path):
    """A cause the mask lets through holds the card's SBus level pending at the interrupt
    controller until it is acknowledged; a masked one does not."""
    frames = [(2_000_000, wire_frame(1, 0, R.FC_TYPE_USER, b"x", tag=1)),
              (2_200_000, wire_frame(1, 0, R.FC_TYPE_USER, b"y", tag=2))]
    rig = SbusRig(sparc, tmp_path, on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up(channels=(1,), irq_mask=0)
        rig.q.clock_set(2_100_000)
        assert rig.reg(R.FC_REG_IRQ_STATUS) & irq_rx(1) and not rig.irq_pending()
        rig.set_reg(R.FC_REG_IRQ_MASK, irq_rx(1))
        assert rig.irq_pending()
        rig.set_reg(R.FC_REG_IRQ_STATUS, irq_rx(1))
        assert not rig.irq_pending()
        rig.q.clock_set(2_300_000)
        assert rig.irq_pending()
    finally:
        rig.close()


def test_the_card_survives_a_snapshot(sparc, tmp_path):
    """The card's state in the sun4m machine's snapshot: registers and ring position come
    back, and the next frame lands in the next slot."""
    frames = [(2_000_000, wire_frame(1, 0, R.FC_TYPE_USER, b"before", tag=1))]
    src = SbusRig(sparc, tmp_path, name="src", qmp=True, on_sync=deliver_on_first_sync(frames))
    try:
        src.bring_up(channels=(1,))
        src.q.clock_set(2_500_000)
        before = (src.reg(R.FC_REG_IRQ_MASK), src.ch(1, R.FC_CH_RX_FRAMES),
                  src.ch(1, R.FC_CH_DVMA_LO))
        save_completed(src.q, tmp_path / "fc.state", src.log)
    finally:
        src.close()
    after = [(2_600_000, wire_frame(1, 0, R.FC_TYPE_USER, b"after", tag=2))]
    dst = SbusRig(sparc, tmp_path, name="dst", qmp=True, incoming=tmp_path / "fc.state",
                  on_sync=deliver_on_first_sync(after))
    try:
        assert wait_loaded(dst.q) == "paused"
        assert dst.q.qmp("cont") == {"return": {}}
        dst.q.clock_set(2_500_000)
        assert (dst.reg(R.FC_REG_IRQ_MASK), dst.ch(1, R.FC_CH_RX_FRAMES),
                dst.ch(1, R.FC_CH_DVMA_LO)) == before
        dst.q.clock_set(2_700_000)
        _, length, _, tag, _, _ = dst.slot_header(1)
        assert (length, tag) == (5, 2)
    finally:
        dst.close()


def card(slot: int, node: int, prom) -> list[str]:
    return ["-device", f"retrolink-fc-sbus,slot={slot},node={node},prom={prom}"]


@pytest.mark.parametrize("args, message", [
    (lambda p, t: card(3, 0, p), "retrolink-fc-sbus: slot 3 is not a free SBus slot of the "
                                 "SS-5 (0..2, one card each)"),
    (lambda p, t: card(1, 0, p) + card(1, 1, p), "slot 1 is not a free SBus slot"),
    (lambda p, t: ["-device", "retrolink-fc-sbus,slot=0"],
     "retrolink-fc-sbus: prom (the card's FCode PROM image) is required"),
    (lambda p, t: card(0, 0, t / "none.fcode"), "none.fcode: no such file, or not readable"),
    (lambda p, t: card(0, 0, t / "empty.fcode"), "empty.fcode is 0 bytes, not 1..65536"),
])
def test_a_bad_slot_or_prom_is_refused_by_name(sparc, tmp_path, args, message):
    (tmp_path / "empty.fcode").write_bytes(b"")
    log = tmp_path / "qemu.log"
    with pytest.raises(QtestClosed):
        # a slot is checked once the machine is made, after QEMU has connected
        q = Qtest(sparc.qemu, args(prom_path("fc"), tmp_path), log, machine="retrolink-SS-5")
        q.memread(SBUS_SLOT0, 4)
    assert message in log.read_text(), log.read_text()


def test_two_cards_in_two_slots_each_show_their_prom(sparc, tmp_path):
    """Each card is mapped at its own slot's base with its own PROM (its RAM block named
    by the slot: two cards' names once clashed and QEMU aborted)."""
    prom = prom_path("fc")
    q = Qtest(sparc.qemu, card(0, 0, prom) + card(2, 1, prom), tmp_path / "qemu.log",
              machine="retrolink-SS-5")
    try:
        image = prom.read_bytes()
        for slot in (0, 2):
            assert q.memread(SBUS_SLOT0 + slot * 0x10000000, len(image)) == image
        # the empty slot between answers nothing
        assert q.memread(SBUS_SLOT0 + 0x10000000, 4) != image[:4]
    finally:
        q.close()
