"""The SX board (qemu/sx/sx.c, register map sx-regs.h, docs/boards/sx.md) for the fuzzer:
where its registers are, how a driver uses it (descriptors, doorbells, completions,
releases), the frames a ring delivers to it, and the rules its own frames follow."""
import struct

from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, Reg
from retrolink.qtest.sx_regs import R

HDR = struct.Struct("<BBHIII")          # type, slot, reserved, tag, length, generation
CTRL_VALUES = (0, R.SX_CTRL_ENABLE, R.SX_CTRL_RESET, R.SX_CTRL_ENABLE | R.SX_CTRL_RESET)
LENGTHS = (0, 1, 16, 64, 1500, R.SX_MAX_MSG - 1, R.SX_MAX_MSG, R.SX_MAX_MSG + 1, 0x10000,
           0xFFFFFFFF)

REGISTERS = (
    *(Reg(0, getattr(R, name), name) for name in (
        "SX_REG_ID", "SX_REG_VERSION", "SX_REG_NODE_ID", "SX_REG_NUM_NODES", "SX_REG_STATUS",
        "SX_REG_TX_COMPLETE", "SX_REG_RX_POP", "SX_REG_ERROR", "SX_REG_PEERS_UP",
        "SX_REG_TX_MSGS", "SX_REG_RX_MSGS", "SX_REG_TX_ERRORS", "SX_REG_BAD_DOORBELLS")),
    Reg(0, R.SX_REG_CTRL, "CTRL", CTRL_VALUES),
    Reg(0, R.SX_REG_IRQ_STATUS, "IRQ_STATUS", (1, 2, 4, 8, 0xF)),
    Reg(0, R.SX_REG_IRQ_MASK, "IRQ_MASK", (0, 0xF)),
    Reg(0, R.SX_REG_TX_DOORBELL, "TX_DOORBELL", tuple(range(R.SX_TX_SLOTS + 1))),
    Reg(0, R.SX_REG_RX_RELEASE, "RX_RELEASE", tuple(range(R.SX_RX_SLOTS + 1))),
    *(Reg(2, R.SX_TX_DESC_OFF + i * R.SX_DESC_SIZE + f, "tx descriptor", LENGTHS)
      for i in range(R.SX_TX_SLOTS) for f in (R.SX_DESC_PEER, R.SX_DESC_LEN)),
    *(Reg(2, R.SX_RX_DESC_OFF + i * R.SX_DESC_SIZE, "rx descriptor")
      for i in range(R.SX_RX_SLOTS)),
)


def properties(rng) -> dict:
    """Mostly a board that starts at once; now and then every property at an edge (some
    beyond what realize accepts: QEMU must then refuse to start, cleanly)."""
    p = {"start-us": rng.choice((0, 0, 0, 1, 250, 25000))}
    if rng.random() < 0.15:
        p.update(rng.choice((
            {"sxm-mips": rng.choice(("0.001", "1", "1e6", "1e7", "0", "nan", "fast"))},
            {"fw-send-insns": rng.choice((0, 1, NEVER))},
            {"fw-recv-insns": rng.choice((0, NEVER))},
            {"fw-confirm-insns": rng.choice((1, 100, NEVER))},
            {"confirm-bytes": rng.choice((15, 16, 4096, 4097))},
            {"confirm-timeout-us": rng.choice((0, 1, 1 << 54, NEVER))},
            {"start-us": rng.choice((60_000_000, 60_000_001, NEVER))},
            {"bus-channels": rng.choice((0, 1, 16, 17))},
            {"bus-channel-rate": rng.choice((0, 1, NEVER))},
        )))
    return p


# ---- what a driver does ---------------------------------------------------------------
def reg(g, name: str) -> int:
    return g.bar(0) + getattr(R, "SX_REG_" + name)


