"""qtest: the PUMA-II board in a snapshot (QMP migrate to a file, -incoming from it): its
registers, counters, page table (copies, holds, the manager's owners) and board memory
come back; a stream with a bad page entry or register is refused by post_load, naming
it; a board with a transaction in flight refuses to be saved, naming it, and goes on."""
import pytest
from p2_rig import MEM, PAGE, Rig
from snapshots import corruption_test, resume, save, save_completed

from retrolink.qtest.puma2_regs import R, resp, wire_frame

T = 3_000_000
SECTION = "retrolink-puma2"
READ, WRITE = R.PUMA2_OP_READ, R.PUMA2_OP_WRITE
DATA = bytes((i * 13 + 5) & 0xFF for i in range(PAGE))
REGS = ("PUMA2_REG_CTRL", "PUMA2_REG_STATUS", "PUMA2_REG_IRQ_STATUS", "PUMA2_REG_IRQ_MASK",
        "PUMA2_REG_ERROR", "PUMA2_REG_NUM_NODES", "PUMA2_REG_SPACE_PAGES",
        "PUMA2_REG_CMD_FREE", "PUMA2_REG_RESP_COUNT", "PUMA2_REG_PAGES_IN",
        "PUMA2_REG_PAGES_OUT", "PUMA2_REG_MSGS_IN", "PUMA2_REG_MSGS_OUT",
        "PUMA2_REG_INVALIDATED")


def registers(rig) -> dict:
    regs = {n: rig.reg(getattr(R, n)) for n in REGS}
    regs["NET_NS"] = rig.counter64(R.PUMA2_REG_NET_NS_LO)
    return regs


@pytest.fixture(scope="module")
def snapshot(artifacts, tmp_path_factory):
    """A board at T after a remote READ of page 1 (held), a local WRITE of page 4 (held,
    written), page 8 given away to board 3 for writing, one response left in the FIFO and
    a refused store; saved. The state file and its registers."""
    tmp = tmp_path_factory.mktemp("puma2-snapshot")
    frames = [(2_100_000, 1, wire_frame(R.PUMA2_MSG_PAGE, 1, 0, op=READ, data=DATA)),
              (2_200_000, 3, wire_frame(R.PUMA2_MSG_REQ, 8, 3, op=WRITE)),
              (2_500_000, 3, wire_frame(R.PUMA2_MSG_CONFIRM, 8, 3, op=WRITE))]
    rig = Rig(artifacts, tmp, name="src", qmp=True, frames=frames)
    try:
        rig.bring_up()
        rig.command(1, READ)
        rig.command(4, WRITE)
        rig.q.clock_set(2_090_000)
        rig.fill(4, DATA[::-1])
        rig.q.clock_set(T - 200_000)
        assert rig.responses()[:1] == [resp(4, R.PUMA2_KIND_DONE, R.PUMA2_ST_OK)]
        rig.command(0, READ)
        rig.q.write(4, MEM + 5 * PAGE, 1)                       # refused: NOT_WRITABLE
        rig.q.clock_set(T)
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 1 and rig.reg(R.PUMA2_REG_PAGES_OUT) == 1
        state = tmp / "puma2.state"
        regs = registers(rig)
        save_completed(rig.q, state, rig.log)
    finally:
        rig.close()
    return state, regs


def test_state_survives_a_snapshot(artifacts, tmp_path, snapshot):
    state, regs = snapshot
    rig = Rig(artifacts, tmp_path, name="dst", qmp=True, incoming=state)
    try:
        resume(rig.q)
        rig.q.clock_set(T)
        assert registers(rig) == regs
        assert rig.page(1) == DATA and rig.page(4) == DATA[::-1]
        assert rig.responses() == [resp(0, R.PUMA2_KIND_DONE, R.PUMA2_ST_OK)]
        # the holds came back: page 4 takes stores, 1 and 0 are held for reading, page 8
        # is board 3's (this board is its manager: a READ is forwarded to board 3)
        rig.q.write(4, MEM + 4 * PAGE, 0xDEADBEEF)
        assert rig.reg(R.PUMA2_REG_ERROR) == R.PUMA2_ERR_NOT_WRITABLE      # as saved
        assert rig.q.read(4, MEM + 4 * PAGE) == 0xDEADBEEF
        for page, op in ((4, WRITE), (1, READ), (0, READ), (8, READ)):
            rig.command(page, op)
        rig.q.clock_set(T + 10**7)
        assert rig.responses() == [resp(p, R.PUMA2_KIND_DONE, R.PUMA2_ST_HELD)
                                   for p in (4, 1, 0)]
        fwd = [f for f in rig.wait_frames(1) if f["type"] == R.PUMA2_MSG_FWD]
        assert [(f["dst"], f["page"], f["from_"], f["op"]) for f in fwd] == [(3, 8, 0, READ)]
    finally:
        rig.close()


CORRUPTIONS = {
    "access": (("pages", 1, "access"), 1, 7, "page 1 has access 7, hold 1, owner 0"),
    "hold": (("pages", 5, "hold"), 0, 2, "page 5 has access 0, hold 2, owner 0"),
    "copyset": (("pages", 0, "copyset"), 0, 0x10, "page 0 has copy set 0x10"),
    "owner": (("pages", 3, "owner"), 3, 4, "page 3's manager names node 4 or 3"),
    "waiting": (("pages", 2, "wait_read"), 0, 1, "page 2 has work in flight"),
    "pending": (("pages", 6, "pending"), 0, 2, "page 6 has work in flight"),
    "ctrl": (("ctrl",), R.PUMA2_CTRL_ENABLE, 3, "ctrl 0x3 has bits other than ENABLE"),
    "error": (("error",), R.PUMA2_ERR_NOT_WRITABLE, 9, "error 9 is not a PUMA2_ERR_*"),
}


test_a_stream_with_a_bad_page_entry_is_refused = corruption_test(CORRUPTIONS, SECTION, Rig)


def test_a_board_with_a_transaction_in_flight_refuses_a_save_and_goes_on(artifacts,
                                                                        tmp_path):
    rig = Rig(artifacts, tmp_path, name="src", qmp=True, step=100_000)
    try:
        rig.bring_up()
        rig.command(2, READ)
        rig.q.clock_set(T)
        status = save(rig.q, tmp_path / "puma2.state")
        assert status["status"] == "failed", status
        assert ("retrolink-puma2 node 0: cannot save the board with work in flight; 1 pages "
                "in a transaction") in rig.log.read_text()
        assert rig.q.qmp("cont") == {"return": {}}
        rig.deliver(T + 10_000, 2, wire_frame(R.PUMA2_MSG_PAGE, 2, 0, op=READ, data=DATA))
        rig.q.clock_set(T + 10**6)
        assert rig.responses() == [resp(2, R.PUMA2_KIND_DONE, R.PUMA2_ST_OK)]
        assert rig.page(2) == DATA
        assert save(rig.q, tmp_path / "puma2.state")["status"] == "completed"
    finally:
        rig.close()
