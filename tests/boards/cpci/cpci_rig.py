"""The CompactPCI bridge under qtest, the test being its driver: BAR0 (the control page)
and BAR2 (the windows) mapped, an exported region in guest RAM; the board is node 0 of a
fake backplane of `nodes` bridges, which the test plays (ScriptedRig: it sees the board's
frames and delivers frames to it at chosen times)."""
from retrolink import wire
from retrolink.qtest.cpci_regs import R, parse_wire
from retrolink.qtest.rig import FIRST_GRANT, ScriptedRig  # noqa: F401

CTRL, WIN = 0xC0000000, 0xC1000000      # BAR0, BAR2
NEVER = wire.NEVER
T0 = 2_000_000                          # past the first grant: the backplane is up
EXPORT = 0x00200000                     # the exported region in guest RAM
EXPORT_SIZE = 0x4000


class Rig(ScriptedRig):
    CHECK_PROMISE = True

    def __init__(self, artifacts, tmp_path, nodes: int = 4, props: str = "", frames=(),
                 step: int | None = None, react=None, qemu=None, **kw):
        super().__init__(qemu or artifacts.qemu, tmp_path, "retrolink-cpci",
                         (R.CPCI_PCI_VENDOR_ID, R.CPCI_PCI_DEVICE_ID), {0: CTRL, 2: WIN},
                         parse_wire, frames=frames, step=step, react=react, props=props,
                         fabric_props="mac=52:54:00:12:34:56", nodes=nodes, **kw)

    def reg(self, off: int) -> int:
        return self.q.readl(CTRL + off)

    def set_reg(self, off: int, val: int) -> None:
        self.q.writel(CTRL + off, val)

    def err(self) -> int:
        return self.reg(R.CPCI_REG_ERR_STATUS)

    def clear_err(self) -> None:
        self.set_reg(R.CPCI_REG_ERR_STATUS, 0xFFFFFFFF)

    def win_addr(self, node: int, off: int) -> int:
        return WIN + node * R.CPCI_WINDOW_SIZE + off

    def store(self, node: int, off: int, size: int, val: int) -> None:
        self.q.write(size, self.win_addr(node, off), val)

    def load(self, node: int, off: int, size: int) -> int:
        return self.q.read(size, self.win_addr(node, off))

    def bring_up(self, at: int = T0, export: bool = True) -> int:
        """The backplane up (the clock past the first grant), the export set and on, the
        board enabled, every doorbell and error unmasked: the time then."""
        self.q.clock_set(at)
        self.set_reg(R.CPCI_REG_EXPORT_LO, EXPORT)
        self.set_reg(R.CPCI_REG_EXPORT_HI, 0)
        self.set_reg(R.CPCI_REG_EXPORT_SIZE, EXPORT_SIZE)
        self.set_reg(R.CPCI_REG_CTRL, R.CPCI_CTRL_ENABLE | (R.CPCI_CTRL_EXPORT if export else 0))
        return self.q.clock_set(at + 100_000)
