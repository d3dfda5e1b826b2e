"""The CompactPCI backplane board (qemu/cpci/, register map cpci-regs.h, docs/boards/cpci.md)
for the fuzzer: where its registers and windows are, how the driver uses it (the export in
guest RAM, the board enabled, stores and loads through the windows, doorbells rung and
taken), the transactions other bridges send it (writes, doorbells, loads, completions for
the loads it sent, well formed and not), and the rules its own frames follow."""
from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, Reg
from retrolink.qtest.cpci_regs import ERR_ALL, REGISTERS, WIRE_HDR, R, db_ring_value, wire_frame

EXPORT = 0x00200000         # the export the driver allocates (guest RAM)
SIZES = (1, 2, 4, 8)
CTRL_VALUES = (0, R.CPCI_CTRL_ENABLE, R.CPCI_CTRL_ENABLE | R.CPCI_CTRL_EXPORT,
               R.CPCI_CTRL_EXPORT, R.CPCI_CTRL_RESET, 4, 0xFFFFFFFF)

REGS = (
    *(Reg(0, off, f"0x{off:03x}", (0, 1, 0xFFFFFFFF) if writable else ())
      for off, writable in REGISTERS.items()),
    Reg(0, R.CPCI_REG_CTRL, "CTRL", CTRL_VALUES),
    Reg(0, R.CPCI_REG_EXPORT_LO, "EXPORT_LO", (EXPORT, EXPORT + 4, 0xFFFFF000)),
    Reg(0, R.CPCI_REG_EXPORT_SIZE, "EXPORT_SIZE", (0x1000, R.CPCI_EXPORT_MAX, 0x1800,
                                                   R.CPCI_EXPORT_MAX + 0x1000)),
    Reg(0, R.CPCI_REG_DB_RING, "DB_RING", (db_ring_value(1, 0), db_ring_value(0, 1),
                                           db_ring_value(7, 3), db_ring_value(8, 0),
                                           db_ring_value(1, 4))),
    Reg(0, R.CPCI_REG_ERR_MASK, "ERR_MASK", (0, ERR_ALL, 0x80)),
    Reg(0, 0x04c, "unknown"), Reg(0, 0xffc, "unknown"),
    *(Reg(2, n * R.CPCI_WINDOW_SIZE + off, f"window {n}") for n in (0, 1, 2, 7)
      for off in (0, 0x10, R.CPCI_WINDOW_SIZE - 8)),
)


def properties(rng) -> dict:
    """Mostly the defaults; now and then a property at an edge (some beyond what realize
    accepts: QEMU must then refuse to start, cleanly)."""
    p = {"mac": "52:54:00:12:34:56"}
    if rng.random() < 0.15:
        p.update(rng.choice((
            {"pci-cycle-ns": rng.choice((0, 1, 10**6, 10**6 + 1, NEVER))},
            {"pci-width-bytes": rng.choice((0, 1, 64, 65))},
            {"pci-arb-cycles": rng.choice((0, 1000, 1001))},
            {"pci-turnaround-cycles": rng.choice((0, 1000, NEVER))},
            {"bridge-ns": rng.choice((0, 10**9, 10**9 + 1))},
            {"mem-read-ns": rng.choice((0, 10**9, NEVER))},
        )))
    return p


def ctrl(g, off: int) -> int:
    return g.bar(0) + off


def window(g, node: int, off: int) -> int:
    return g.bar(2) + node * R.CPCI_WINDOW_SIZE + off


def peer(g) -> int:
    return g.rng.choice([n for n in range(min(g.nodes, 8)) if n != g.node] or [1])


def bring_up(g) -> None:
    """What the driver does first, mostly sanely: the export, the board enabled, every
    doorbell and error unmasked; now and then a value at an edge."""
    rng = g.rng
    for off, val in ((R.CPCI_REG_CTRL, rng.choice((0, 0, R.CPCI_CTRL_RESET))),
                     (R.CPCI_REG_EXPORT_LO, rng.choice((EXPORT, EXPORT, EXPORT + 4))),
                     (R.CPCI_REG_EXPORT_HI, rng.choice((0, 0, 0, 1))),
                     (R.CPCI_REG_EXPORT_SIZE, rng.choice((R.CPCI_EXPORT_MAX, 0x4000, 0))),
                     (R.CPCI_REG_DB_MASK, 0), (R.CPCI_REG_ERR_MASK, 0),
                     (R.CPCI_REG_CTRL, rng.choice((3, 3, 3, 1, 2)))):
        g.write(4, ctrl(g, off), val)


def copy(g) -> None:
    """A CPU copy into a peer's window, in stores of one width; now and then a misaligned
    one, or a copy into its own window or a node that is not there."""
    rng = g.rng
    size = rng.choice(SIZES)
    node = peer(g) if rng.random() < 0.85 else rng.choice((g.node, 7, g.nodes))
    off = rng.choice((0, 0x80000, R.CPCI_WINDOW_SIZE - 64)) + size * rng.randrange(8)
    if rng.random() < 0.05:
        off += 1
    for i in range(rng.choice((1, 4, 16, 64))):
        g.write(size, window(g, node, off + i * size), g.value(size))


def load(g) -> None:
    """Loads from a peer's window (the vCPU held until the completion)."""
    rng = g.rng
    size = rng.choice(SIZES)
    node = peer(g) if rng.random() < 0.85 else rng.choice((g.node, 7, g.nodes))
    for _ in range(rng.choice((1, 1, 2, 4))):
        g.read(size, window(g, node, size * rng.randrange(64)))


