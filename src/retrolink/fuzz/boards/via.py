"""The VIA NIC (qemu/via/, register map via-regs.h, docs/boards/via.md) for the fuzzer:
where its registers and doorbells are, how the kernel agent and VIPL use it (a TPT in guest
RAM, regions registered, CQs set, VIs opened, connected or in datagram mode, descriptors
written in registered memory and posted, CQs and events reaped, CM messages sent and
popped), the frames other NICs send it (every type, well formed for its VIs and not), and
the rules its own frames follow."""
import struct

from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, Reg
from retrolink.qtest.via_regs import (WIRE_HDR, R, arm_cq, arm_vi, cm_tx_word, db_value,
                                      descriptor, vi_errors_reg, vi_events_reg, wire_frame)

TPT = 0x00100000            # the TPT the agent writes (guest RAM)
CQS = 0x00180000            # CQ rings
DATA = 0x00200000           # TPT entry i -> DATA + i * 4096
PAGES = 32
VA = 0x10000000             # region 1's virtual addresses: its pages are entries 0..
VIS = 4                     # the VIs a run mostly uses
CTRL_VALUES = (0, R.VIA_CTRL_ENABLE, R.VIA_CTRL_RESET, R.VIA_CTRL_ENABLE | R.VIA_CTRL_RESET, 4)
LENGTHS = (0, 1, 64, 2047, 2048, 2049, 4096, 9000, R.VIA_MAX_MSG, R.VIA_MAX_MSG + 1,
           0xFFFFFFFF)

REGISTERS = (
    *(Reg(0, getattr(R, name), name) for name in (
        "VIA_REG_ID", "VIA_REG_VERSION", "VIA_REG_NODE_ID", "VIA_REG_NUM_NODES",
        "VIA_REG_STATUS", "VIA_REG_MAC_LO", "VIA_REG_MAC_HI", "VIA_REG_PEERS_UP",
        "VIA_REG_ERROR", "VIA_REG_VI_STATE", "VIA_REG_CQ_STATUS", "VIA_REG_CQ_COUNT",
        "VIA_REG_CM_RX_COUNT", "VIA_REG_CM_RX_SRC", "VIA_REG_TX_MSGS", "VIA_REG_RX_MSGS",
        "VIA_REG_RX_DROPS", "VIA_REG_DESC_ERRORS", "VIA_REG_DB_REFUSED", "VIA_REG_CM_RX_POP",
        "VIA_REG_CM_TX_GO")),
    Reg(0, R.VIA_REG_CTRL, "CTRL", CTRL_VALUES),
    Reg(0, R.VIA_REG_IRQ_STATUS, "IRQ_STATUS", (R.VIA_IRQ_ALL,)),
    Reg(0, R.VIA_REG_IRQ_MASK, "IRQ_MASK", (0, R.VIA_IRQ_ALL)),
    *(Reg(0, getattr(R, name), name, (0, 1, 5, 255, 256, 1023, 1024, 4096, TPT, VA))
      for name in ("VIA_REG_TPT_LO", "VIA_REG_TPT_HI", "VIA_REG_TPT_PAGES", "VIA_REG_MR_INDEX",
                   "VIA_REG_MR_VA_LO", "VIA_REG_MR_VA_HI", "VIA_REG_MR_LEN", "VIA_REG_MR_TPT",
                   "VIA_REG_MR_PTAG", "VIA_REG_MR_CMD", "VIA_REG_VI_INDEX", "VIA_REG_VI_PTAG",
                   "VIA_REG_VI_CQ", "VIA_REG_VI_PEER", "VIA_REG_VI_CMD", "VIA_REG_CQ_INDEX",
                   "VIA_REG_CQ_ADDR_LO", "VIA_REG_CQ_ADDR_HI", "VIA_REG_CQ_ENTRIES",
                   "VIA_REG_CQ_CMD", "VIA_REG_ARM", "VIA_REG_CQ_EVENTS", "VIA_REG_CQ_ERRORS",
                   "VIA_REG_CM_TX_DEST")),
    *(Reg(0, vi_events_reg(n), "VI_EVENTS", (0xFFFFFFFF,)) for n in range(4)),
    *(Reg(0, vi_errors_reg(n), "VI_ERRORS", (0xFFFFFFFF,)) for n in range(2)),
    *(Reg(0, cm_tx_word(i), "CM_TX_WORD") for i in (0, 7)),
    *(Reg(2, v * R.VIA_DB_PAGE_SIZE + getattr(R, name), name)
      for v in (0, 1, 63) for name in ("VIA_DB_SEND", "VIA_DB_RECV", "VIA_DB_STATE",
                                       "VIA_DB_SQ_DONE", "VIA_DB_RQ_DONE", "VIA_DB_ERROR")),
)


