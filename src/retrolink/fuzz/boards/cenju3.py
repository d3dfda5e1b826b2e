"""The Cenju-3 network interface (qemu/cenju3/, register map cenju3-regs.h,
docs/boards/cenju3.md) for the fuzzer: where its registers are, how a driver uses it
(rings and a receive table in guest RAM, requests and doorbells, events consumed, slots
freed, cache operations), the packets the fabric delivers to it, and the rules its own
packets follow."""
import struct

from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, Reg
from retrolink.qtest.cenju3_regs import WIRE_HDR, R, packet, req

REQ_RING = 0x00100000       # the rings and the table the driver sets up (guest RAM)
EVQ_RING = 0x00110000
RXT = 0x00120000
SLOTS = 0x00140000          # 512-byte slots
DATA = 0x00200000           # sources and remote DMA targets
CTRL_VALUES = (0, R.C3_CTRL_ENABLE, R.C3_CTRL_RESET, R.C3_CTRL_ENABLE | R.C3_CTRL_RESET, 4)
SIZES = (0, 1, 2, 4, 8, 16, 12, R.C3_RING_MAX, R.C3_RING_MAX * 2)
LENGTHS = (0, 1, 4, 440, R.C3_PACKET_MAX, R.C3_PACKET_MAX + 1, 4096, 16384, R.C3_REQ_MAX,
           R.C3_REQ_MAX + 1, 0xFFFFFFFF)
ADDRS = (DATA, DATA + 1, DATA + 0x10000, 0, 0xFEC00000, 0xFFFFFFFF, 1 << 40, NEVER - 3)

REGISTERS = (
    *(Reg(0, getattr(R, name), name) for name in (
        "C3_REG_ID", "C3_REG_VERSION", "C3_REG_NODE_ID", "C3_REG_NUM_NODES", "C3_REG_STATUS",
        "C3_REG_ERROR", "C3_REG_REQ_HEAD", "C3_REG_EVQ_HEAD", "C3_REG_NOW_LO", "C3_REG_NOW_HI",
        "C3_REG_TX_PACKETS", "C3_REG_RX_PACKETS", "C3_REG_REQ_ERRORS", "C3_REG_STALLS",
        "C3_REG_CACHE_MISSES", "C3_REG_RDMA_ERRORS", "C3_REG_CACHE_OPS")),
    Reg(0, R.C3_REG_CTRL, "CTRL", CTRL_VALUES),
    Reg(0, R.C3_REG_IRQ_STATUS, "IRQ_STATUS", (1, 2, 4, 7)),
    Reg(0, R.C3_REG_IRQ_MASK, "IRQ_MASK", (0, 7, 0xFF)),
    *(Reg(0, getattr(R, f"C3_REG_{name}"), name, (REQ_RING, EVQ_RING, RXT, 0, 1, 64))
      for name in ("REQ_BASE_LO", "REQ_BASE_HI", "EVQ_BASE_LO", "EVQ_BASE_HI", "RXT_BASE_LO",
                   "RXT_BASE_HI")),
    *(Reg(0, getattr(R, f"C3_REG_{name}"), name, SIZES)
      for name in ("REQ_SIZE", "EVQ_SIZE", "RXT_SLOTS")),
    Reg(0, R.C3_REG_REQ_TAIL, "REQ_TAIL", (0, 1, 2, 8, 0xFFFFFFFF)),
    Reg(0, R.C3_REG_EVQ_TAIL, "EVQ_TAIL", (0, 1, 2, 8, 0xFFFFFFFF)),
    Reg(0, R.C3_REG_CACHE_ADDR_LO, "CACHE_ADDR_LO", (DATA, 0, 0xFEC00000)),
    Reg(0, R.C3_REG_CACHE_ADDR_HI, "CACHE_ADDR_HI", (0, 1)),
    Reg(0, R.C3_REG_CACHE_LEN, "CACHE_LEN", (0, 1, 32, 16 << 20, (16 << 20) + 1)),
    Reg(0, R.C3_REG_CACHE_OP, "CACHE_OP", (0, 1, 2, 3)),
)


def properties(rng) -> dict:
    """Mostly an interface on the network at once; now and then a property at an edge
    (some beyond what realize accepts: QEMU must then refuse to start, cleanly)."""
    p = {"start-us": rng.choice((0, 0, 0, 1, 250))}
    if rng.random() < 0.15:
        p.update(rng.choice((
            {"dma-rate": rng.choice((0, 1, 10**12, 10**12 + 1, NEVER))},
            {"reg-access-ns": rng.choice((0, 1, 10**9, 10**9 + 1, NEVER))},
            {"req-setup-ns": rng.choice((0, 10**9, NEVER))},
            {"packet-setup-ns": rng.choice((0, 1, 10**9, NEVER))},
            {"cache-op-ns": rng.choice((0, 10**9 + 1))},
            {"cache-line-ns": rng.choice((0, 10**6, 10**6 + 1))},
        )))
    return p


