"""The PUMA-III FC adapter (qemu/fc/, register map fc-regs.h, docs/boards/fc.md) for the
fuzzer: where its registers are, how a driver uses it (a DVMA table in guest RAM, channels
configured and enabled, DMA and PIO sends, ring slots given back), the frames the fabric
delivers to it, and the rules its own frames follow."""
import struct

from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, Reg
from retrolink.qtest.fc_regs import WIRE_HDR, R, ch_reg, pio_send, wire_frame

TABLE = 0x00100000          # the DVMA table the driver writes (guest RAM)
DATA = 0x00200000           # its pages: table entry i -> DATA + i * 4096
PAGES = 64
CTRL_VALUES = (0, R.FC_CTRL_ENABLE, R.FC_CTRL_RESET, R.FC_CTRL_ENABLE | R.FC_CTRL_RESET)
LENGTHS = (0, 1, 64, 2111, 2112, 2113, 4096, 65536, R.FC_MAX_SEND, R.FC_MAX_SEND + 1,
           0xFFFFFFFF)
CH_REGS = ("FC_CH_CTRL", "FC_CH_STATUS", "FC_CH_DVMA_LO", "FC_CH_DVMA_HI", "FC_CH_DVMA_PAGES",
           "FC_CH_RX_RING", "FC_CH_RX_SLOTS", "FC_CH_TX_FRAMES", "FC_CH_RX_FRAMES",
           "FC_CH_RX_DROPS", "FC_CH_ERRORS")
U_REGS = ("FC_U_NODE_ID", "FC_U_NUM_NODES", "FC_U_TX_ADDR", "FC_U_TX_LEN", "FC_U_TX_DEST",
          "FC_U_TX_TAG", "FC_U_TX_GO", "FC_U_TX_BUSY", "FC_U_TX_STATUS", "FC_U_TX_DONE",
          "FC_U_PIO_SEND", "FC_U_PIO_TAG", "FC_U_TXQ_FREE", "FC_U_RX_RELEASE", "FC_U_RX_DROPS")

REGISTERS = (
    *(Reg(0, getattr(R, name), name) for name in (
        "FC_REG_ID", "FC_REG_VERSION", "FC_REG_NODE_ID", "FC_REG_NUM_NODES", "FC_REG_STATUS",
        "FC_REG_MAC_LO", "FC_REG_MAC_HI", "FC_REG_PEERS_UP", "FC_REG_ERROR")),
    Reg(0, R.FC_REG_CTRL, "CTRL", CTRL_VALUES),
    Reg(0, R.FC_REG_IRQ_STATUS, "IRQ_STATUS", (0x1FFFF,)),
    Reg(0, R.FC_REG_IRQ_MASK, "IRQ_MASK", (0, 0x1FFFF)),
    *(Reg(0, ch_reg(c, getattr(R, name)), name, (0, 1, TABLE, PAGES, 4096, 4))
      for c in range(R.FC_CHANNELS) for name in CH_REGS),
    *(Reg(2, c * R.FC_CHAN_PAGE_SIZE + getattr(R, name), name, LENGTHS)
      for c in range(R.FC_CHANNELS) for name in U_REGS),
    *(Reg(2, c * R.FC_CHAN_PAGE_SIZE + R.FC_U_PIO_BUF + off, "PIO_BUF")
      for c in range(R.FC_CHANNELS) for off in (0, 8, R.FC_PIO_MAX - 8)),
)


def properties(rng) -> dict:
    """Mostly the defaults; now and then a property at an edge (some beyond what realize
    accepts: QEMU must then refuse to start, cleanly)."""
    p = {"mac": "52:54:00:12:34:56"}
    if rng.random() < 0.15:
        p.update(rng.choice((
            {"dma-rate": rng.choice((0, 1, 10**12, 10**12 + 1, NEVER))},
            {"pio-rate": rng.choice((0, 1, 10**12, NEVER))},
            {"adapter-rate": rng.choice((0, 1, NEVER))},
            {"send-setup-ns": rng.choice((0, 10**9, 10**9 + 1, NEVER))},
            {"frame-setup-ns": rng.choice((0, 1, 10**9, NEVER))},
            {"tx-queue-frames": rng.choice((0, 1, 16, 17, 0xFFFFFFFF))},
        )))
    return p


