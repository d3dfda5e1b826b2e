"""qtest: the PUMA-II board's registers, access widths and refusals, both FIFOs, every
response status, and a host's READ, WRITE and RELEASE of pages this board manages (and
so owns from the start). The test is the driver; the board is node 0 of a 4-board fake
ring. include/retrolink/regs/puma2-regs.h; docs/boards/puma2.md."""
import pytest
from p2_rig import CTRL, DEFAULTS, MEM, PAGE, T0, Rig, props, vme_ns

from retrolink import wire
from retrolink.qtest.puma2_regs import R, cmd, resp

OK, READ, WRITE, RELEASE = R.PUMA2_ST_OK, R.PUMA2_OP_READ, R.PUMA2_OP_WRITE, R.PUMA2_OP_RELEASE
DONE = R.PUMA2_KIND_DONE


@pytest.fixture
def rig(artifacts, tmp_path):
    r = Rig(artifacts, tmp_path, extra=["-d", "guest_errors"])
    yield r
    r.close()


def refused(rig, err: int) -> None:
    """The last refused write said err and raised IRQ_ERROR (acknowledged here)."""
    assert rig.reg(R.PUMA2_REG_ERROR) == err
    assert rig.reg(R.PUMA2_REG_IRQ_STATUS) & R.PUMA2_IRQ_ERROR
    rig.set_reg(R.PUMA2_REG_IRQ_STATUS, R.PUMA2_IRQ_ERROR)


def test_identity(artifacts, tmp_path):
    rig = Rig(artifacts, tmp_path, props="start-us=1000")
    try:
        assert rig.reg(R.PUMA2_REG_ID) == R.PUMA2_ID_VALUE
        assert rig.reg(R.PUMA2_REG_VERSION) == 1
        assert rig.reg(R.PUMA2_REG_NODE_ID) == 0
        assert rig.reg(R.PUMA2_REG_SPACE_PAGES) == 256          # 1 MiB
        rig.q.clock_set(T0)                                     # the ring of 4 is up
        assert rig.reg(R.PUMA2_REG_NUM_NODES) == 4
        assert rig.reg(R.PUMA2_REG_STATUS) == 0
        assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 0
        assert rig.reg(R.PUMA2_REG_RESP) == R.PUMA2_RESP_EMPTY
        # the bus is busy with the accesses above: the CTRL store ends after them
        start = T0 + 5 * vme_ns(DEFAULTS, 4)
        rig.set_reg(R.PUMA2_REG_CTRL, R.PUMA2_CTRL_ENABLE)
        ready = start + vme_ns(DEFAULTS, 4) + 1_000_000
        rig.q.clock_set(ready - 1)
        assert rig.reg(R.PUMA2_REG_STATUS) == 0
        rig.q.clock_set(ready)
        assert rig.reg(R.PUMA2_REG_STATUS) == R.PUMA2_STATUS_READY
        assert rig.reg(R.PUMA2_REG_CTRL) == R.PUMA2_CTRL_ENABLE
        # every register access is counted as bus time
        assert rig.counter64(R.PUMA2_REG_BUS_NS_LO) == 14 * vme_ns(DEFAULTS, 4)
    finally:
        rig.close()