# ---- what a driver does ---------------------------------------------------------------
def reg(g, off: int) -> int:
    return g.bar(0) + off


def configure(g) -> None:
    """Rings and a receive table (mostly sane, else a field at an edge), the table's
    slots, then ENABLE."""
    rng = g.rng
    g.write(4, reg(g, R.C3_REG_CTRL), 0)
    size = rng.choice((2, 4, 8, 8, 16))
    config = {R.C3_REG_REQ_BASE_LO: REQ_RING, R.C3_REG_REQ_BASE_HI: 0,
              R.C3_REG_REQ_SIZE: size, R.C3_REG_EVQ_BASE_LO: EVQ_RING,
              R.C3_REG_EVQ_BASE_HI: 0, R.C3_REG_EVQ_SIZE: rng.choice((2, 4, 8, size)),
              R.C3_REG_RXT_BASE_LO: RXT, R.C3_REG_RXT_BASE_HI: 0,
              R.C3_REG_RXT_SLOTS: rng.choice((1, 2, 4, R.C3_MAX_SLOTS))}
    if rng.random() < 0.3:
        off = rng.choice(list(config))
        config[off] = rng.choice((*SIZES, REQ_RING + 32, EVQ_RING + 8, RXT + 4, 1,
                                  g.value(4)))
    for off, v in config.items():
        g.write(4, reg(g, off), v)
    slots = config[R.C3_REG_RXT_SLOTS]
    table = []
    for i in range(min(g.nodes, 16) * max(1, min(slots, R.C3_MAX_SLOTS))):
        r = rng.random()
        table.append(SLOTS + i * 512 if r < 0.9 else 0 if r < 0.95 else
                     rng.choice((SLOTS + i * 512 + 8, 0xFEC00000, 1 << 40)))
    g.memwrite(RXT, b"".join(struct.pack("<Q", e) for e in table))
    g.write(4, reg(g, R.C3_REG_IRQ_MASK), 7)
    g.write(4, reg(g, R.C3_REG_CTRL), R.C3_CTRL_ENABLE)


def peer(g) -> int:
    peers = [n for n in range(min(g.nodes, 40)) if n != g.node] or [0]
    return g.rng.choice((*[g.rng.choice(peers)] * 6, g.node, g.nodes, 0xFFFF))


def good_request(g) -> bytes:
    """A request the interface takes: to a peer (RDMA also to itself), from memory."""
    rng = g.rng
    peers = [n for n in range(min(g.nodes, 40)) if n != g.node]
    if rng.random() < 0.5 and peers:
        return req(R.C3_OP_MSG, rng.choice(peers), rng.choice((1, 4, 100, R.C3_MSG_MAX)),
                   DATA, 0, g.value(4), R.C3_REQF_EVENT)
    return req(R.C3_OP_RDMA, rng.choice(peers or [g.node]),
               rng.choice((1, R.C3_PACKET_MAX, R.C3_PACKET_MAX + 1, 2000, 16384)), DATA,
               DATA + 0x10000, g.value(4),
               rng.choice((R.C3_REQF_EVENT, R.C3_REQF_EVENT | R.C3_REQF_NOTIFY, 0)))


def post(g) -> None:
    """Requests into the ring (mostly good, some refused), then the doorbell."""
    rng = g.rng
    size = g.read(4, reg(g, R.C3_REG_REQ_SIZE)) or 8
    size = size if 2 <= size <= R.C3_RING_MAX and size & (size - 1) == 0 else 8
    tail = g.read(4, reg(g, R.C3_REG_REQ_TAIL)) or 0
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.7:
            entry = good_request(g)
        else:
            op = rng.choice((R.C3_OP_MSG, R.C3_OP_RDMA, 0, 3))
            flags = rng.choice((0, R.C3_REQF_EVENT, R.C3_REQF_EVENT | R.C3_REQF_NOTIFY,
                                0xFFFF))
            raddr = 0 if op == R.C3_OP_MSG and rng.random() < 0.8 else rng.choice(ADDRS)
            entry = req(op, peer(g), rng.choice(LENGTHS), rng.choice(ADDRS), raddr,
                        g.value(4), flags)
        g.memwrite(REQ_RING + (tail % size) * 32, entry)
        tail += 1
    g.write(4, reg(g, R.C3_REG_REQ_TAIL),
            rng.choice((tail, tail, tail + 20, g.value(4))) & 0xFFFFFFFF)


def reap(g) -> None:
    """Consume events (some beyond what was written), free slots."""
    rng = g.rng
    head = g.read(4, reg(g, R.C3_REG_EVQ_HEAD)) or 0
    g.write(4, reg(g, R.C3_REG_IRQ_STATUS), 7)
    for _ in range(rng.randint(0, 4)):
        g.memwrite(SLOTS + rng.randrange(64) * 512, bytes(4))
    g.write(4, reg(g, R.C3_REG_EVQ_TAIL),
            rng.choice((head, head, head - 1, head + 1, g.value(4))) & 0xFFFFFFFF)


