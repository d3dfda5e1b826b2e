"""The PUMA-II DSM board (qemu/puma2/, register map puma2-regs.h, frames proto/puma2.h)
for the fuzzer: where its registers are, how a driver uses it (enable, commands for pages
near the start and at the ends of the shared space, responses popped, RECALLs answered
with RELEASE, stores and loads through BAR1 of held and unheld pages, resets), the
protocol frames the other boards send it (every type, for the pages it manages, owns or
asked for, and malformed ones), and the rules its own frames follow."""
from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, Reg
from retrolink.qtest.puma2_regs import WIRE_HDR, R, cmd, wire_frame

PAGE = R.PUMA2_PAGE
CTRL_VALUES = (0, R.PUMA2_CTRL_ENABLE, R.PUMA2_CTRL_RESET,
               R.PUMA2_CTRL_ENABLE | R.PUMA2_CTRL_RESET, 4)
OPS = (R.PUMA2_OP_READ, R.PUMA2_OP_WRITE, R.PUMA2_OP_RELEASE)
TYPES = (R.PUMA2_MSG_REQ, R.PUMA2_MSG_FWD, R.PUMA2_MSG_PAGE, R.PUMA2_MSG_INV,
         R.PUMA2_MSG_INV_ACK, R.PUMA2_MSG_CONFIRM)

REGISTERS = (
    *(Reg(0, getattr(R, name), name) for name in (
        "PUMA2_REG_ID", "PUMA2_REG_VERSION", "PUMA2_REG_NODE_ID", "PUMA2_REG_NUM_NODES",
        "PUMA2_REG_STATUS", "PUMA2_REG_ERROR", "PUMA2_REG_SPACE_PAGES", "PUMA2_REG_CMD_FREE",
        "PUMA2_REG_RESP", "PUMA2_REG_RESP_COUNT", "PUMA2_REG_BUS_NS_LO", "PUMA2_REG_BUS_NS_HI",
        "PUMA2_REG_NET_NS_LO", "PUMA2_REG_NET_NS_HI", "PUMA2_REG_PAGES_IN",
        "PUMA2_REG_PAGES_OUT", "PUMA2_REG_MSGS_IN", "PUMA2_REG_MSGS_OUT",
        "PUMA2_REG_INVALIDATED")),
    Reg(0, R.PUMA2_REG_CTRL, "CTRL", CTRL_VALUES),
    Reg(0, R.PUMA2_REG_IRQ_STATUS, "IRQ_STATUS", (1, 2, 3)),
    Reg(0, R.PUMA2_REG_IRQ_MASK, "IRQ_MASK", (0, 3, 0xFF)),
    Reg(0, R.PUMA2_REG_CMD, "CMD", tuple(cmd(p, op) for p in (0, 1, 2, 3) for op in OPS)),
    *(Reg(1, p * PAGE + off, "MEM") for p in (0, 1, 2, 3) for off in (0, 8, PAGE - 8)),
)


def properties(rng) -> dict:
    """Mostly a small board that is ready at once; now and then a property at an edge
    (some beyond what realize accepts: QEMU must then refuse to start, cleanly)."""
    p = {"start-us": rng.choice((0, 0, 0, 1, 250)), "memory-mib": rng.choice((1, 1, 1, 2, 16))}
    if rng.random() < 0.15:
        p.update(rng.choice((
            {"memory-mib": rng.choice((0, 3, 64, 128, 0xFFFFFFFF))},
            {"vme-rate": rng.choice((0, 1, 10**12, 10**12 + 1, NEVER))},
            {"copy-rate": rng.choice((0, 1, 10**12, 10**12 + 1, NEVER))},
            {"vme-overhead-ns": rng.choice((0, 10**9, 10**9 + 1, NEVER))},
            {"request-ns": rng.choice((0, 1, 10**9, 10**9 + 1, NEVER))},
        )))
    return p


def space_pages(props: dict) -> int:
    mib = props.get("memory-mib", 16)
    return (mib << 20) // PAGE if isinstance(mib, int) and 0 < mib <= 64 else 256


def page_of(rng, pages: int) -> int:
    """Mostly one of the first pages (every manager among them), else an edge."""
    if rng.random() < 0.85:
        return rng.randrange(min(pages, 8))
    return rng.choice((pages - 1, pages, pages + 1, 1 << 27, (1 << 28) - 1))


