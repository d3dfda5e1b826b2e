"""The VIA NIC under qtest, the test being its kernel agent and VIPL: BAR0 (the control
page) and BAR2 (the doorbells) mapped, a TPT and registered memory in guest RAM; the NIC
is node 0 of a fake switch of `nodes` NICs, which the test plays (ScriptedRig: it sees the
NIC's frames and delivers frames to it at chosen times)."""
import struct

from retrolink import wire
from retrolink.qtest.rig import FIRST_GRANT, ScriptedRig  # noqa: F401
from retrolink.qtest.via_regs import (CQE, R, arm_cq, arm_vi, db_value,  # noqa: F401
                                      descriptor, parse_control, parse_wire, wire_frame)

CTRL, DB = 0xC0000000, 0xC1000000       # BAR0, BAR2
NEVER = wire.NEVER
T0 = 2_000_000                           # past the first grant: the switch is up
PAGE = R.VIA_PAGE

# guest RAM
TPT = 0x00100000                         # the TPT
CQ_RING = 0x00180000                     # CQ rings, 0x1000 bytes each
DATA = 0x00200000                        # the pages of region 1, TPT entries 0..DATA_PAGES-1
DATA_PAGES = 32
RO, OTHER, INVALID = 32, 33, 34          # TPT entries: read-only, tag OTHER_TAG, invalid
TPT_PAGES = 40
TAG, OTHER_TAG = 5, 6
VA = 0x10000000                          # region 1's first virtual address
HANDLE = 1                               # region 1: DATA_PAGES pages, tag TAG
RO_HANDLE, OTHER_HANDLE, INVALID_HANDLE = 2, 3, 4      # one page each, on those entries
RO_VA, OTHER_VA, INVALID_VA = 0x20000000, 0x30000000, 0x40000000