def drive(g) -> None:
    """A driver at work: configured, requests posted, time passing, events reaped."""
    configure(g)
    for _ in range(g.rng.randint(1, 4)):
        post(g)
        g.op_clock()
        reap(g)


def cache(g) -> None:
    rng = g.rng
    for off, v in ((R.C3_REG_CACHE_ADDR_LO, rng.choice((DATA, DATA + 20, 0xFEC00000))),
                   (R.C3_REG_CACHE_ADDR_HI, rng.choice((0, 0, 1))),
                   (R.C3_REG_CACHE_LEN, rng.choice((1, 100, 4096, 16 << 20, 0, 1 << 31)))):
        g.write(4, reg(g, off), v)
    g.write(4, reg(g, R.C3_REG_CACHE_OP), rng.choice((1, 2, 1, 0, 7)))


def control(g) -> None:
    g.write(4, reg(g, R.C3_REG_CTRL), g.value(4, CTRL_VALUES))


def scribble(g) -> None:
    """The driver rewrites its rings or table while the interface uses them."""
    g.memwrite(g.rng.choice((REQ_RING, EVQ_RING, RXT)) + 8 * g.rng.randrange(64),
               struct.pack("<Q", g.value(8)))


# ---- the fabric's side ----------------------------------------------------------------
def frame(v: FabricView) -> tuple:
    """A packet the fabric delivers: well formed of either kind and every size (RDMA to
    memory and elsewhere), and truncated, oversized or with a header that lies."""
    rng = v.rng
    r = rng.random()
    src = v.peer()
    if r < 0.7:
        data = rng.randbytes(rng.choice((1, 4, 100, R.C3_PACKET_MAX)))
        if rng.random() < 0.5:
            return src, packet(R.C3_PKT_MSG, src, v.node, data, tag=rng.getrandbits(32))
        return src, packet(R.C3_PKT_RDMA, src, v.node, data,
                           raddr=rng.choice((DATA, DATA + 4000, SLOTS, 0xFEC00000, NEVER - 8)),
                           tag=rng.getrandbits(32), req_len=rng.choice((len(data), 4096)),
                           flags=rng.choice((0, R.C3_PKTF_LAST,
                                             R.C3_PKTF_LAST | R.C3_PKTF_NOTIFY)))
    if r < 0.8:
        full = packet(R.C3_PKT_MSG, src, v.node, bytes(10))
        return src, full[:rng.randrange(WIRE_HDR.size + 1)]
    if r < 0.9:
        return src, packet(R.C3_PKT_RDMA, src, v.node, bytes(rng.choice((509, 4096))))
    return src, rng.choice((packet(rng.choice((0, 3, 0xFF)), src, v.node, b"x"),
                            packet(R.C3_PKT_MSG, rng.choice((src, v.node, 999)),
                                   rng.choice((v.node, 7)), b"y", flags=rng.choice((0, 3))),
                            rng.randbytes(rng.randrange(64))))


def check_frame(v: FabricView, m: dict) -> str | None:
    """The packet header's rules (proto/cenju3.h): kind, flags, nodes, length."""
    p = m["payload"]
    if len(p) < WIRE_HDR.size:
        return f"Cenju-3 packet of {len(p)} bytes, shorter than its header"
    kind, flags, src, dest, length, raddr, _, req_len = WIRE_HDR.unpack_from(p)
    if kind not in (R.C3_PKT_MSG, R.C3_PKT_RDMA) or flags & ~3 or \
            (kind == R.C3_PKT_MSG and flags != R.C3_PKTF_LAST):
        return f"Cenju-3 packet of kind {kind}, flags 0x{flags:x}"
    if src != m["src"] or dest != m["dst"]:
        return f"Cenju-3 packet from {src} to {dest} sent from {m['src']} to {m['dst']}"
    if not 1 <= length <= R.C3_PACKET_MAX or length != len(p) - WIRE_HDR.size or \
            length > req_len or req_len > R.C3_REQ_MAX:
        return f"Cenju-3 packet of {length} bytes in {len(p)}, request {req_len}"
    if kind == R.C3_PKT_MSG and raddr:
        return f"Cenju-3 message with a target address 0x{raddr:x}"
    return None


BOARD = BoardSpec(
    name="cenju3",
    device="retrolink-cenju3",
    pci_id=(R.C3_PCI_VENDOR_ID, R.C3_PCI_DEVICE_ID),
    registers=REGISTERS,
    properties=properties,
    sequences=(drive, drive, configure, post, post, reap, reap, cache, control, scribble),
    frame=frame,
    check_frame=check_frame,
)