# ---- what a driver does ---------------------------------------------------------------
def ctrl(g, off: int) -> int:
    return g.bar(0) + off


def enable(g) -> None:
    g.write(4, ctrl(g, R.PUMA2_REG_IRQ_MASK), R.PUMA2_IRQ_RESP | R.PUMA2_IRQ_ERROR)
    g.write(4, ctrl(g, R.PUMA2_REG_CTRL), R.PUMA2_CTRL_ENABLE)


def commands(g) -> None:
    """A few commands (mostly READ and WRITE of the first pages, some RELEASEs, some bad
    ops and pages), then responses popped; RECALLed pages released."""
    rng = g.rng
    pages = g.read(4, ctrl(g, R.PUMA2_REG_SPACE_PAGES)) or 256
    for _ in range(rng.choice((1, 1, 2, 4, 16, 70))):
        op = rng.choice((*OPS, *OPS, 0, 4, 0xF))
        g.write(4, ctrl(g, R.PUMA2_REG_CMD), cmd(page_of(rng, pages), op))
    drain(g)


def drain(g) -> None:
    for _ in range(g.rng.choice((0, 1, 4, 130))):
        v = g.read(4, ctrl(g, R.PUMA2_REG_RESP))
        if v is None or v == R.PUMA2_RESP_EMPTY:
            break
        if (v >> 8) & 0xF == R.PUMA2_KIND_RECALL and g.rng.random() < 0.8:
            g.write(4, ctrl(g, R.PUMA2_REG_CMD), cmd(v >> 12, R.PUMA2_OP_RELEASE))


def memory(g) -> None:
    """Loads and stores through BAR1, in held and unheld pages, aligned or not."""
    rng = g.rng
    base = g.bar(1)
    for _ in range(rng.randint(1, 8)):
        size = rng.choice((1, 2, 4, 8))
        off = rng.randrange(8) * PAGE + rng.choice((0, 8, 3, PAGE - 8, PAGE - 1, 2))
        if rng.random() < 0.5:
            g.write(size, base + off, g.value(size))
        else:
            g.read(size, base + off)


def control(g) -> None:
    rng = g.rng
    name, off, values = rng.choice((("CTRL", R.PUMA2_REG_CTRL, CTRL_VALUES),
                                    ("IRQ_MASK", R.PUMA2_REG_IRQ_MASK, (0, 3)),
                                    ("IRQ_STATUS", R.PUMA2_REG_IRQ_STATUS, (1, 2, 3))))
    g.write(4, ctrl(g, off), g.value(4, values))