class Rig(ScriptedRig):
    CHECK_PROMISE = True

    def __init__(self, artifacts, tmp_path, nodes: int = 4, props: str = "", frames=(),
                 step: int | None = None, react=None, qemu=None, **kw):
        """frames, step, react: ScriptedRig's; kw: DeviceRig's."""
        super().__init__(qemu or artifacts.qemu, tmp_path, "retrolink-via",
                         (R.VIA_PCI_VENDOR_ID, R.VIA_PCI_DEVICE_ID), {0: CTRL, 2: DB},
                         parse_wire, frames=frames, step=step, react=react,
                         props=",".join(x for x in ("start-us=0", props) if x),
                         fabric_props="mac=52:54:00:12:34:56", nodes=nodes, **kw)

    # registers
    def reg(self, off: int) -> int:
        return self.q.readl(CTRL + off)

    def set_reg(self, off: int, val: int) -> None:
        self.q.writel(CTRL + off, val)

    def db(self, v: int, r: int) -> int:
        return self.q.readl(DB + v * R.VIA_DB_PAGE_SIZE + r)

    def post(self, v: int, q: int, off: int, handle: int = HANDLE) -> None:
        """A post of the descriptor at byte off of region handle: a 64-bit store."""
        self.q.write(8, DB + v * R.VIA_DB_PAGE_SIZE + (R.VIA_DB_RECV if q else R.VIA_DB_SEND),
                     db_value(handle, off))

    def error(self) -> int:
        return self.reg(R.VIA_REG_ERROR)

    # memory
    def write_tpt(self, entries: dict[int, int] | None = None) -> None:
        """Region 1's pages writable with TAG, the RO, OTHER and INVALID entries; entries
        override them."""
        table = {i: (DATA + i * PAGE) | 3 | TAG << 4 for i in range(DATA_PAGES)}
        table[RO] = (DATA + DATA_PAGES * PAGE) | 1 | TAG << 4
        table[OTHER] = (DATA + (DATA_PAGES + 1) * PAGE) | 3 | OTHER_TAG << 4
        table[INVALID] = (DATA + (DATA_PAGES + 2) * PAGE) | 2 | TAG << 4
        table.update(entries or {})
        self.q.memwrite(TPT, b"".join(struct.pack("<Q", table.get(i, 0))
                                      for i in range(TPT_PAGES)))

    def region(self, index: int, va: int, length: int, tpt: int, ptag: int,
               cmd: int = R.VIA_MR_SET) -> int:
        for off, val in ((R.VIA_REG_MR_INDEX, index), (R.VIA_REG_MR_VA_LO, va & 0xFFFFFFFF),
                         (R.VIA_REG_MR_VA_HI, va >> 32), (R.VIA_REG_MR_LEN, length),
                         (R.VIA_REG_MR_TPT, tpt), (R.VIA_REG_MR_PTAG, ptag),
                         (R.VIA_REG_MR_CMD, cmd)):
            self.set_reg(off, val)
        return self.error()

    def cq(self, c: int, entries: int = 8, addr: int | None = None) -> int:
        addr = CQ_RING + c * 0x1000 if addr is None else addr
        for off, val in ((R.VIA_REG_CQ_INDEX, c), (R.VIA_REG_CQ_ADDR_LO, addr),
                         (R.VIA_REG_CQ_ADDR_HI, 0), (R.VIA_REG_CQ_ENTRIES, entries),
                         (R.VIA_REG_CQ_CMD, R.VIA_CQ_SET)):
            self.set_reg(off, val)
        return self.error()

    def vi_cmd(self, v: int, cmd: int, ptag: int = TAG, scq: int = R.VIA_NO_CQ,
               rcq: int = R.VIA_NO_CQ, peer: tuple[int, int] = (1, 0)) -> int:
        for off, val in ((R.VIA_REG_VI_INDEX, v), (R.VIA_REG_VI_PTAG, ptag),
                         (R.VIA_REG_VI_CQ, scq | rcq << 16),
                         (R.VIA_REG_VI_PEER, peer[0] | peer[1] << 16),
                         (R.VIA_REG_VI_CMD, cmd)):
            self.set_reg(off, val)
        return self.error()

    def bring_up(self, irq_mask: int = R.VIA_IRQ_ALL, at: int = T0) -> int:
        """The switch up (the clock past the first grant), the TPT and regions 1..4 set,
        the NIC enabled and ready, the bus idle again: the time then."""
        self.q.clock_set(at)
        self.write_tpt()
        self.set_reg(R.VIA_REG_TPT_LO, TPT)
        self.set_reg(R.VIA_REG_TPT_HI, 0)
        self.set_reg(R.VIA_REG_TPT_PAGES, TPT_PAGES)
        self.set_reg(R.VIA_REG_IRQ_MASK, irq_mask)
        self.set_reg(R.VIA_REG_CTRL, R.VIA_CTRL_ENABLE)
        assert self.region(0, VA, DATA_PAGES * PAGE, 0, TAG) == 0
        assert self.region(1, RO_VA, PAGE, RO, TAG) == 0
        assert self.region(2, OTHER_VA, PAGE, OTHER, OTHER_TAG) == 0
        assert self.region(3, INVALID_VA, PAGE, INVALID, TAG) == 0
        self.q.clock_set(at + 50_000)
        assert self.reg(R.VIA_REG_STATUS) & R.VIA_STATUS_READY
        return self.q.clock_set(at + 100_000)

    def connect(self, v: int, peer: tuple[int, int] = (1, 0), scq: int = R.VIA_NO_CQ,
                rcq: int = R.VIA_NO_CQ, ptag: int = TAG) -> None:
        assert self.vi_cmd(v, R.VIA_VI_CMD_OPEN, ptag=ptag, scq=scq, rcq=rcq) == 0
        assert self.vi_cmd(v, R.VIA_VI_CMD_CONNECT, ptag=ptag, scq=scq, rcq=rcq,
                           peer=peer) == 0

    def mem(self, off: int, data: bytes) -> None:
        """Bytes at byte off of region 1."""
        if data:
            self.q.memwrite(DATA + off, data)

    def read(self, off: int, n: int) -> bytes:
        return self.q.memread(DATA + off, n)

    def desc(self, off: int) -> dict:
        return parse_control(self.read(off, 32))

    def cq_entries(self, c: int, n: int) -> list[tuple[int, int]]:
        raw = self.q.memread(CQ_RING + c * 0x1000, 8 * n)
        return [CQE.unpack_from(raw, 8 * i) for i in range(n)]