def doorbells(g) -> None:
    """Doorbells rung and taken, errors read and cleared, masks changed."""
    rng = g.rng
    g.write(4, ctrl(g, R.CPCI_REG_DB_RING), db_ring_value(peer(g), rng.randrange(4))
            if rng.random() < 0.8 else g.value(4))
    g.read(4, ctrl(g, R.CPCI_REG_DB_STATUS))
    g.write(4, ctrl(g, R.CPCI_REG_DB_STATUS), g.value(4, (0xFFFFFFFF,)))
    g.read(4, ctrl(g, R.CPCI_REG_IRQ_STATUS))
    g.write(4, ctrl(g, R.CPCI_REG_ERR_STATUS), 0xFFFFFFFF)
    g.write(4, ctrl(g, rng.choice((R.CPCI_REG_DB_MASK, R.CPCI_REG_ERR_MASK))), g.value(4))


def control(g) -> None:
    g.write(4, ctrl(g, R.CPCI_REG_CTRL), g.value(4, CTRL_VALUES))


# ---- the other bridges' side ----------------------------------------------------------
def frame(v: FabricView) -> tuple:
    """A transaction another bridge sends: completions for the loads the board sent
    (right, refused, of another tag), writes, doorbells and loads of its export (inside it
    and not), and truncated, oversized or inconsistent ones."""
    rng = v.rng
    r = rng.random()
    src = v.peer()
    if r < 0.35 and v.sent:
        dst, sent = rng.choice(v.sent[-8:])
        if len(sent) >= WIRE_HDR.size:
            kind, _, length, offset, tag, *_ = WIRE_HDR.unpack_from(sent)
            if kind == R.CPCI_T_READ:
                abort = rng.random() < 0.2
                return dst, wire_frame(R.CPCI_T_READ_DONE, offset,
                                       b"" if abort else rng.randbytes(length),
                                       length=length, src=dst,
                                       tag=tag if rng.random() < 0.9 else tag + 1,
                                       flags=R.CPCI_FF_ABORT if abort else 0)
    if r < 0.85:
        kind = rng.choice((R.CPCI_T_WRITE, R.CPCI_T_WRITE, R.CPCI_T_DOORBELL, R.CPCI_T_READ,
                           R.CPCI_T_READ_DONE))
        size = rng.choice(SIZES)
        off = rng.choice((0, 0x40, 0x3FFC, R.CPCI_EXPORT_MAX - size, R.CPCI_EXPORT_MAX,
                          0xFFFFFFFF)) if kind != R.CPCI_T_DOORBELL else rng.randrange(5)
        data = rng.randbytes(size) if kind == R.CPCI_T_WRITE else b""
        length = 0 if kind == R.CPCI_T_DOORBELL else size
        return src, wire_frame(kind, off, data, length=length, src=src,
                               tag=rng.getrandbits(32))
    if r < 0.93:
        full = wire_frame(R.CPCI_T_WRITE, 0, b"abcd", src=src)
        return src, full[:rng.randrange(len(full))]
    return None, rng.choice((wire_frame(rng.choice((0, 5, 0xFF)), src=src),
                             wire_frame(R.CPCI_T_WRITE, 0, bytes(9), src=src),
                             rng.randbytes(rng.randrange(64))))


def check_frame(v: FabricView, m: dict) -> str | None:
    """The header's rules (proto/cpci.h): a type, the sender, the data's length."""
    p = m["payload"]
    if len(p) < WIRE_HDR.size:
        return f"cpci frame of {len(p)} bytes, shorter than its header"
    kind, flags, length, offset, _, src, _ = WIRE_HDR.unpack_from(p)
    n = len(p) - WIRE_HDR.size
    if src != m["src"]:
        return f"cpci frame from node {src} sent by {m['src']}"
    if m["dst"] >= R.CPCI_MAX_NODES:
        return f"cpci frame to node {m['dst']}, beyond the backplane's {R.CPCI_MAX_NODES}"
    if kind == R.CPCI_T_WRITE:
        ok = 1 <= length <= R.CPCI_MAX_ACCESS and n == length and offset < R.CPCI_WINDOW_SIZE
    elif kind == R.CPCI_T_READ:
        ok = 1 <= length <= R.CPCI_MAX_ACCESS and n == 0 and offset < R.CPCI_WINDOW_SIZE
    elif kind == R.CPCI_T_DOORBELL:
        ok = length == 0 and n == 0 and offset < R.CPCI_DB_PER_NODE
    elif kind == R.CPCI_T_READ_DONE:
        ok = 1 <= length <= R.CPCI_MAX_ACCESS and n == (0 if flags & R.CPCI_FF_ABORT
                                                        else length)
    else:
        return f"cpci frame of type {kind}"
    if not ok or flags & ~(R.CPCI_FF_ABORT if kind == R.CPCI_T_READ_DONE else 0):
        return f"cpci frame type {kind}, len {length}, offset 0x{offset:x}, flags {flags}, " \
               f"{n} data bytes"
    return None


BOARD = BoardSpec(
    name="cpci",
    device="retrolink-cpci",
    pci_id=(R.CPCI_PCI_VENDOR_ID, R.CPCI_PCI_DEVICE_ID),
    registers=REGS,
    properties=properties,
    sequences=(bring_up, bring_up, copy, copy, copy, load, load, doorbells, doorbells,
               control),
    frame=frame,
    check_frame=check_frame,
)