def properties(rng) -> dict:
    """Mostly the defaults with a NIC ready at once; now and then a property at an edge
    (some beyond what realize accepts: QEMU must then refuse to start, cleanly)."""
    p = {"mac": "52:54:00:12:34:56", "start-us": rng.choice((0, 0, 0, 1, 100))}
    if rng.random() < 0.15:
        p.update(rng.choice((
            {"dma-rate": rng.choice((0, 1, 10**12, 10**12 + 1, NEVER))},
            {"dma-setup-ns": rng.choice((0, 10**9, 10**9 + 1, NEVER))},
            {"pio-write-ns": rng.choice((0, 1, 10**9, 10**9 + 1))},
            {"pio-read-ns": rng.choice((0, 10**9, NEVER))},
            {"desc-ns": rng.choice((0, 1, 10**9, 10**9 + 1))},
            {"frame-ns": rng.choice((0, 1, 10**9, NEVER))},
        )))
    return p


# ---- what the agent and VIPL do --------------------------------------------------------
def ctrl(g, off: int) -> int:
    return g.bar(0) + off


def doorbell(g, v: int, off: int) -> int:
    return g.bar(2) + v * R.VIA_DB_PAGE_SIZE + off


def regs(g, pairs) -> None:
    for off, val in pairs:
        g.write(4, ctrl(g, off), val)


def tag(g) -> int:
    return g.rng.choice((5, 5, 5, 6, 0, 255, 256))


def tpt(g, sane: bool = False) -> None:
    """The TPT: mostly valid writable entries of tag 5, some read-only, of tag 6, holes,
    pointing outside RAM (sane: all valid and writable but now and then one); the NIC told
    where it is (refused while enabled) and enabled."""
    rng = g.rng
    entries = []
    for i in range(PAGES):
        r = rng.random() * (0.1 if sane else 1)
        addr = DATA + i * 4096
        if r < 0.7:
            e = addr | 3 | 5 << 4
        elif r < 0.8:
            e = addr | 1 | 5 << 4
        elif r < 0.85:
            e = addr | 3 | 6 << 4
        elif r < 0.92:
            e = 0
        else:
            e = rng.choice((0xFFFFFFFFF000, 1 << 40, 0xFEE00000)) | 3 | 5 << 4
        entries.append(e)
    g.memwrite(TPT, b"".join(struct.pack("<Q", e) for e in entries))
    if rng.random() < 0.5:
        g.write(4, ctrl(g, R.VIA_REG_CTRL), 0)
    regs(g, ((R.VIA_REG_TPT_LO, rng.choice((TPT, TPT, TPT + 4, g.value(4)))),
             (R.VIA_REG_TPT_HI, rng.choice((0, 0, 0, 1))),
             (R.VIA_REG_TPT_PAGES, rng.choice((PAGES, PAGES, 1, 0, R.VIA_TPT_MAX_PAGES,
                                               R.VIA_TPT_MAX_PAGES + 1))),
             (R.VIA_REG_IRQ_MASK, R.VIA_IRQ_ALL),
             (R.VIA_REG_CTRL, R.VIA_CTRL_ENABLE)))


def bring_up(g) -> None:
    """What the agent does first, mostly sanely: the TPT, the NIC enabled, region 1 over
    the TPT's pages with tag 5, CQ 0, and a VI opened with them and connected to a peer's
    VI of the same number, or put in datagram mode; now and then one step at an edge."""
    rng = g.rng
    tpt(g, sane=rng.random() < 0.7)
    regs(g, ((R.VIA_REG_MR_INDEX, 0), (R.VIA_REG_MR_VA_LO, VA), (R.VIA_REG_MR_VA_HI, 0),
             (R.VIA_REG_MR_LEN, PAGES * 4096), (R.VIA_REG_MR_TPT, 0),
             (R.VIA_REG_MR_PTAG, 5), (R.VIA_REG_MR_CMD, R.VIA_MR_SET)))
    regs(g, ((R.VIA_REG_CQ_INDEX, 0), (R.VIA_REG_CQ_ADDR_LO, CQS), (R.VIA_REG_CQ_ADDR_HI, 0),
             (R.VIA_REG_CQ_ENTRIES, rng.choice((2, 8, 64))), (R.VIA_REG_CQ_CMD, R.VIA_CQ_SET)))
    v = g.via_vi = rng.randrange(VIS)
    cmd = R.VIA_VI_CMD_OPEN if rng.random() < 0.75 else R.VIA_VI_CMD_DATAGRAM
    peer = 1 if g.node != 1 else 0
    regs(g, ((R.VIA_REG_VI_INDEX, v), (R.VIA_REG_VI_PTAG, 5 if rng.random() < 0.9 else tag(g)),
             (R.VIA_REG_VI_CQ, rng.choice((0, 0, 0xFFFF0000, 0xFFFFFFFF))),
             (R.VIA_REG_VI_PEER, peer | v << 16), (R.VIA_REG_VI_CMD, cmd)))
    if cmd == R.VIA_VI_CMD_OPEN:
        g.write(4, ctrl(g, R.VIA_REG_VI_CMD), R.VIA_VI_CMD_CONNECT)
    if rng.random() < 0.2:
        rng.choice((region, cq, vi))(g)