# ---- what a driver does ---------------------------------------------------------------
def ctrl(g, off: int) -> int:
    return g.bar(0) + off


def chan(g, c: int, off: int) -> int:
    return g.bar(2) + c * R.FC_CHAN_PAGE_SIZE + off


def table(g) -> None:
    """The driver writes the DVMA table: mostly valid (some read-only) entries, some holes,
    some pointing outside RAM."""
    rng = g.rng
    entries = []
    for i in range(PAGES):
        r = rng.random()
        addr = DATA + i * 4096
        if r < 0.7:
            e = addr | R.FC_DVMA_VALID | R.FC_DVMA_WRITE
        elif r < 0.8:
            e = addr | R.FC_DVMA_VALID
        elif r < 0.9:
            e = 0
        else:
            e = rng.choice((0xFFFFFFFFF000, 1 << 40, 0xFEE00000, 0)) | R.FC_DVMA_VALID | \
                R.FC_DVMA_WRITE
        entries.append(e)
    g.memwrite(TABLE, b"".join(struct.pack("<Q", e) for e in entries))


def configure(g) -> None:
    """A channel configured (mostly sanely) and enabled; the adapter on."""
    rng = g.rng
    c = rng.randrange(R.FC_CHANNELS)
    if rng.random() < 0.5:
        table(g)
    g.write(4, ctrl(g, R.FC_REG_CTRL), R.FC_CTRL_ENABLE)
    g.write(4, ctrl(g, ch_reg(c, R.FC_CH_CTRL)), 0)
    for reg, v in ((R.FC_CH_DVMA_LO, rng.choice((TABLE, TABLE, TABLE + 4, g.value(4)))),
                   (R.FC_CH_DVMA_HI, rng.choice((0, 0, 0, 1, g.value(4)))),
                   (R.FC_CH_DVMA_PAGES, rng.choice((PAGES, PAGES, 1, 0, R.FC_DVMA_MAX_PAGES,
                                                    R.FC_DVMA_MAX_PAGES + 1))),
                   (R.FC_CH_RX_RING, rng.choice((32 * 4096, 48 * 4096, 0, 63 * 4096, 100,
                                                 g.value(4)))),
                   (R.FC_CH_RX_SLOTS, rng.choice((1, 2, 4, 16, 0, R.FC_RX_MAX_SLOTS,
                                                  R.FC_RX_MAX_SLOTS + 1)))):
        g.write(4, ctrl(g, ch_reg(c, reg)), v)
    g.write(4, ctrl(g, ch_reg(c, R.FC_CH_CTRL)), R.FC_CH_ENABLE)


def peer(g) -> int:
    peers = [n for n in range(min(g.nodes, 40)) if n != g.node] or [0]
    return g.rng.choice((*[g.rng.choice(peers)] * 6, g.node, g.nodes, 31, 32, 0xFFFF))


def dma_send(g) -> None:
    rng = g.rng
    c = rng.randrange(R.FC_CHANNELS)
    length = rng.choice((*LENGTHS, rng.randrange(1, 5 * 2112)))
    addr = rng.choice((0, 100, 4096 - 1, 10 * 4096, 63 * 4096 + 4000, g.value(4)))
    for reg, v in ((R.FC_U_TX_ADDR, addr), (R.FC_U_TX_LEN, length),
                   (R.FC_U_TX_DEST, peer(g)), (R.FC_U_TX_TAG, g.value(4))):
        g.write(4, chan(g, c, reg), v)
    g.write(4, chan(g, c, R.FC_U_TX_GO), 1)
    for _ in range(rng.randint(0, 3)):
        g.read(4, chan(g, c, R.FC_U_TX_BUSY))


def send_pio(g) -> None:
    rng = g.rng
    c = rng.randrange(R.FC_CHANNELS)
    length = rng.choice((0, 4, 8, 100, R.FC_PIO_MAX, R.FC_PIO_MAX + 1, 0xFFFF))
    for off in range(0, min(length, R.FC_PIO_MAX, 64), 8):
        g.write(8, chan(g, c, R.FC_U_PIO_BUF + off), g.value(8))
    g.write(4, chan(g, c, R.FC_U_PIO_SEND), pio_send(length, peer(g)))