def send(g) -> None:
    """A message in a tx slot (its buffer, its descriptor), then the doorbell."""
    rng = g.rng
    slot = rng.choice((*range(R.SX_TX_SLOTS), *range(R.SX_TX_SLOTS), R.SX_TX_SLOTS, 0xFFFFFFFF))
    s = slot % R.SX_TX_SLOTS
    peers = [n for n in range(min(g.nodes, 40)) if n != g.node] or [0]
    dst = rng.choice((*[rng.choice(peers)] * 6, g.node, g.nodes, 31, 32, 0xFFFFFFFF))
    length = rng.choice((*LENGTHS, rng.randrange(R.SX_MAX_MSG + 1)))
    desc = g.bar(2) + R.SX_TX_DESC_OFF + s * R.SX_DESC_SIZE
    if rng.random() < 0.5:
        g.memwrite(g.bar(2) + R.SX_TX_BUF_OFF + s * R.SX_MAX_MSG,
                   rng.randbytes(max(1, min(length, R.SX_MAX_MSG))))
    for off, v in ((R.SX_DESC_PEER, dst), (R.SX_DESC_LEN, length), (R.SX_DESC_TAG, g.value(4))):
        g.write(4, desc + off, v)
    if rng.random() < 0.3:
        g.write(4, reg(g, "CTRL"), R.SX_CTRL_ENABLE)
    g.write(4, reg(g, "TX_DOORBELL"), slot)


def reap(g) -> None:
    """Pop completions and received messages; give rx slots back (some twice, some
    never held)."""
    for _ in range(g.rng.randint(1, 3)):
        g.read(4, reg(g, "TX_COMPLETE"))
    got = g.read(4, reg(g, "RX_POP")) or 0
    slot = got & 0xFF if got & R.SX_RXP_VALID else g.rng.randrange(R.SX_RX_SLOTS + 1)
    for _ in range(g.rng.choice((1, 1, 1, 2))):
        g.write(4, reg(g, "RX_RELEASE"), slot)


def control(g) -> None:
    name, values = g.rng.choice((("CTRL", CTRL_VALUES), ("IRQ_MASK", (0, 0xF)),
                                 ("IRQ_STATUS", (0xF,))))
    g.write(4, reg(g, name), g.value(4, values))


def scribble(g) -> None:
    """The host writes where the SXM owns the window: rx descriptors and buffers."""
    slot = g.rng.randrange(R.SX_RX_SLOTS)
    addr = g.bar(2) + g.rng.choice((R.SX_RX_DESC_OFF + slot * R.SX_DESC_SIZE,
                                    R.SX_RX_BUF_OFF + slot * R.SX_MAX_MSG))
    g.write(4, addr, g.value(4))


# ---- the ring's side ------------------------------------------------------------------
def header(kind, slot, tag, length, gen, rsvd=0) -> bytes:
    return HDR.pack(kind & 0xFF, slot & 0xFF, rsvd, tag & 0xFFFFFFFF, length & 0xFFFFFFFF,
                    gen & 0xFFFFFFFF)


def confirm_bytes(v: FabricView) -> int:
    return max(int(v.props.get("confirm-bytes", 16)), HDR.size)