def test_access_widths_are_enforced_and_every_refusal_logged(rig):
    """Registers take aligned 32-bit accesses; BAR1 aligned 1-, 2-, 4-, 8-byte ones, and
    stores only to a page held for writing. Anything else reads 0, writes nothing, sets
    ERROR and IRQ_ERROR and says so in the guest_errors log."""
    q = rig.q
    q.clock_set(T0)
    assert q.read(2, CTRL + R.PUMA2_REG_ID) == 0
    refused(rig, R.PUMA2_ERR_BAD_ACCESS)
    assert q.read(8, CTRL + R.PUMA2_REG_ID) == 0
    assert q.read(4, CTRL + R.PUMA2_REG_ID + 2) == 0
    assert q.read(1, CTRL + R.PUMA2_REG_ID) == 0
    q.write(2, CTRL + R.PUMA2_REG_CTRL, R.PUMA2_CTRL_ENABLE)
    q.write(8, CTRL + R.PUMA2_REG_CTRL, R.PUMA2_CTRL_ENABLE)
    assert rig.reg(R.PUMA2_REG_CTRL) == 0
    refused(rig, R.PUMA2_ERR_BAD_ACCESS)
    # a command before the board is ready
    rig.command(0, READ)
    refused(rig, R.PUMA2_ERR_NOT_READY)
    assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH
    # BAR1: aligned reads of every width are fine (the page is zero)
    for size in (1, 2, 4, 8):
        assert q.read(size, MEM + 8) == 0
    assert rig.reg(R.PUMA2_REG_ERROR) == R.PUMA2_ERR_NOT_READY
    assert rig.reg(R.PUMA2_REG_IRQ_STATUS) & R.PUMA2_IRQ_ERROR == 0
    assert q.read(4, MEM + 2) == 0
    refused(rig, R.PUMA2_ERR_BAD_ACCESS)
    q.write(8, MEM + 4, 1)
    refused(rig, R.PUMA2_ERR_BAD_ACCESS)
    # a store to a page this board owns, but the host does not hold for writing
    q.write(4, MEM + 5 * PAGE, 0x12345678)
    refused(rig, R.PUMA2_ERR_NOT_WRITABLE)
    assert q.read(4, MEM + 5 * PAGE) == 0
    assert rig.reg(0xFFC) == 0                                  # unknown
    assert rig.reg(R.PUMA2_REG_CMD) == 0                        # write-only
    rig.set_reg(R.PUMA2_REG_ID, 0x1234)                         # read-only
    assert rig.reg(R.PUMA2_REG_ID) == R.PUMA2_ID_VALUE
    log = rig.log.read_text()
    for what in ("2-byte read at control offset 0x0 refused",
                 "8-byte read at control offset 0x0 refused",
                 "4-byte read at control offset 0x2 refused",
                 "1-byte read at control offset 0x0 refused",
                 "2-byte write at control offset 0x10 refused",
                 "8-byte write at control offset 0x10 refused",
                 "4-byte CMD write at 0x28 refused: the board is not enabled and ready",
                 "4-byte read at memory offset 0x2 refused: unaligned",
                 "8-byte write at memory offset 0x4 refused: unaligned",
                 "4-byte write at memory offset 0x5000 refused: the host does not hold its "
                 "page for writing (PUMA2_ERR 4)",
                 "read of unknown control offset 0xffc",
                 "read of the write-only CMD register",
                 "write of read-only or unknown control offset 0x0"):
        assert what in log, (what, log[-3000:])
    assert "memory offset 0x8 refused" not in log


def test_irq_mask_and_ack(rig):
    rig.bring_up(irq_mask=0)
    rig.command(0, READ)
    rig.q.clock_step(100_000)
    assert rig.reg(R.PUMA2_REG_IRQ_STATUS) == R.PUMA2_IRQ_RESP
    rig.set_reg(R.PUMA2_REG_IRQ_STATUS, R.PUMA2_IRQ_RESP)
    assert rig.reg(R.PUMA2_REG_IRQ_STATUS) == 0
    rig.set_reg(R.PUMA2_REG_IRQ_MASK, 0xFFFFFFFF)
    assert rig.reg(R.PUMA2_REG_IRQ_MASK) == R.PUMA2_IRQ_ALL


def test_command_fifo_fills_and_refuses(rig):
    """64 commands fit while the controller has not taken the first; the 65th is refused
    (CMD_FULL) and dropped. Then each takes request-ns."""
    rig.bring_up()
    for i in range(R.PUMA2_CMD_DEPTH):
        assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH - i
        rig.command(1000 + i, READ)                 # outside the space: RANGE
    assert rig.reg(R.PUMA2_REG_CMD_FREE) == 0
    rig.command(0, READ)
    refused(rig, R.PUMA2_ERR_CMD_FULL)
    assert "refused: the command FIFO is full" in rig.log.read_text()
    rig.q.clock_step(R.PUMA2_CMD_DEPTH * DEFAULTS["request"] + 10**6)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == R.PUMA2_CMD_DEPTH
    assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH
    got = rig.responses()
    assert got == [resp(1000 + i, DONE, R.PUMA2_ST_RANGE) for i in range(R.PUMA2_CMD_DEPTH)]
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 0