def reap(g) -> None:
    """Give ring slots back (some more than held)."""
    c = g.rng.randrange(R.FC_CHANNELS)
    g.read(4, ctrl(g, R.FC_REG_IRQ_STATUS))
    g.write(4, ctrl(g, R.FC_REG_IRQ_STATUS), 0x1FFFF)
    g.write(4, chan(g, c, R.FC_U_RX_RELEASE), g.rng.choice((1, 1, 2, 4, 0, 1024, 0xFFFFFFFF)))


def control(g) -> None:
    rng = g.rng
    name, off, values = rng.choice((("CTRL", R.FC_REG_CTRL, CTRL_VALUES),
                                    ("IRQ_MASK", R.FC_REG_IRQ_MASK, (0, 0x1FFFF)),
                                    ("CH_CTRL", ch_reg(rng.randrange(2), R.FC_CH_CTRL), (0, 1))))
    g.write(4, ctrl(g, off), g.value(4, values))


def scribble(g) -> None:
    """The driver rewrites its DVMA table while the adapter uses it."""
    i = g.rng.randrange(PAGES)
    g.memwrite(TABLE + 8 * i, struct.pack("<Q", g.value(8)))


# ---- the fabric's side ----------------------------------------------------------------
def frame(v: FabricView) -> tuple:
    """A frame the fabric delivers: well formed to either channel, of every size, and
    truncated, oversized or of an unknown TYPE."""
    rng = v.rng
    r = rng.random()
    if r < 0.7:
        payload = rng.randbytes(rng.choice((0, 1, 64, 1500, R.FC_MAX_PAYLOAD)))
        return None, wire_frame(v.peer(), v.node, rng.choice((R.FC_TYPE_IP, R.FC_TYPE_USER)),
                                payload, tag=rng.getrandbits(32),
                                offset=rng.choice((0, 0, 2112, 0xFFFFFFFF)),
                                msg_len=rng.choice((len(payload), 0, 0xFFFFFFFF)))
    if r < 0.8:
        full = wire_frame(v.peer(), v.node, R.FC_TYPE_USER, bytes(10))
        return None, full[:rng.randrange(WIRE_HDR.size)]
    if r < 0.9:
        n = rng.choice((R.FC_MAX_PAYLOAD + 1, 4096, 65536 - WIRE_HDR.size))
        return None, wire_frame(v.peer(), v.node, R.FC_TYPE_USER, bytes(n))
    return None, rng.choice((wire_frame(v.peer(), v.node, rng.choice((0, 1, 0xFF)), b"x"),
                             rng.randbytes(rng.randrange(64))))


def check_frame(v: FabricView, m: dict) -> str | None:
    """The frame header's rules (proto/fc.h): TYPE of a channel, ports, payload length."""
    p = m["payload"]
    if len(p) < WIRE_HDR.size:
        return f"FC frame of {len(p)} bytes, shorter than its header"
    r_ctl, type_, f_ctl, _, d_id, s_id, _, offset, msg_len = WIRE_HDR.unpack_from(p)
    n = len(p) - WIRE_HDR.size
    if r_ctl != R.FC_RCTL_DATA or type_ not in (R.FC_TYPE_IP, R.FC_TYPE_USER):
        return f"FC frame with R_CTL 0x{r_ctl:x}, TYPE 0x{type_:x}"
    if d_id != m["dst"] or s_id != m["src"]:
        return f"FC frame D_ID {d_id} S_ID {s_id} sent from {m['src']} to {m['dst']}"
    if n > R.FC_MAX_PAYLOAD or offset + n > msg_len or f_ctl & ~3:
        return f"FC frame of {n} bytes at offset {offset} of {msg_len}, F_CTL 0x{f_ctl:x}"
    return None


BOARD = BoardSpec(
    name="fc",
    device="retrolink-fc",
    pci_id=(R.FC_PCI_VENDOR_ID, R.FC_PCI_DEVICE_ID),
    registers=REGISTERS,
    properties=properties,
    sequences=(configure, configure, dma_send, dma_send, send_pio, reap, control, scribble),
    frame=frame,
    check_frame=check_frame,
)
