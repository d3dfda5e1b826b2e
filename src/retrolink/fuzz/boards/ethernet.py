"""The Ethernet board for the fuzzer, fuzzed as `e1000` (BoardSpec.name): QEMU's e1000
behind our -netdev retrolink (qemu/net/retrolink-net.c, docs/boards/ethernet.md); the
e100 and tulip share that backend. The e1000 model is upstream's; what is fuzzed is our
backend under it: the frames a driver makes the NIC send (any length, any destination
MAC, rings pointing anywhere), the frames the fabric delivers (runts, giants, any
source), the link that follows bus mastering, and the backend's properties at their
edges. The rules for the frames it sends are the backend's: routed by the
destination MAC, padded to 60 bytes, never longer than a payload may be."""
import struct

from retrolink import wire
from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, Reg

# e1000 registers (Intel 8254x manual; QEMU's hw/net/e1000_regs.h)
CTRL, STATUS, ICR, IMS, IMC, RCTL, TCTL = 0x0, 0x8, 0xC0, 0xD0, 0xD8, 0x100, 0x400
RDBAL, RDBAH, RDLEN, RDH, RDT = 0x2800, 0x2804, 0x2808, 0x2810, 0x2818
TDBAL, TDBAH, TDLEN, TDH, TDT = 0x3800, 0x3804, 0x3808, 0x3810, 0x3818
RAL0, RAH0 = 0x5400, 0x5404
RCTL_EN, RCTL_UPE, RCTL_MPE, RCTL_BAM = 1 << 1, 1 << 3, 1 << 4, 1 << 15
TCTL_EN, TCTL_PSP = 1 << 1, 1 << 3
TXD_EOP, TXD_IFCS, TXD_RS = 1, 2, 8
TX_RING, RX_RING, BUFS = 0x100000, 0x110000, 0x200000     # guest RAM (q35: 128 MiB)
MAC_PREFIX = bytes((0x52, 0x54, 0x00, 0x52))               # docs/boards/ethernet.md
MIN_FRAME, MAX_PAYLOAD = 60, wire.lib.RL_MAX_PAYLOAD

REGISTERS = (
    Reg(0, CTRL, "CTRL", (0, 1 << 26, 1 << 6)),             # RST, SLU
    Reg(0, STATUS, "STATUS"), Reg(0, ICR, "ICR"),
    Reg(0, IMS, "IMS", (0, 0xFFFFFFFF)), Reg(0, IMC, "IMC", (0xFFFFFFFF,)),
    Reg(0, RCTL, "RCTL", (0, RCTL_EN, RCTL_EN | RCTL_UPE | RCTL_MPE | RCTL_BAM)),
    Reg(0, TCTL, "TCTL", (0, TCTL_EN | TCTL_PSP)),
    *(Reg(0, r, name, (0, 1, 8, 255, 256)) for r, name in (
        (RDH, "RDH"), (RDT, "RDT"), (TDH, "TDH"), (TDT, "TDT"))),
    *(Reg(0, r, name, (0, 128, 4096, 1 << 20)) for r, name in ((RDLEN, "RDLEN"), (TDLEN, "TDLEN"))),
    Reg(0, RDBAL, "RDBAL", (RX_RING,)), Reg(0, TDBAL, "TDBAL", (TX_RING,)),
    Reg(0, RDBAH, "RDBAH", (0,)), Reg(0, TDBAH, "TDBAH", (0,)),
)


def properties(rng) -> dict:
    """The backend's properties: mostly quick ones; now and then an edge (some beyond
    what it accepts: QEMU must then refuse to start, cleanly)."""
    p = {"link-up-ns": rng.choice((0, 0, 1, 1000, 10**6, 10**9))}
    if rng.random() < 0.3:
        p.update(rng.choice((
            {"tx-latency-ns": rng.choice((0, 1, 3600 * 10**9, 3600 * 10**9 + 1, NEVER))},
            {"rx-latency-ns": rng.choice((0, 1, 3600 * 10**9, 3600 * 10**9 + 1))},
            {"dma-rate": rng.choice((0, 1, 133_000_000, NEVER))},
            {"link-up-ns": rng.choice((3600 * 10**9, 3600 * 10**9 + 1, NEVER))},
            {"network": rng.choice((0, 1, 15, 16, 255))},
        )))
    return p


def qemu_args(node: int, sock: str, props: dict) -> list:
    opts = ",".join(f"{k}={v}" for k, v in props.items())
    return ["-netdev", f"retrolink,id=n0,fabric={sock},node={node}" + (f",{opts}" if opts else ""),
            "-device", f"e1000,netdev=n0,mac=52:54:00:52:00:{node & 0xFF:02x},romfile="]


def mac(station: int) -> bytes:
    """A station's MAC on network 0 (the board's own is node & 0xff, see qemu_args)."""
    return MAC_PREFIX + bytes((0, station & 0xFF))


# ---- what a driver does ---------------------------------------------------------------
def reg(g, off: int) -> int:
    return g.bar(0) + off


