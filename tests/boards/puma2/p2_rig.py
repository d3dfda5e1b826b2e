"""The PUMA-II board under qtest, the test being its driver: BAR0 (the control page) and
BAR1 (the board memory) mapped; the board is node 0 of a fake token ring of `nodes`
boards, which the test plays: it sees the board's frames (self.fabric.received) and
delivers frames to it at chosen times (deliver(), or `frames` at the first sync)."""
from retrolink import wire
from retrolink.qtest.puma2_regs import R, cmd, parse_wire, wire_frame  # noqa: F401
from retrolink.qtest.rig import FIRST_GRANT, ScriptedRig  # noqa: F401

CTRL, MEM = 0xC0000000, 0xC1000000      # BAR0, BAR1
PAGE = R.PUMA2_PAGE
NEVER = wire.NEVER
T0 = 2_000_000                           # past the first grant: the ring is up

# the board's defaults (qemu/puma2/puma2.c, src/retrolink/boards/puma2.py)
DEFAULTS = dict(vme_overhead=500, vme_rate=20_000_000, request=2000, copy_rate=40_000_000)


def ns(n: int, rate: int) -> int:
    """n bytes at rate bytes/s, rounded up to a whole ns (rl_bytes_ns)."""
    return -(-n * 10**9 // rate)


def vme_ns(p: dict, nbytes: int) -> int:
    """One access of nbytes over the VME bus: a 32-bit transaction per 4 bytes or part."""
    return -(-nbytes // 4) * (p["vme_overhead"] + ns(4, p["vme_rate"]))


def copy_ns(p: dict) -> int:
    return ns(PAGE, p["copy_rate"])


def props(p: dict) -> str:
    return (f"vme-overhead-ns={p['vme_overhead']},vme-rate={p['vme_rate']},"
            f"request-ns={p['request']},copy-rate={p['copy_rate']}")


class Rig(ScriptedRig):
    def __init__(self, artifacts, tmp_path, nodes: int = 4, props: str = "",
                 frames=(), step: int | None = None, react=None, memory_mib: int = 1,
                 qemu=None, **kw):
        """frames, step, react: ScriptedRig's; kw: DeviceRig's."""
        super().__init__(qemu or artifacts.qemu, tmp_path, "retrolink-puma2",
                         (R.PUMA2_PCI_VENDOR_ID, R.PUMA2_PCI_DEVICE_ID), {0: CTRL, 1: MEM},
                         parse_wire, frames=frames, step=step, react=react,
                         props=",".join(x for x in (f"start-us=0,memory-mib={memory_mib}",
                                                    props) if x),
                         nodes=nodes, **kw)

    # registers
    def reg(self, off: int) -> int:
        return self.q.readl(CTRL + off)

    def set_reg(self, off: int, val: int) -> None:
        self.q.writel(CTRL + off, val)

    def counter64(self, lo: int) -> int:
        v = self.reg(lo)
        return v | self.reg(lo + 4) << 32

    def bring_up(self, irq_mask: int = R.PUMA2_IRQ_ALL, at: int = T0) -> int:
        """The ring up (the clock past the first grant), the board enabled and ready, the
        bus idle again: the time then."""
        self.q.clock_set(at)
        self.set_reg(R.PUMA2_REG_IRQ_MASK, irq_mask)
        self.set_reg(R.PUMA2_REG_CTRL, R.PUMA2_CTRL_ENABLE)
        t = self.q.clock_set(at + 10_000)
        assert self.reg(R.PUMA2_REG_STATUS) & R.PUMA2_STATUS_READY
        return self.q.clock_set(at + 20_000)

    def command(self, page: int, op: int) -> None:
        self.set_reg(R.PUMA2_REG_CMD, cmd(page, op))

    def responses(self) -> list[int]:
        out = []
        while (v := self.reg(R.PUMA2_REG_RESP)) != R.PUMA2_RESP_EMPTY:
            out.append(v)
        return out

    # the board memory through BAR1
    def page(self, p: int) -> bytes:
        return self.q.memread(MEM + p * PAGE, PAGE)

    def fill(self, p: int, data: bytes) -> None:
        self.q.memwrite(MEM + p * PAGE, data)