def test_a_full_response_fifo_holds_commands_back(rig):
    """The controller takes a command only with room for its answer: with 128 responses
    waiting, commands stay in the command FIFO; popping one lets the next go, decoded
    request-ns after the pop's bus transfer ends (the entry leaves the FIFO then)."""
    rig.bring_up()
    for i in range(R.PUMA2_RESP_DEPTH):
        if rig.reg(R.PUMA2_REG_CMD_FREE) == 0:
            rig.q.clock_step(R.PUMA2_CMD_DEPTH * DEFAULTS["request"] + 10**6)
        rig.command(300 + i, READ)
    rig.q.clock_step(10**6)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == R.PUMA2_RESP_DEPTH
    for i in range(3):
        rig.command(i * 4, READ)                    # pages 0, 4, 8: local, OK
    rig.q.clock_step(10**6)
    assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH - 3
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == R.PUMA2_RESP_DEPTH
    t = rig.q.clock_step(10**6)
    assert rig.reg(R.PUMA2_REG_RESP) == resp(300, DONE, R.PUMA2_ST_RANGE)
    decoded = t + vme_ns(DEFAULTS, 4) + DEFAULTS["request"]
    rig.q.clock_set(decoded - 1)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == R.PUMA2_RESP_DEPTH - 1
    rig.q.clock_set(decoded)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == R.PUMA2_RESP_DEPTH
    assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH - 2
    got = rig.responses()
    assert got[-1] == resp(0, DONE, OK) and len(got) == R.PUMA2_RESP_DEPTH
    rig.q.clock_step(10**6)
    assert rig.responses() == [resp(4, DONE, OK), resp(8, DONE, OK)]


def test_every_status(rig):
    """OK, RANGE, OP, HELD, NOT_HELD here; BUSY: a READ of a remote page on the ring."""
    rig.bring_up()
    for page, op in ((0, READ), (256, READ), (0xFFFFFFF, WRITE), (0, 0), (0, 4), (0, 0xF),
                     (0, READ), (4, RELEASE), (0, RELEASE), (0, RELEASE), (1, READ),
                     (1, READ), (1, WRITE), (1, RELEASE)):
        rig.command(page, op)
    rig.q.clock_step(10**6)
    assert rig.responses() == [
        resp(0, DONE, OK), resp(256, DONE, R.PUMA2_ST_RANGE),
        resp(0xFFFFFFF, DONE, R.PUMA2_ST_RANGE), resp(0, DONE, R.PUMA2_ST_OP),
        resp(0, DONE, R.PUMA2_ST_OP), resp(0, DONE, R.PUMA2_ST_OP),
        resp(0, DONE, R.PUMA2_ST_HELD),
        resp(4, R.PUMA2_KIND_REFUSED, R.PUMA2_ST_NOT_HELD),
        resp(0, R.PUMA2_KIND_REFUSED, R.PUMA2_ST_NOT_HELD),       # the second RELEASE
        resp(1, DONE, R.PUMA2_ST_BUSY), resp(1, DONE, R.PUMA2_ST_BUSY),
        resp(1, R.PUMA2_KIND_REFUSED, R.PUMA2_ST_NOT_HELD)]
    # the one REQ for page 1 went to its manager, board 1
    frames = rig.wait_frames(1)
    assert [(f["dst"], f["type"], f["op"], f["page"], f["from_"]) for f in frames] == \
        [(1, R.PUMA2_MSG_REQ, READ, 1, 0)]


