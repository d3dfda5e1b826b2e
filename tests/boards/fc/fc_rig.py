"""The FC adapter under qtest, the test being its driver: BARs mapped, a DVMA table in
guest RAM, a receive ring; optionally on a 2-node fake fabric (node 0, peer 1)."""
import struct

from retrolink import wire
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
    def __init__(self, artifacts, tmp_path, props: str = "", qemu=None, **kw):
        """kw: DeviceRig's (fabric, on_sync, extra, env, name, qmp, incoming)."""
        super().__init__(qemu or artifacts.qemu, tmp_path, "retrolink-fc",
                         (R.FC_PCI_VENDOR_ID, R.FC_PCI_DEVICE_ID), {0: CTRL, 2: CHAN},
                         props=",".join(x for x in ("start-us=0", props) if x),
                         fabric_props="mac=52:54:00:12:34:56", **kw)

    # registers
    def reg(self, off: int) -> int:
        return self.q.readl(CTRL + off)

    def set_reg(self, off: int, val: int) -> None:
        self.q.writel(CTRL + off, val)

    def ch(self, c: int, r: int) -> int:
        return self.q.readl(CTRL + ch_reg(c, r))

    def set_ch(self, c: int, r: int, val: int) -> None:
        self.q.writel(CTRL + ch_reg(c, r), val)

    def u(self, c: int, r: int) -> int:
        return self.q.readl(CHAN + c * R.FC_CHAN_PAGE_SIZE + r)

    def set_u(self, c: int, r: int, val: int) -> None:
        self.q.writel(CHAN + c * R.FC_CHAN_PAGE_SIZE + r, val)

    # DVMA
    def write_table(self, entries: dict[int, int] | None = None) -> None:
        """The default table (data pages readable, ring pages writable, one read-only
        page), with entries overriding it."""
        table = {}
        for i in range(DATA_PAGES):
            table[i] = (DATA + i * 4096) | R.FC_DVMA_VALID
        for i in range(RING_SLOTS):
            table[RING_PAGE + i] = (RING + i * 4096) | R.FC_DVMA_VALID | R.FC_DVMA_WRITE
        table[RO_PAGE] = (DATA + DATA_PAGES * 4096) | R.FC_DVMA_VALID
        table.update(entries or {})
        blob = b"".join(struct.pack("<Q", table.get(i, 0)) for i in range(TABLE_PAGES))
        self.q.memwrite(TABLE, blob)

    def configure(self, c: int, slots: int = RING_SLOTS, ring_page: int = RING_PAGE,
                  pages: int = TABLE_PAGES) -> None:
        self.set_ch(c, R.FC_CH_DVMA_LO, TABLE)
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

    def slot(self, j: int) -> bytes:
        return self.q.memread(RING + j * R.FC_RX_SLOT_SIZE, R.FC_RX_SLOT_SIZE)
