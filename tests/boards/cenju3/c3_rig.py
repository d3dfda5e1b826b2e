"""The Cenju-3 interface under qtest, the test being its driver: BAR0 mapped, a request
ring, an event ring and a receive table with slots in guest RAM; on a fake fabric of
`nodes` nodes (this one is node 0), or alone."""
import struct

from retrolink import wire
from retrolink.qtest.cenju3_regs import EVENT, R, parse_event, req
from retrolink.qtest.fake_fabric import deliver_on_first_sync  # noqa: F401
from retrolink.qtest.rig import FIRST_GRANT, DeviceRig  # noqa: F401

BAR = 0xC0000000
REQ_RING = 0x00100000
EVQ_RING = 0x00108000
RXT = 0x00110000
SLOTS = 0x00120000                      # slot j of peer p: SLOTS + (p * 16 + j) * 512
DATA = 0x00200000                       # source data
TARGET = 0x00400000                     # remote DMA targets
T0 = 2_000_000                          # the tests start here, past the first grant
NEVER = wire.NEVER
DEFAULTS = dict(reg=200, dma=100_000_000, req_setup=1000, packet_setup=400, cache_op=200,
                cache_line=40)


def ns(n: int, rate: int) -> int:
    """n bytes at rate bytes/s, rounded up to a whole ns (rl_bytes_ns)."""
    return -(-n * 10**9 // rate)


def props(p: dict) -> str:
    return (f"reg-access-ns={p['reg']},dma-rate={p['dma']},req-setup-ns={p['req_setup']},"
            f"packet-setup-ns={p['packet_setup']},cache-op-ns={p['cache_op']},"
            f"cache-line-ns={p['cache_line']}")


def slot_addr(p: int, j: int) -> int:
    return SLOTS + (p * R.C3_MAX_SLOTS + j) * R.C3_SLOT_SIZE


def send_model(p: dict, doorbell_end: int, length: int) -> list[tuple[int, int]]:
    """(time the packet leaves for the network, its bytes) of each packet of a request
    whose REQ_TAIL store ended at doorbell_end, on an idle interface: taking the request,
    then per packet the DMA read into one of two transmit buffers and the packet stage,
    the DMA of packet i + 1 overlapping the packet stage of packet i (docs/boards/cenju3.md,
    "Timing")."""
    free = [0, 0]                       # each transmit buffer is free again
    dma_start = doorbell_end + p["req_setup"]
    stage_free = 0
    out, off = [], 0
    while off < length:
        n = min(R.C3_PACKET_MAX, length - off)
        b = free.index(min(free))
        dma_end = max(dma_start, free[b]) + ns(n, p["dma"])
        leave = max(dma_end, stage_free) + p["packet_setup"]
        stage_free = free[b] = leave
        out.append((leave, n))
        dma_start, off = dma_end, off + n
    return out


class Rig(DeviceRig):
    def __init__(self, artifacts, tmp_path, props: str = "", qemu=None, **kw):
        """kw: DeviceRig's (fabric, nodes, on_sync, extra, env, name, qmp, incoming)."""
        super().__init__(qemu or artifacts.qemu, tmp_path, "retrolink-cenju3",
                         (R.C3_PCI_VENDOR_ID, R.C3_PCI_DEVICE_ID), {0: BAR},
                         props=",".join(x for x in ("start-us=0", props) if x), **kw)
        self.tail = 0                   # requests written
        self.consumed = 0               # events read
        self.req_size = self.evq_size = 8

    # registers
    def reg(self, off: int) -> int:
        return self.q.readl(BAR + off)

    def set_reg(self, off: int, val: int) -> None:
        self.q.writel(BAR + off, val)

    def configure(self, req_size: int = 8, evq_size: int = 8, slots: int = 2,
                  nodes: int = 2, table: dict | None = None) -> None:
        """The rings and the receive table (entry (p, j) -> slot_addr(p, j), overridden by
        table); every slot empty."""
        self.req_size, self.evq_size = req_size, evq_size
        for off, v in ((R.C3_REG_REQ_BASE_LO, REQ_RING), (R.C3_REG_REQ_BASE_HI, 0),
                       (R.C3_REG_REQ_SIZE, req_size), (R.C3_REG_EVQ_BASE_LO, EVQ_RING),
                       (R.C3_REG_EVQ_BASE_HI, 0), (R.C3_REG_EVQ_SIZE, evq_size),
                       (R.C3_REG_RXT_BASE_LO, RXT), (R.C3_REG_RXT_BASE_HI, 0),
                       (R.C3_REG_RXT_SLOTS, slots)):
            self.set_reg(off, v)
        entries = {(p, j): slot_addr(p, j) for p in range(nodes) for j in range(slots)}
        entries.update(table or {})
        self.q.memwrite(RXT, b"".join(struct.pack("<Q", entries.get((p, j), 0))
                                      for p in range(nodes) for j in range(slots)))
        self.q.memwrite(SLOTS, bytes(nodes * R.C3_MAX_SLOTS * R.C3_SLOT_SIZE))
        self.q.memwrite(EVQ_RING, bytes(evq_size * EVENT.size))

    def bring_up(self, irq_mask: int = 0x7, at: int = T0, **config) -> None:
        """At time `at`: configured, interrupts unmasked, enabled."""
        self.q.clock_set(at)
        self.configure(**config)
        self.set_reg(R.C3_REG_IRQ_MASK, irq_mask)
        self.set_reg(R.C3_REG_CTRL, R.C3_CTRL_ENABLE)
        assert self.reg(R.C3_REG_STATUS) & R.C3_STATUS_ENABLED, self.reg(R.C3_REG_ERROR)
        self.tail = self.consumed = 0

    # requests
    def write_req(self, op: int, dest: int, length: int, src: int = DATA, raddr: int = 0,
                  tag: int = 0, flags: int = R.C3_REQF_EVENT) -> int:
        """Write one request at the ring's next entry (no doorbell); its index."""
        index = self.tail
        self.q.memwrite(REQ_RING + (index % self.req_size) * 32,
                        req(op, dest, length, src, raddr, tag, flags))
        self.tail += 1
        return index

    def doorbell(self) -> None:
        self.set_reg(R.C3_REG_REQ_TAIL, self.tail & 0xFFFFFFFF)

    def post(self, *args, **kw) -> int:
        index = self.write_req(*args, **kw)
        self.doorbell()
        return index

    def status(self, index: int) -> int:
        return int.from_bytes(self.q.memread(REQ_RING + (index % self.req_size) * 32 + 30, 2),
                              "little")

    # events
    def events(self) -> list[dict]:
        """The events written since the last consume(), with their ring positions."""
        head = self.reg(R.C3_REG_EVQ_HEAD)
        out = []
        for i in range(self.consumed, head):
            at = EVQ_RING + (i % self.evq_size) * EVENT.size
            ev = parse_event(self.q.memread(at, EVENT.size))
            ev["index"] = i
            out.append(ev)
        return out

    def consume(self, n: int | None = None) -> None:
        """Say n more events (all written, by default) are consumed: EVQ_TAIL."""
        self.consumed = self.reg(R.C3_REG_EVQ_HEAD) if n is None else self.consumed + n
        self.set_reg(R.C3_REG_EVQ_TAIL, self.consumed)

    # receive slots
    def slot(self, p: int, j: int) -> tuple[int, bytes]:
        """(header word, the rest) of slot j of peer p."""
        raw = self.q.memread(slot_addr(p, j), R.C3_SLOT_SIZE)
        return int.from_bytes(raw[:4], "little"), raw[4:]

    def free_slot(self, p: int, j: int) -> None:
        self.q.memwrite(slot_addr(p, j), bytes(4))

    # cache control
    def cache_op(self, op: int, addr: int, length: int) -> None:
        self.set_reg(R.C3_REG_CACHE_ADDR_LO, addr & 0xFFFFFFFF)
        self.set_reg(R.C3_REG_CACHE_ADDR_HI, addr >> 32)
        self.set_reg(R.C3_REG_CACHE_LEN, length)
        self.set_reg(R.C3_REG_CACHE_OP, op)

    def frames(self, count: int) -> list[dict]:
        """The first count frames the interface sent (waiting for them)."""
        got = self.fabric.wait_for(wire.FRAME, count)
        assert len(got) >= count, got
        return got
