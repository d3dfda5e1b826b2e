"""The FC adapter under qtest, the test being its driver: BARs mapped, a DVMA table in
guest RAM, a receive ring; optionally on a 2-node fake fabric (node 0, peer 1). Rig is the
PCI card on a PC, SbusRig the SBus card on a SPARCstation 5."""
import struct

from retrolink import wire
from retrolink.build.fcode import prom_path
from retrolink.qtest.fake_fabric import deliver_on_first_sync  # noqa: F401
from retrolink.qtest.fc_regs import R, ch_reg
from retrolink.qtest.rig import FIRST_GRANT, DeviceRig  # noqa: F401

CTRL, CHAN = 0xC0000000, 0xC1000000      # BAR0, BAR2
TABLE = 0x00100000                       # the DVMA table (guest RAM)
DATA = 0x00200000                        # DVMA pages 0..DATA_PAGES-1: readable data
DATA_PAGES = 64
RING_PAGE = 64                           # DVMA pages 64.. : the receive ring, writable
RING = 0x00400000
RING_SLOTS = 4
RO_PAGE = 80                             # a valid page without FC_DVMA_WRITE
TABLE_PAGES = 96                         # entries; 81..95 invalid
NEVER = wire.NEVER


def ns(n: int, rate: int) -> int:
    """n bytes at rate bytes/s, rounded up to a whole ns (rl_bytes_ns)."""
    return -(-n * 10**9 // rate)


def dma_send_model(p, go_end: int, length: int) -> list[tuple[int, int, int, int]]:
    """(time on the link, offset, bytes, end of its DMA) of each frame of a DMA send whose
    TX_GO store ended at go_end, on an idle adapter."""
    slots = [0] * p["queue"]
    dma_free = adapter_free = 0
    ready = go_end + p["send_setup"]
    frames, off = [], 0
    while off < length:
        n = min(R.FC_MAX_PAYLOAD, length - off)
        k = slots.index(min(slots))
        dma_end = max(ready, slots[k], dma_free) + ns(n, p["dma"])
        dma_free = dma_end
        out = max(dma_end, adapter_free) + p["frame_setup"] + ns(n, p["adapter"])
        adapter_free = slots[k] = out
        frames.append((out, off, n, dma_end))
        ready, off = dma_end, off + n
    return frames


class Rig(DeviceRig):
    # where the CPU reaches the regions; the byte order of the structures in memory
    ctrl, chan = CTRL, CHAN
    order = "<"

    def __init__(self, artifacts, tmp_path, props: str = "", qemu=None, **kw):
        """kw: DeviceRig's (fabric, on_sync, extra, env, name, qmp, incoming)."""
        super().__init__(qemu or artifacts.qemu, tmp_path, "retrolink-fc",
                         (R.FC_PCI_VENDOR_ID, R.FC_PCI_DEVICE_ID), {0: CTRL, 2: CHAN},
                         props=",".join(x for x in ("start-us=0", props) if x),
                         fabric_props="mac=52:54:00:12:34:56", **kw)

    def bus(self, addr: int) -> int:
        """The address the adapter's DMA uses for guest physical address addr."""
        return addr

    # registers
    def reg(self, off: int) -> int:
        return self.q.readl(self.ctrl + off)

    def set_reg(self, off: int, val: int) -> None:
        self.q.writel(self.ctrl + off, val)

    def ch(self, c: int, r: int) -> int:
        return self.q.readl(self.ctrl + ch_reg(c, r))

    def set_ch(self, c: int, r: int, val: int) -> None:
        self.q.writel(self.ctrl + ch_reg(c, r), val)

    def u(self, c: int, r: int) -> int:
        return self.q.readl(self.chan + c * R.FC_CHAN_PAGE_SIZE + r)

    def set_u(self, c: int, r: int, val: int) -> None:
        self.q.writel(self.chan + c * R.FC_CHAN_PAGE_SIZE + r, val)

    # DVMA
    def write_table(self, entries: dict[int, int] | None = None) -> None:
        """The default table (data pages readable, ring pages writable, one read-only
        page), with entries overriding it."""
        table = {}
        for i in range(DATA_PAGES):
            table[i] = self.bus(DATA + i * 4096) | R.FC_DVMA_VALID
        for i in range(RING_SLOTS):
            table[RING_PAGE + i] = self.bus(RING + i * 4096) | R.FC_DVMA_VALID | R.FC_DVMA_WRITE
        table[RO_PAGE] = self.bus(DATA + DATA_PAGES * 4096) | R.FC_DVMA_VALID
        table.update(entries or {})
        blob = b"".join(struct.pack(self.order + "Q", table.get(i, 0))
                        for i in range(TABLE_PAGES))
        self.q.memwrite(TABLE, blob)

    def configure(self, c: int, slots: int = RING_SLOTS, ring_page: int = RING_PAGE,
                  pages: int = TABLE_PAGES) -> None:
        self.set_ch(c, R.FC_CH_DVMA_LO, self.bus(TABLE))
        self.set_ch(c, R.FC_CH_DVMA_HI, 0)
        self.set_ch(c, R.FC_CH_DVMA_PAGES, pages)
        self.set_ch(c, R.FC_CH_RX_RING, ring_page * 4096)
        self.set_ch(c, R.FC_CH_RX_SLOTS, slots)

    def bring_up(self, channels=(0, 1), irq_mask: int = 0x1FFFF) -> None:
        """Adapter on, the default table, every given channel configured and enabled."""
        self.write_table()
        self.set_reg(R.FC_REG_IRQ_MASK, irq_mask)
        self.set_reg(R.FC_REG_CTRL, R.FC_CTRL_ENABLE)
        for c in channels:
            self.configure(c)
            self.set_ch(c, R.FC_CH_CTRL, R.FC_CH_ENABLE)
            assert self.ch(c, R.FC_CH_STATUS) & R.FC_CHS_ENABLED, self.reg(R.FC_REG_ERROR)

    def dma_send(self, c: int, addr: int, length: int, dest: int = 1, tag: int = 7) -> None:
        self.set_u(c, R.FC_U_TX_ADDR, addr)
        self.set_u(c, R.FC_U_TX_LEN, length)
        self.set_u(c, R.FC_U_TX_DEST, dest)
        self.set_u(c, R.FC_U_TX_TAG, tag)
        self.set_u(c, R.FC_U_TX_GO, 1)

    def slot_address(self, j: int) -> int:
        return RING + j * R.FC_RX_SLOT_SIZE

    def slot(self, j: int) -> bytes:
        return self.q.memread(self.slot_address(j), R.FC_RX_SLOT_SIZE)

    def slot_header(self, j: int) -> tuple:
        """struct fc_rx_slot of slot j, in the card's byte order: (flags, len, src, tag,
        offset, msg_len)."""
        return struct.unpack_from(self.order + "IIIIII", self.slot(j))


# The SBus card on the SPARCstation 5 (qemu/fc/fc-sbus.c, qemu/core/rl-sun4m.c): in slot 0,
# DMA through the sun4m IOMMU (hw/sparc/sun4m_iommu.c), which the rig sets up as a driver
# would: 16 MiB of DVMA at 0xff000000, DVMA page k mapping guest physical page k
SBUS_SLOT0 = 0x20000000
IOMMU_REGS = 0x10000000             # the SS-5's IOMMU registers (hw/sparc/sun4m.c)
IOMMU_CTRL, IOMMU_BASE, IOMMU_AFSR = 0x0000, 0x0004, 0x1000
IOMMU_CTRL_ENAB, IOMMU_RNGE_16MB = 0x1, 0x0
IOPTE_VALID, IOPTE_WRITE = 0x2, 0x4
IOMMU_TABLE = 0x00080000            # its page table: 4096 entries, 16 KiB
DVMA_BASE = 0xFF000000
INTCTL_PENDING = 0x71E10000         # the system interrupt controller's pending register
SBUS_IRQ_BIT = 6                    # + the SBus level: its bit there (slavio_intctl.c)


class SbusRig(Rig):
    ctrl = SBUS_SLOT0 + R.FC_SBUS_CTRL_OFFSET
    chan = SBUS_SLOT0 + R.FC_SBUS_CHAN_OFFSET
    order = ">"

    def __init__(self, sparc, tmp_path, props: str = "", iommu_valid=None, **kw):
        """sparc: the sparc build's artifacts. iommu_valid(page): whether the IOMMU maps
        DVMA page `page` (default: all of them, writable)."""
        DeviceRig.__init__(self, sparc.qemu, tmp_path, "retrolink-fc-sbus", None, {},
                           props=",".join(x for x in (f"id=fc,slot=0,prom={prom_path('fc')}",
                                                      "start-us=0", props) if x),
                           fabric_props="mac=52:54:00:12:34:56", machine="retrolink-SS-5", **kw)
        if "incoming" not in kw:
            self.map_iommu(iommu_valid or (lambda page: True))

    def bus(self, addr: int) -> int:
        return DVMA_BASE + addr

    def map_iommu(self, valid) -> None:
        ptes = [(page * 4096 >> 4) | (IOPTE_VALID | IOPTE_WRITE if valid(page) else 0)
                for page in range(4096)]
        self.q.memwrite(IOMMU_TABLE, b"".join(struct.pack(">I", p) for p in ptes))
        self.q.writel(IOMMU_REGS + IOMMU_BASE, IOMMU_TABLE >> 4)
        self.q.writel(IOMMU_REGS + IOMMU_CTRL, IOMMU_CTRL_ENAB | IOMMU_RNGE_16MB)

    def irq_pending(self) -> bool:
        """The card's SBus level is pending at the interrupt controller."""
        return bool(self.q.readl(INTCTL_PENDING) >> (SBUS_IRQ_BIT + R.FC_SBUS_LEVEL) & 1)