def region(g) -> None:
    rng = g.rng
    regs(g, ((R.VIA_REG_MR_INDEX, rng.choice((0, 0, 1, 2, 1023, 1024))),
             (R.VIA_REG_MR_VA_LO, rng.choice((VA, VA, VA + 100, g.value(4)))),
             (R.VIA_REG_MR_VA_HI, rng.choice((0, 0, 0, 0xFFFFFFFF))),
             (R.VIA_REG_MR_LEN, rng.choice((PAGES * 4096, 4096, 1, 0, 0xFFFFFFFF,
                                            R.VIA_TPT_MAX_PAGES * 4096 - 4095))),
             (R.VIA_REG_MR_TPT, rng.choice((0, 0, 8, R.VIA_TPT_MAX_PAGES - 1,
                                            R.VIA_TPT_MAX_PAGES))),
             (R.VIA_REG_MR_PTAG, tag(g)),
             (R.VIA_REG_MR_CMD, rng.choice((R.VIA_MR_SET, R.VIA_MR_SET, R.VIA_MR_SET,
                                            R.VIA_MR_CLEAR, 0, 3)))))


def cq(g) -> None:
    rng = g.rng
    c = rng.choice((0, 0, 1, 31, 32))
    regs(g, ((R.VIA_REG_CQ_INDEX, c),
             (R.VIA_REG_CQ_ADDR_LO, rng.choice((CQS + 0x1000 * (c % 4), CQS + 4, 0xFFFFFFF8))),
             (R.VIA_REG_CQ_ADDR_HI, rng.choice((0, 0, 0, 1))),
             (R.VIA_REG_CQ_ENTRIES, rng.choice((1, 2, 8, 4096, 0, 3, 8192))),
             (R.VIA_REG_CQ_CMD, rng.choice((R.VIA_CQ_SET, R.VIA_CQ_SET, R.VIA_CQ_CLEAR, 7)))))


def vi(g) -> None:
    """A VI opened, connected, put in datagram mode, disconnected or closed."""
    rng = g.rng
    cmd = rng.choice((R.VIA_VI_CMD_OPEN, R.VIA_VI_CMD_CONNECT, R.VIA_VI_CMD_OPEN,
                      R.VIA_VI_CMD_CONNECT, R.VIA_VI_CMD_DATAGRAM, R.VIA_VI_CMD_DISCONNECT,
                      R.VIA_VI_CMD_CLOSE, 0, 6))
    cqs = rng.choice((0xFFFF, 0xFFFF << 16 | 0, 0xFFFFFFFF, 0, 1 << 16 | 31, g.value(4)))
    regs(g, ((R.VIA_REG_VI_INDEX, rng.choice((*range(VIS), 63, 64))),
             (R.VIA_REG_VI_PTAG, tag(g)),
             (R.VIA_REG_VI_CQ, cqs),
             (R.VIA_REG_VI_PEER, rng.choice((1, 1 | 1 << 16, 2 | 3 << 16, 0, g.nodes,
                                             1 | 64 << 16, g.value(4)))),
             (R.VIA_REG_VI_CMD, cmd)))