# ---- the ring's side ------------------------------------------------------------------
def frame(v: FabricView) -> tuple:
    """A frame another board sends: mostly well formed (every type, the first pages, a
    plausible requester and copy set, a page's bytes with a PAGE), some replies to what
    the board sent (a PAGE for its REQ, an INV_ACK for its INV, a CONFIRM for its FWD),
    some truncated, oversized, or with a field out of range."""
    rng = v.rng
    pages = space_pages(v.props)
    nodes = max(1, min(v.nodes, R.PUMA2_MAX_NODES))
    src = v.peer()
    r = rng.random()
    if r < 0.35 and v.sent:
        dst, sent = rng.choice(v.sent[-16:])
        if len(sent) >= WIRE_HDR.size:
            type_, op, _, page, from_, _ = WIRE_HDR.unpack_from(sent)
            answer = {R.PUMA2_MSG_REQ: (R.PUMA2_MSG_PAGE, op),
                      R.PUMA2_MSG_INV: (R.PUMA2_MSG_INV_ACK, 0),
                      R.PUMA2_MSG_FWD: (R.PUMA2_MSG_CONFIRM, op),
                      R.PUMA2_MSG_PAGE: (R.PUMA2_MSG_CONFIRM, op)}.get(type_)
            if type_ == R.PUMA2_MSG_FWD:
                # the owner sent the page on: the requester confirms to this manager
                dst = from_ if from_ != v.node else dst
            if answer:
                t, o = answer
                data = rng.randbytes(PAGE) if t == R.PUMA2_MSG_PAGE and rng.random() < 0.8 \
                    else None
                return dst, wire_frame(t, page, dst if t != R.PUMA2_MSG_PAGE else v.node,
                                       op=o, copyset=rng.getrandbits(nodes) & ~(1 << v.node)
                                       if t == R.PUMA2_MSG_PAGE and op == R.PUMA2_OP_WRITE
                                       else 0, data=data)
    if r < 0.8:
        t = rng.choice((*TYPES, R.PUMA2_MSG_REQ, R.PUMA2_MSG_REQ))
        data = rng.randbytes(PAGE) if t == R.PUMA2_MSG_PAGE and rng.random() < 0.7 else None
        from_ = rng.choice((src, src, v.node, rng.randrange(nodes)))
        page = page_of(rng, pages)
        if t == R.PUMA2_MSG_REQ and rng.random() < 0.7 and v.node < nodes:
            # a request to this board as the manager: it forwards to the owner, which is
            # another board once a WRITE has moved the page
            page, from_ = min(v.node + nodes * rng.randrange(2), pages - 1), src
        return src, wire_frame(t, page, from_,
                               op=rng.choice((R.PUMA2_OP_READ, R.PUMA2_OP_WRITE)),
                               copyset=rng.choice((0, 0, rng.getrandbits(nodes))), data=data)
    if r < 0.9:
        good = wire_frame(R.PUMA2_MSG_PAGE, 0, v.node, op=1, data=bytes(PAGE))
        return None, good[:rng.choice((0, 1, 15, 16, 17, 100, PAGE + 15))]
    return None, rng.choice((
        wire_frame(rng.choice((0, 7, 0xFF)), 0, src, op=1),
        wire_frame(R.PUMA2_MSG_REQ, 0, rng.choice((nodes, 32, 255, 0xFFFFFFFF)), op=1),
        wire_frame(R.PUMA2_MSG_REQ, 0, src, op=rng.choice((0, 3, 0xFF))),
        wire_frame(R.PUMA2_MSG_PAGE, 0, src, op=2, copyset=0xFFFFFFFF, data=bytes(PAGE)),
        wire_frame(R.PUMA2_MSG_INV, 0, src, flags=rng.choice((1, 2, 0xFFFF))),
        wire_frame(R.PUMA2_MSG_PAGE, 0, src, op=1, data=bytes(PAGE + 1)),
        rng.randbytes(rng.randrange(64))))


def check_frame(v: FabricView, m: dict) -> str | None:
    """The frame's rules (proto/puma2.h): a known type, a page of the space, a board of
    the ring, an op where one belongs, the page's bytes with a PAGE's F_DATA only."""
    p = m["payload"]
    if len(p) < WIRE_HDR.size:
        return f"PUMA-II frame of {len(p)} bytes, shorter than its header"
    type_, op, flags, page, from_, copyset = WIRE_HDR.unpack_from(p)
    nodes = min(v.nodes, R.PUMA2_MAX_NODES)
    data = flags & R.PUMA2_MSG_F_DATA
    if type_ not in TYPES:
        return f"PUMA-II frame of type {type_}"
    if page >= space_pages(v.props) or from_ >= nodes or copyset >> nodes:
        return f"PUMA-II frame for page {page}, from {from_}, copy set 0x{copyset:x}"
    if type_ not in (R.PUMA2_MSG_INV, R.PUMA2_MSG_INV_ACK) and \
            op not in (R.PUMA2_OP_READ, R.PUMA2_OP_WRITE):
        return f"PUMA-II frame of type {type_} with op {op}"
    if flags & ~R.PUMA2_MSG_F_DATA or (data and type_ != R.PUMA2_MSG_PAGE) or \
            len(p) != WIRE_HDR.size + (PAGE if data else 0):
        return f"PUMA-II frame of type {type_}, flags 0x{flags:x}, {len(p)} bytes"
    if m["dst"] >= nodes:
        return f"PUMA-II frame to board {m['dst']} of a ring of {nodes}"
    return None


BOARD = BoardSpec(
    name="puma2",
    device="retrolink-puma2",
    pci_id=(R.PUMA2_PCI_VENDOR_ID, R.PUMA2_PCI_DEVICE_ID),
    registers=REGISTERS,
    properties=properties,
    sequences=(enable, enable, commands, commands, commands, drain, memory, control),
    frame=frame,
    check_frame=check_frame,
)