def start(g) -> None:
    """Rings in guest RAM (sometimes misplaced or of odd sizes), receiver and transmitter
    on, the station address, link up."""
    rng = g.rng
    g.write(4, reg(g, CTRL), 1 << 6)                                    # set link up
    for base, bal, blen, head, tail in ((RX_RING, RDBAL, RDLEN, RDH, RDT),
                                        (TX_RING, TDBAL, TDLEN, TDH, TDT)):
        g.write(4, reg(g, bal), rng.choice((base, base, base, 0, 0xFFFFFFF0, g.value(4))))
        g.write(4, reg(g, blen), rng.choice((256, 256, 4096, 0, 128, 1 << 20)))
        g.write(4, reg(g, head), 0)
        g.write(4, reg(g, tail), rng.choice((0, 0, 1, 15, 16)))
    for i in range(16):                                  # rx descriptors: a buffer each
        g.memwrite(RX_RING + 16 * i, struct.pack("<QQ", BUFS + 2048 * i, 0))
    g.write(4, reg(g, RAL0), int.from_bytes(mac(g.node)[:4], "little"))
    g.write(4, reg(g, RAH0), int.from_bytes(mac(g.node)[4:], "little") | 1 << 31)
    g.write(4, reg(g, RCTL), rng.choice((RCTL_EN | RCTL_BAM, RCTL_EN | RCTL_UPE | RCTL_MPE,
                                         0)))
    g.write(4, reg(g, TCTL), TCTL_EN | TCTL_PSP)


def send(g) -> None:
    """A frame in the next tx descriptor, then the tail: to a peer, to itself, to a
    station that is not there, broadcast, to another network; runts and giants."""
    rng = g.rng
    slot = rng.randrange(16)
    peers = [n for n in range(min(g.nodes, 40)) if n != g.node] or [0]
    dst = rng.choice((*[mac(rng.choice(peers))] * 4, mac(g.node), mac(g.nodes),
                      b"\xff" * 6, b"\x01\x00\x5e\x00\x00\x01", MAC_PREFIX + b"\x07\x00",
                      rng.randbytes(6)))
    length = rng.choice((0, 1, 13, 14, 15, 59, 60, 64, 1514, 1518, 4096, 9000, 16288,
                         rng.randrange(1, 2000)))
    frame = (dst + mac(g.node) + b"\x08\x00" + rng.randbytes(max(0, length - 14)))[:length]
    buf = BUFS + 0x100000 + 0x4000 * slot
    if frame:
        g.memwrite(buf, frame)
    cmd = TXD_EOP | TXD_IFCS | TXD_RS if rng.random() < 0.9 else g.value(1)
    addr = buf if rng.random() < 0.95 else rng.choice((0, 0xFFFFFFF0, 1 << 40))
    g.memwrite(TX_RING + 16 * slot, struct.pack("<QHBBBBH", addr, length & 0xFFFF, 0, cmd,
                                                0, 0, 0))
    g.write(4, reg(g, TDT), (slot + 1) % 16 if rng.random() < 0.9 else g.value(4))


def reap(g) -> None:
    """Read and clear interrupt causes, give rx descriptors back."""
    g.read(4, reg(g, ICR))
    g.read(4, reg(g, STATUS))
    g.write(4, reg(g, RDT), g.rng.choice((15, 0, g.rng.randrange(16))))


def toggle(g) -> None:
    """Receiver, transmitter or bus mastering off and on (the link follows bus mastering)."""
    rng = g.rng
    r = rng.random()
    if r < 0.4:
        g.write(4, reg(g, RCTL), rng.choice((0, RCTL_EN | RCTL_BAM)))
    elif r < 0.7:
        g.write(4, reg(g, TCTL), rng.choice((0, TCTL_EN | TCTL_PSP)))
    else:
        g.cfg_write(2, 0x04, rng.choice((0x2, 0x6)))                   # bus master off/on


# ---- the network's side ---------------------------------------------------------------
def frame(v: FabricView) -> tuple:
    """A frame the network delivers: to this station, broadcast, to another station (the
    NIC filters it), runts, giants, garbage."""
    rng = v.rng
    to = rng.choice((mac(v.node),) * 3 + (b"\xff" * 6, mac(v.node + 1), rng.randbytes(6)))
    n = rng.choice((0, 1, 13, 14, 42, 60, 64, 1514, 1518, 4096, 9000, 16384, 65536 - 64))
    src = mac(v.peer())
    body = (to + src + b"\x08\x00" + rng.randbytes(max(0, n - 14)))[:n]
    return None, body


def check_frame(v: FabricView, m: dict) -> str | None:
    """The backend's rules (retrolink-net.c): a frame is at least 60 bytes (padded), at
    most a payload; unicast to the station its destination MAC names, on this network;
    a group address to every other station (RL_NODE_BROADCAST)."""
    p, dst = m["payload"], m["dst"]
    if not MIN_FRAME <= len(p) <= MAX_PAYLOAD:
        return f"Ethernet frame of {len(p)} bytes (padded to {MIN_FRAME}, at most {MAX_PAYLOAD})"
    if p[0] & 1:
        return None if dst == wire.BROADCAST else \
            f"a frame to group address {p[:6].hex(':')} sent to node {dst}, not to every station"
    network = int(v.props.get("network", 0))
    if p[:4] != MAC_PREFIX or p[4] != network or p[5] != dst or dst >= v.nodes or dst == v.node:
        return f"a frame to {p[:6].hex(':')} sent to node {dst} (network {network})"
    return None


BOARD = BoardSpec(
    name="e1000",
    device="e1000",
    pci_id=(0x8086, 0x100E),
    registers=REGISTERS,
    properties=properties,
    sequences=(start, send, send, send, reap, reap, toggle),
    frame=frame,
    check_frame=check_frame,
    qemu_args=qemu_args,
)