def post(g) -> None:
    """A descriptor written in region 1's memory (mostly sane: segments in it, lengths
    that add up, a destination node) and posted, some refused or malformed."""
    rng = g.rng
    if rng.random() < 0.6:
        good_post(g)
        return
    v = rng.choice((*range(VIS), 63))
    off = rng.choice((0, 64, 128, 4096 - 64, 30 * 4096, 100, PAGES * 4096))
    segs = []
    for _ in range(rng.choice((0, 1, 1, 2, 3, 16))):
        segs.append((VA + rng.choice((8192, 12000, 20000, 31 * 4096 + 4000, 0)) +
                     rng.randrange(64),
                     rng.choice((1, 1, 1, 2, 0, 1025)),
                     rng.choice((0, 1, 100, 2048, 5000, 4096 * 8, 0xFFFFFFFF))))
    length = sum(s[2] for s in segs) & 0xFFFFFFFF
    if rng.random() < 0.2:
        length = rng.choice(LENGTHS)
    control = rng.choice((0, 0, R.VIP_CONTROL_IMMEDIATE, 1, 2, 0x10))
    dest = rng.choice((1, 1, 0, 2, R.VIA_DEST_BROADCAST, g.nodes, 0xFFFFFFFF))
    seg_count = len(segs) if rng.random() < 0.9 else rng.choice((17, 0xFFFF))
    blob = descriptor(segs, length=length, control=control, immediate=g.value(4),
                      reserved=dest, seg_count=seg_count)
    if off + len(blob) <= PAGES * 4096:
        g.memwrite(DATA + off, blob)
    handle = rng.choice((1, 1, 1, 1, 1, 1, 0, 2, 1024, 0xFFFFFFFF))
    q = rng.choice((R.VIA_DB_SEND, R.VIA_DB_RECV))
    for _ in range(rng.choice((1, 1, 1, 2, 4, 300))):
        g.write(8, doorbell(g, v, q), db_value(handle, off))


def good_post(g) -> None:
    """What VIPL posts: a sane descriptor (1 to 3 segments in region 1, Length their sum,
    a destination of the network) on the VI bring_up set up, a send or a receive."""
    rng = g.rng
    v = getattr(g, "via_vi", 0)
    off = 64 * rng.randrange(16)
    segs = [(VA + 4096 * rng.randrange(2, 24) + rng.randrange(64), 1,
             rng.choice((0, 1, 100, 2048, 3000, 9000))) for _ in range(rng.randint(1, 3))]
    dest = rng.choice([n for n in range(min(g.nodes, 4)) if n != g.node] or [1])
    if rng.random() < 0.15:
        dest = R.VIA_DEST_BROADCAST
    g.memwrite(DATA + off, descriptor(segs, control=rng.choice((0, R.VIP_CONTROL_IMMEDIATE)),
                                      immediate=g.value(4), reserved=dest))
    q = R.VIA_DB_SEND if rng.random() < 0.6 else R.VIA_DB_RECV
    for _ in range(rng.choice((1, 1, 2, 3))):
        g.write(8, doorbell(g, v, q), db_value(1, off))


def reap(g) -> None:
    """Events and errors read and cleared, queues and CQs armed, a CQ slot consumed."""
    rng = g.rng
    g.read(4, ctrl(g, R.VIA_REG_IRQ_STATUS))
    g.write(4, ctrl(g, R.VIA_REG_IRQ_STATUS), R.VIA_IRQ_ALL)
    g.write(4, ctrl(g, R.VIA_REG_ARM), rng.choice((arm_vi(rng.randrange(VIS), rng.randrange(2)),
                                                   arm_cq(rng.randrange(2)), arm_cq(32), 128,
                                                   g.value(4))))
    g.write(4, ctrl(g, vi_events_reg(0)), 0xFFFFFFFF)
    g.write(4, ctrl(g, R.VIA_REG_CQ_ERRORS), 0xFFFFFFFF)
    for v in range(VIS):
        g.read(4, doorbell(g, v, R.VIA_DB_SQ_DONE))
    g.memwrite(CQS + 8 * rng.randrange(8), bytes(8))


def cm(g) -> None:
    rng = g.rng
    regs(g, ((R.VIA_REG_CM_TX_DEST, rng.choice((1, 1, 0, g.nodes, 0xFFFF))),
             (cm_tx_word(0), g.value(4))))
    g.write(4, ctrl(g, R.VIA_REG_CM_TX_GO), 1)
    for _ in range(rng.choice((0, 1, 20))):
        g.read(4, ctrl(g, R.VIA_REG_CM_RX_SRC))
        g.write(4, ctrl(g, R.VIA_REG_CM_RX_POP), 1)


def control(g) -> None:
    rng = g.rng
    name, off, values = rng.choice((("CTRL", R.VIA_REG_CTRL, CTRL_VALUES),
                                    ("IRQ_MASK", R.VIA_REG_IRQ_MASK, (0, R.VIA_IRQ_ALL))))
    g.write(4, ctrl(g, off), g.value(4, values))


def scribble(g) -> None:
    """The agent rewrites the TPT, or VIPL a descriptor, while the NIC uses them."""
    if g.rng.random() < 0.5:
        g.memwrite(TPT + 8 * g.rng.randrange(PAGES), struct.pack("<Q", g.value(8)))
    else:
        g.memwrite(DATA + g.rng.choice((0, 64, 128)) + g.rng.randrange(32), bytes([g.value(1)]))