def frame(v: FabricView) -> tuple:
    """A frame the ring delivers: messages, confirmations of what the board sent (some
    with a wrong slot, tag or generation), confirmations for nothing, truncated and
    oversized frames, unknown types."""
    rng = v.rng
    mine = [(d, p) for d, p in v.sent if len(p) >= HDR.size and p[0] == R.SX_WIRE_MSG]
    r = rng.random()
    if mine and r < 0.3:
        dst, p = rng.choice(mine)
        _, slot, _, tag, _, gen = HDR.unpack_from(p)
        if rng.random() < 0.2:
            slot, tag, gen = rng.choice(((slot + 1, tag, gen), (slot, tag + 1, gen),
                                         (slot, tag, gen - 1), (slot | 0x80, tag, gen)))
        body = header(R.SX_WIRE_CONFIRM, slot, tag, 0, gen)
        return dst, body + bytes(confirm_bytes(v) - len(body))
    if r < 0.65:
        payload = rng.randbytes(rng.choice((0, 1, 64, 1500, R.SX_MAX_MSG)))
        return None, header(R.SX_WIRE_MSG, rng.randrange(R.SX_TX_SLOTS), rng.getrandbits(32),
                            len(payload), rng.getrandbits(32)) + payload
    if r < 0.75:                                # a confirmation for nothing
        return None, header(R.SX_WIRE_CONFIRM, rng.randrange(256), rng.getrandbits(32),
                            rng.getrandbits(32), rng.getrandbits(32))
    if r < 0.85:                                # truncated
        payload = rng.randbytes(rng.choice((0, 10, 100)))
        full = header(R.SX_WIRE_MSG, 0, 1, len(payload) + rng.choice((1, 100, 0x10000)), 0)
        return None, rng.choice((full[:rng.randrange(HDR.size)], full + payload))
    if r < 0.93:                                # oversized
        n = rng.choice((R.SX_MAX_MSG + 1, 8192, 65536 - HDR.size))
        return None, rng.choice((header(R.SX_WIRE_MSG, 0, 0, n, 0) + bytes(n),
                                 header(R.SX_WIRE_MSG, 0, 0, 0xFFFFFFFF, 0) + bytes(16)))
    return None, rng.choice((header(rng.choice((0, 3, 255)), 0, 0, 0, 0, rng.getrandbits(16)),
                             rng.randbytes(rng.randrange(64))))


def valid_message(p: bytes) -> tuple | None:
    """(slot, tag, gen) of a message frame the board accepts, else None."""
    if len(p) < HDR.size:
        return None
    kind, slot, _, tag, length, gen = HDR.unpack_from(p)
    ok = kind == R.SX_WIRE_MSG and length == len(p) - HDR.size and length <= R.SX_MAX_MSG
    return (slot, tag, gen) if ok else None


def confirmation(p: bytes) -> tuple | None:
    """(slot, tag, gen) that a confirmation frame answers, else None."""
    if len(p) < HDR.size or p[0] != R.SX_WIRE_CONFIRM:
        return None
    _, slot, _, tag, _, gen = HDR.unpack_from(p)
    return slot, tag, gen


def check_frame(v: FabricView, m: dict) -> str | None:
    """The SX header's rules (sx-regs.h), and a confirmation answers a message."""
    p = m["payload"]
    if len(p) < HDR.size:
        return f"SX frame of {len(p)} bytes, shorter than its header"
    kind, slot, rsvd, tag, length, gen = HDR.unpack_from(p)
    if kind == R.SX_WIRE_MSG:
        if valid_message(p) is None or slot >= R.SX_TX_SLOTS or rsvd:
            return (f"SX message from tx slot {slot}, reserved {rsvd}, length field {length} "
                    f"with {len(p) - HDR.size} bytes")
        return None
    if kind != R.SX_WIRE_CONFIRM:
        return f"SX frame of unknown type {kind}"
    if len(p) != confirm_bytes(v):
        return f"SX confirmation of {len(p)} bytes, not confirm-bytes {confirm_bytes(v)}"
    key = (slot, tag, gen)
    delivered = sum(1 for s, d in v.delivered if s == m["dst"] and valid_message(d) == key)
    confirmed = sum(1 for d, q in v.sent if d == m["dst"] and confirmation(q) == key)
    if confirmed > delivered:
        return (f"SX confirmation to node {m['dst']} of slot {slot} tag {tag} generation {gen}:"
                f" {confirmed} sent for {delivered} such messages delivered from it")
    return None


BOARD = BoardSpec(
    name="sx",
    device="retrolink-sx",
    pci_id=(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID),
    registers=REGISTERS,
    properties=properties,
    sequences=(send, send, reap, reap, control, scribble),
    frame=frame,
    check_frame=check_frame,
)