def test_local_read_write_release(rig):
    """Pages 0, 4, 8 ... are managed and owned here: READ and WRITE are answered with no
    frame, BAR1 stores go in while the host holds the page for writing, and only then."""
    t = rig.bring_up()
    rig.command(4, READ)
    done = t + vme_ns(DEFAULTS, 4) + DEFAULTS["request"]
    rig.q.clock_set(done - 1)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 0
    rig.q.clock_set(done)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 1
    assert rig.responses() == [resp(4, DONE, OK)]
    rig.q.write(4, MEM + 4 * PAGE, 0xAA)
    refused(rig, R.PUMA2_ERR_NOT_WRITABLE)
    rig.command(4, WRITE)                            # an upgrade
    rig.q.clock_step(10**5)
    assert rig.responses() == [resp(4, DONE, OK)]
    data = bytes((i * 31 + 7) & 0xFF for i in range(PAGE))
    rig.fill(4, data)
    for size in (1, 2, 8):
        rig.q.write(size, MEM + 4 * PAGE + 16, 0x0102030405060708 & ((1 << 8 * size) - 1))
    data = data[:16] + bytes([8, 7, 6, 5, 4, 3, 2, 1]) + data[24:]
    assert rig.page(4) == data
    assert rig.reg(R.PUMA2_REG_IRQ_STATUS) & R.PUMA2_IRQ_ERROR == 0
    rig.command(4, WRITE)
    rig.command(4, RELEASE)
    rig.q.clock_step(10**7)                         # the bus had the page's 512 stores
    assert rig.responses() == [resp(4, DONE, R.PUMA2_ST_HELD)]
    rig.q.write(4, MEM + 4 * PAGE, 0)
    refused(rig, R.PUMA2_ERR_NOT_WRITABLE)
    assert rig.page(4) == data
    assert rig.fabric.of_type(wire.FRAME) == []
    for r in (R.PUMA2_REG_PAGES_IN, R.PUMA2_REG_PAGES_OUT, R.PUMA2_REG_MSGS_IN,
              R.PUMA2_REG_MSGS_OUT, R.PUMA2_REG_INVALIDATED):
        assert rig.reg(r) == 0
    assert rig.counter64(R.PUMA2_REG_NET_NS_LO) == 0


@pytest.mark.parametrize("p", [DEFAULTS, dict(DEFAULTS, vme_overhead=0, vme_rate=3_000_000),
                               dict(DEFAULTS, vme_overhead=777, vme_rate=10**12)],
                         ids=["defaults", "rounded", "overhead"])
def test_every_access_costs_its_vme_transactions(artifacts, tmp_path, p):
    """ceil(bytes / 4) transactions of vme-overhead-ns + 4 bytes at vme-rate (rounded up
    to a ns) for every access to either BAR, refused ones too, counted in BUS_NS; a
    command's decoding starts when the last transaction before it and its own end."""
    rig = Rig(artifacts, tmp_path, props=props(p))
    try:
        t = rig.bring_up()
        one = p["vme_overhead"] + -(-4 * 10**9 // p["vme_rate"])
        assert vme_ns(p, 4) == one
        before = rig.counter64(R.PUMA2_REG_BUS_NS_LO)           # 2 register reads
        for size in (1, 2, 4, 8):
            rig.q.read(size, MEM + 8)
        rig.q.write(8, MEM + 8, 0)                              # refused: 2 transactions
        rig.q.read(2, CTRL)                                     # refused: 1
        after = rig.counter64(R.PUMA2_REG_BUS_NS_LO)
        # those 8 transactions, BUS_NS_HI after `before` and BUS_NS_LO for `after`
        assert after - before == (1 + 1 + 1 + 2 + 2 + 1 + 2) * one
        # the bus is a queue: 12 transactions so far since t, then the CMD store
        rig.command(0, READ)
        done = t + 13 * one + p["request"]
        rig.q.clock_set(done - 1)
        assert rig.q.readl(CTRL + R.PUMA2_REG_RESP_COUNT) == 0
        rig.q.clock_set(done)
        assert rig.q.readl(CTRL + R.PUMA2_REG_RESP_COUNT) == 1
    finally:
        rig.close()