# ---- the switch's side ------------------------------------------------------------------
def frame(v: FabricView) -> tuple:
    """A frame another NIC sends: well formed for the first VIs (DATA in pieces, DGRAM,
    ACKs for what the board sent, BREAK, CM), and truncated, oversized or inconsistent."""
    rng = v.rng
    r = rng.random()
    src = v.peer()
    if r < 0.3 and v.sent:
        dst, sent = rng.choice(v.sent[-16:])
        if len(sent) >= WIRE_HDR.size:
            t, flags, svi, dvi, _, seq, *_ = WIRE_HDR.unpack_from(sent)
            if t == R.VIA_F_DATA and flags & R.VIA_FF_LAST:
                return dst, wire_frame(R.VIA_F_ACK, src_vi=dvi, dst_vi=svi, src_node=dst,
                                       seq=seq, status=rng.choice((1, 1, 0x10001, 0x10041)))
    if r < 0.75:
        t = rng.choice((R.VIA_F_DATA, R.VIA_F_DATA, R.VIA_F_DGRAM, R.VIA_F_DGRAM, R.VIA_F_ACK,
                        R.VIA_F_BREAK, R.VIA_F_CM))
        msg_len = rng.choice((0, 10, 2048, 5000, R.VIA_MAX_MSG, R.VIA_MAX_MSG + 1))
        offset = rng.choice((0, 0, 2048, 4096))
        n = max(0, min(2048, msg_len - offset))
        payload = rng.randbytes(n) if t in (R.VIA_F_DATA, R.VIA_F_DGRAM) else \
            rng.randbytes(32) if t == R.VIA_F_CM else b""
        vi_ = rng.choice((0, 0, 1, 2, 3, 63, 64, 0xFFFF))
        return src, wire_frame(t, src_vi=rng.choice((vi_, 0, 1)), dst_vi=vi_, src_node=src,
                               seq=rng.choice((0, 0, 1, 2, 0xFFFFFFFF)), offset=offset,
                               msg_len=msg_len, payload=payload, immediate=rng.getrandbits(32),
                               status=rng.choice((1, 0x41, 0)))
    if r < 0.85:
        full = wire_frame(R.VIA_F_DATA, payload=bytes(10))
        return None, full[:rng.randrange(WIRE_HDR.size)]
    if r < 0.93:
        n = rng.choice((2049, 4096, 65536 - WIRE_HDR.size))
        return None, wire_frame(rng.choice((R.VIA_F_DATA, R.VIA_F_CM, R.VIA_F_ACK)),
                                payload=bytes(n), msg_len=n)
    return None, rng.choice((wire_frame(rng.choice((0, 6, 0xFF)), payload=b"x"),
                             rng.randbytes(rng.randrange(64))))


def check_frame(v: FabricView, m: dict) -> str | None:
    """The frame header's rules (proto/via.h): a type, the sender, the payload's size."""
    p = m["payload"]
    if len(p) < WIRE_HDR.size:
        return f"VIA frame of {len(p)} bytes, shorter than its header"
    t, flags, _, _, src_node, _, offset, msg_len, _, _, _ = WIRE_HDR.unpack_from(p)
    n = len(p) - WIRE_HDR.size
    if t not in (R.VIA_F_DATA, R.VIA_F_ACK, R.VIA_F_DGRAM, R.VIA_F_CM, R.VIA_F_BREAK):
        return f"VIA frame of type {t}"
    if src_node != m["src"]:
        return f"VIA frame from node {src_node} sent by {m['src']}"
    if t in (R.VIA_F_DATA, R.VIA_F_DGRAM):
        if n > R.VIA_FRAME_PAYLOAD or offset + n > msg_len or msg_len > R.VIA_MAX_MSG or \
                flags & ~7:
            return f"VIA frame of {n} bytes at offset {offset} of {msg_len}, flags {flags}"
    elif n != (4 * R.VIA_CM_WORDS if t == R.VIA_F_CM else 0):
        return f"VIA frame of type {t} with {n} payload bytes"
    return None


BOARD = BoardSpec(
    name="via",
    device="retrolink-via",
    pci_id=(R.VIA_PCI_VENDOR_ID, R.VIA_PCI_DEVICE_ID),
    registers=REGISTERS,
    properties=properties,
    sequences=(bring_up, bring_up, tpt, region, cq, vi, post, post, post, post, reap, cm,
               control, scribble),
    frame=frame,
    check_frame=check_frame,
)
