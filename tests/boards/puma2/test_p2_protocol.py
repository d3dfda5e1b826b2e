"""qtest: the PUMA-II board in the consistency protocol, the fake ring playing boards 1..3
(proto/puma2.h): a remote fetch, a WRITE that invalidates copies, RECALLs and deferred
messages, malformed and unexpected frames, CTRL_RESET; every time to the ns against a
model of the components, computed here from their description:
- each VME access costs ceil(bytes / 4) x (vme-overhead-ns + 4 bytes at vme-rate);
- a command is decoded request-ns after its CMD store's bus transfer ends, a message
  handled request-ns after its last byte arrives, the controller one job at a time;
- a page arriving then costs the copy engine 4096 bytes at copy-rate, and a page sent
  costs it the same before the frame leaves (one page at a time)."""
import pytest
from p2_rig import DEFAULTS, PAGE, Rig, copy_ns, props, vme_ns

from retrolink.qtest.puma2_regs import R, resp, wire_frame

READ, WRITE, RELEASE = R.PUMA2_OP_READ, R.PUMA2_OP_WRITE, R.PUMA2_OP_RELEASE
DONE, RECALL, OK = R.PUMA2_KIND_DONE, R.PUMA2_KIND_RECALL, R.PUMA2_ST_OK
REQ, FWD, PAGE_MSG, INV, INV_ACK, CONFIRM = (R.PUMA2_MSG_REQ, R.PUMA2_MSG_FWD,
                                             R.PUMA2_MSG_PAGE, R.PUMA2_MSG_INV,
                                             R.PUMA2_MSG_INV_ACK, R.PUMA2_MSG_CONFIRM)
SLOW = dict(DEFAULTS, request=3000, copy_rate=20_000_000, vme_overhead=300, vme_rate=8_000_000)
DATA = bytes((i * 37 + 11) & 0xFF for i in range(PAGE))


def summary(frames):
    return [(f["time"], f["dst"], f["type"], f["op"], f["page"], f["from_"], f["copyset"],
             len(f["data"])) for f in frames]


def first_req_at(rig, when: int) -> None:
    """The board's first frame, a READ REQ of page 1 to board 1, leaves exactly at `when`,
    not before what the board promised the ring (the link port would say so)."""
    rig.q.clock_set(when - 1)
    assert rig.frames() == []
    rig.q.clock_set(when)
    assert summary(rig.wait_frames(1)) == [(when, 1, REQ, READ, 1, 0, 0, 0)]
    assert "before the promise" not in rig.log.read_text()


def resp_at(rig, when: int, count: int = 1) -> None:
    """RESP_COUNT becomes count exactly at `when` (reading it moves no clock)."""
    rig.q.clock_set(when - 1)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == count - 1
    rig.q.clock_set(when)
    assert rig.reg(R.PUMA2_REG_RESP_COUNT) == count


@pytest.mark.parametrize("p", [DEFAULTS, SLOW], ids=["defaults", "slow"])
def test_remote_read_fetch(artifacts, tmp_path, p):
    """READ of page 1 (managed and owned by board 1): REQ to 1 when the command is
    decoded; board 1's PAGE with the bytes costs the controller and the copy engine, then
    the host's answer and the CONFIRM to the manager; BAR1 has the bytes."""
    t = 2_020_000
    req_at = t + vme_ns(p, 4) + p["request"]
    arrive = req_at + 40_000
    done = arrive + p["request"] + copy_ns(p)
    page = wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA)
    rig = Rig(artifacts, tmp_path, props=props(p), frames=[(arrive, 1, page)])
    try:
        assert rig.bring_up() == t
        rig.command(1, READ)
        rig.q.clock_set(req_at - 1)
        assert rig.frames() == []
        rig.q.clock_set(req_at)
        assert summary(rig.wait_frames(1)) == [(req_at, 1, REQ, READ, 1, 0, 0, 0)]
        resp_at(rig, done)
        assert summary(rig.wait_frames(2))[1] == (done, 1, CONFIRM, READ, 1, 0, 0, 0)
        assert rig.responses() == [resp(1, DONE, OK)]
        assert rig.page(1) == DATA
        assert [rig.reg(r) for r in (R.PUMA2_REG_PAGES_IN, R.PUMA2_REG_PAGES_OUT,
                                     R.PUMA2_REG_MSGS_IN, R.PUMA2_REG_MSGS_OUT)] == [1, 0, 1, 2]
        # waiting on the ring from the REQ to the answer, less the bus's one RESP_COUNT read
        assert rig.counter64(R.PUMA2_REG_NET_NS_LO) == done - req_at - vme_ns(p, 4)
        # the host holds it for reading: a store is refused; RELEASE sends nothing
        rig.q.write(4, 0xC1000000 + PAGE, 1)
        assert rig.reg(R.PUMA2_REG_ERROR) == R.PUMA2_ERR_NOT_WRITABLE
        rig.command(1, RELEASE)
        rig.command(1, READ)                # its copy is still valid: no frame
        rig.q.clock_step(10**6)
        assert rig.responses() == [resp(1, DONE, OK)] and len(rig.frames()) == 2
    finally:
        rig.close()


def test_write_invalidates_every_copy_then_finishes(artifacts, tmp_path):
    """WRITE of page 2 (manager and owner board 2, copies at 1 and 3): board 2's PAGE
    hands ownership over with the copy set; INV to 1 and 3 when it is handled; the
    answer and the CONFIRM when the second INV_ACK has been handled."""
    p = DEFAULTS
    t = 2_020_000
    req_at = t + vme_ns(p, 4) + p["request"]
    arrive = req_at + 30_000
    handled = arrive + p["request"] + copy_ns(p)
    ack1, ack3 = handled + 20_000, handled + 20_500       # the second waits for the first
    done = max(ack3, ack1 + p["request"]) + p["request"]
    frames = [(arrive, 2, wire_frame(PAGE_MSG, 2, 0, op=WRITE, copyset=0b1010, data=DATA)),
              (ack1, 1, wire_frame(INV_ACK, 2, 1)), (ack3, 3, wire_frame(INV_ACK, 2, 3))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.command(2, WRITE)
        rig.q.clock_set(handled)
        assert summary(rig.wait_frames(3)) == [
            (req_at, 2, REQ, WRITE, 2, 0, 0, 0), (handled, 1, INV, 0, 2, 0, 0, 0),
            (handled, 3, INV, 0, 2, 0, 0, 0)]
        resp_at(rig, done)
        assert summary(rig.wait_frames(4))[3] == (done, 2, CONFIRM, WRITE, 2, 0, 0, 0)
        assert rig.responses() == [resp(2, DONE, OK)]
        assert rig.page(2) == DATA
        rig.q.write(8, 0xC1000000 + 2 * PAGE, 0x1122334455667788)
        assert rig.reg(R.PUMA2_REG_ERROR) == 0
        assert rig.reg(R.PUMA2_REG_MSGS_IN) == 3 and rig.reg(R.PUMA2_REG_MSGS_OUT) == 4
    finally:
        rig.close()


def test_a_forward_for_a_held_page_is_deferred_until_release(artifacts, tmp_path):
    """Board 0 owns page 4 and the host holds it for writing. Board 3 asks board 0 (the
    manager) for it: the forward to the owner (itself) waits, a RECALL comes; the RELEASE
    lets it go: the copy engine reads the page (the host's bytes), then the PAGE leaves,
    with ownership; the CONFIRM frees the manager."""
    p = DEFAULTS
    ask = 2_200_000
    recall_at = ask + p["request"]
    rig = Rig(artifacts, tmp_path, step=50_000,
              frames=[(ask, 3, wire_frame(REQ, 4, 3, op=WRITE))])
    try:
        t = rig.bring_up()
        rig.command(4, WRITE)
        rig.q.clock_set(t + 100_000)
        assert rig.responses() == [resp(4, DONE, OK)]
        rig.fill(4, DATA)
        rig.q.clock_set(ask + 10**6)              # the bus's 512 stores, then the REQ
        assert rig.responses() == [resp(4, RECALL, OK)]
        assert rig.frames() == []
        t = rig.q.clock_set(ask + 2 * 10**6)
        rig.command(4, RELEASE)
        sent = t + vme_ns(p, 4) + p["request"] + copy_ns(p)
        rig.q.clock_set(sent)
        f = rig.wait_frames(1)
        assert summary(f) == [(sent, 3, PAGE_MSG, WRITE, 4, 3, 0, PAGE)]
        assert f[0]["data"] == DATA and f[0]["flags"] == R.PUMA2_MSG_F_DATA
        assert rig.reg(R.PUMA2_REG_PAGES_OUT) == 1
        # board 3 owns it now: this board has no copy, a WRITE goes to the manager (here),
        # which waits for board 3's CONFIRM before it forwards to board 3
        rig.command(4, WRITE)
        rig.q.clock_set(sent + 10**6)
        assert rig.frames()[1:] == []
        rig.deliver(sent + 10**6, 3, wire_frame(CONFIRM, 4, 3, op=WRITE))
        rig.q.clock_set(sent + 2 * 10**6)
        assert summary(rig.wait_frames(2))[1][1:] == (3, FWD, WRITE, 4, 0, 0, 0)
        assert rig.responses() == []
    finally:
        rig.close()


def test_an_invalidation_of_a_held_copy_is_deferred_until_release(artifacts, tmp_path):
    """The host holds page 1 for reading (a copy from board 1); board 2, the new owner,
    invalidates it: RECALL; on RELEASE the copy goes and the INV_ACK leaves."""
    p = DEFAULTS
    inv = 2_500_000
    frames = [(2_100_000, 1, wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA)),
              (inv, 2, wire_frame(INV, 1, 2))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.command(1, READ)
        rig.q.clock_set(inv + p["request"] - 1)
        assert rig.responses() == [resp(1, DONE, OK)]
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 0
        rig.q.clock_set(inv + p["request"])
        assert rig.responses() == [resp(1, RECALL, OK)]
        t = rig.q.clock_set(3_000_000)
        rig.command(1, RELEASE)
        acked = t + vme_ns(p, 4) + p["request"]
        rig.q.clock_set(acked)
        assert summary(rig.wait_frames(3))[2] == (acked, 2, INV_ACK, 0, 1, 0, 0, 0)
        assert rig.reg(R.PUMA2_REG_INVALIDATED) == 1
        # no copy now: a READ asks the manager again
        rig.command(1, READ)
        rig.q.clock_step(10**6)
        assert summary(rig.wait_frames(4))[3][1:5] == (1, REQ, READ, 1)
    finally:
        rig.close()


MALFORMED = {
    "short": (b"\x01" * 15, "shorter than the header"),
    "long": (wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA + b"x"), "longer than a page"),
    "type 0": (wire_frame(0, 1, 0, op=READ), "unknown type"),
    "type 7": (wire_frame(7, 1, 0, op=READ), "unknown type"),
    "page": (wire_frame(REQ, 256, 1, op=READ), "page outside the shared space"),
    "from": (wire_frame(REQ, 1, 4, op=READ), "board outside the ring"),
    "copyset": (wire_frame(PAGE_MSG, 1, 0, op=WRITE, copyset=0x10, data=DATA),
                "board outside the ring"),
    "op": (wire_frame(REQ, 4, 1, op=3), "bad op"),
    "flags": (wire_frame(REQ, 4, 1, op=READ, flags=2), "bad flags"),
    "data flag": (wire_frame(REQ, 4, 1, op=READ, flags=1), "bad flags"),
    "length": (wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA[:100]), "bad length"),
    "no data": (wire_frame(PAGE_MSG, 1, 0, op=READ, flags=1), "bad length"),
}
UNEXPECTED = {
    "REQ not managed here": (1, wire_frame(REQ, 1, 1, op=READ),
                             "a request for a page this board does not manage"),
    "REQ from another": (1, wire_frame(REQ, 4, 2, op=READ), "a second request"),
    "FWD not from the manager": (2, wire_frame(FWD, 4, 2, op=READ),
                                 "a forward for a page this board does not own"),
    "FWD of a page not owned": (1, wire_frame(FWD, 1, 2, op=READ),
                                "a forward for a page this board does not own"),
    "PAGE not asked for": (1, wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA),
                           "a page this board did not ask for"),
    "INV of an owned page": (2, wire_frame(INV, 4, 2), "an invalidation of a page this board"),
    "INV_ACK": (2, wire_frame(INV_ACK, 4, 2), "an acknowledgement nobody waits for"),
    "CONFIRM": (1, wire_frame(CONFIRM, 4, 1, op=READ), "a confirmation of no transaction"),
}


def test_malformed_and_unexpected_frames_are_dropped_with_a_warning(artifacts, tmp_path):
    """Each is dropped and named in the log; nothing changes: no frame, no response, the
    pages still where they were (a READ of page 4 is local, of page 1 asks board 1)."""
    at = 2_100_000
    frames = [(at + i * 10_000, 1, data) for i, (data, _) in enumerate(MALFORMED.values())]
    frames += [(at + 500_000 + i * 10_000, src, data)
               for i, (src, data, _) in enumerate(UNEXPECTED.values())]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.q.clock_set(at + 2_000_000)
        log = rig.log.read_text()
        for data, why in MALFORMED.values():
            assert f"dropped a malformed frame from node 1 ({len(data)} bytes: {why})" in log, \
                (why, log[-3000:])
        for src, data, why in UNEXPECTED.values():
            assert f"retrolink-puma2 node 0: dropped {why}" in log, (why, log[-3000:])
        assert rig.frames() == [] and rig.reg(R.PUMA2_REG_RESP_COUNT) == 0
        assert rig.reg(R.PUMA2_REG_MSGS_IN) == len(UNEXPECTED)
        assert rig.reg(R.PUMA2_REG_PAGES_IN) == 0
        rig.command(4, WRITE)
        rig.command(1, READ)
        rig.q.clock_step(10**6)
        assert rig.responses() == [resp(4, DONE, OK)]
        assert [(f["dst"], f["type"], f["page"]) for f in rig.wait_frames(1)] == [(1, REQ, 1)]
    finally:
        rig.close()


def test_ctrl_reset_releases_holds_and_orphans_pending_commands(artifacts, tmp_path):
    """The host holds page 4 for writing; board 3's REQ for it is deferred (RECALL); a
    READ of page 1 is on the ring. CTRL_RESET: the FIFOs empty, the hold goes and the
    deferred forward goes on (the page leaves for board 3), and page 1's PAGE, when it
    comes, is taken and confirmed with no answer and no hold."""
    p = DEFAULTS
    rig = Rig(artifacts, tmp_path, frames=[(2_100_000, 3, wire_frame(REQ, 4, 3, op=WRITE)),
                                           (2_600_000, 1, wire_frame(PAGE_MSG, 1, 0, op=READ,
                                                                     data=DATA))])
    try:
        t = rig.bring_up()
        rig.command(4, WRITE)
        rig.command(1, READ)
        rig.q.clock_set(2_200_000)
        assert rig.responses() == [resp(4, DONE, OK), resp(4, RECALL, OK)]
        rig.command(8, READ)
        rig.command(0, READ)
        assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH - 2
        t = 2_200_000
        rig.set_reg(R.PUMA2_REG_CTRL, R.PUMA2_CTRL_RESET)
        assert rig.reg(R.PUMA2_REG_CTRL) == 0 and rig.reg(R.PUMA2_REG_STATUS) == 0
        assert rig.reg(R.PUMA2_REG_CMD_FREE) == R.PUMA2_CMD_DEPTH
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 0
        # the release is the controller's job after the store (the 7th access since t),
        # then the copy engine reads the page
        sent = t + 7 * vme_ns(p, 4) + p["request"] + copy_ns(p)
        rig.q.clock_set(sent - 1)
        assert len(rig.wait_frames(1)) == 1
        rig.q.clock_set(sent)
        f = rig.wait_frames(2)
        assert summary(f)[1] == (sent, 3, PAGE_MSG, WRITE, 4, 3, 0, PAGE)
        rig.q.clock_set(2_600_000 + p["request"] + copy_ns(p))
        assert summary(rig.wait_frames(3))[2][1:] == (1, CONFIRM, READ, 1, 0, 0, 0)
        assert rig.page(1) == DATA
        rig.set_reg(R.PUMA2_REG_CTRL, R.PUMA2_CTRL_ENABLE)
        rig.q.clock_step(10**6)                  # after the bus's 512 loads of the page
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 0
        # nothing is held: page 1's copy is readable again, page 4 went to board 3
        rig.command(1, READ)
        rig.command(1, RELEASE)
        rig.command(4, RELEASE)
        rig.q.clock_step(10**6)
        assert rig.responses() == [resp(1, DONE, OK),
                                   resp(4, R.PUMA2_KIND_REFUSED, R.PUMA2_ST_NOT_HELD)]
    finally:
        rig.close()


@pytest.mark.parametrize("how", ["reset", "disable"])
def test_a_reset_lets_deferred_messages_go_through_the_controller(artifacts, tmp_path, how):
    """A deferred INV let go by CTRL_RESET (or by clearing ENABLE) is the controller's
    job like a RELEASE: its INV_ACK leaves request-ns after the CTRL store's bus transfer
    ends, never before what the board promised the ring at its last sync point."""
    p = DEFAULTS
    inv = 2_500_000
    frames = [(2_100_000, 1, wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA)),
              (inv, 2, wire_frame(INV, 1, 2))]
    rig = Rig(artifacts, tmp_path, frames=frames, step=100_000)
    try:
        rig.bring_up()
        rig.command(1, READ)
        rig.q.clock_set(inv + p["request"])
        assert rig.responses() == [resp(1, DONE, OK), resp(1, RECALL, OK)]
        t = rig.q.clock_set(3_000_000)              # a sync point: the ring has a promise
        rig.set_reg(R.PUMA2_REG_CTRL, R.PUMA2_CTRL_RESET if how == "reset" else 0)
        acked = t + vme_ns(p, 4) + p["request"]
        rig.q.clock_set(acked - 1)
        assert len(rig.wait_frames(2)) == 2
        rig.q.clock_set(acked)
        assert summary(rig.wait_frames(3))[2] == (acked, 2, INV_ACK, 0, 1, 0, 0, 0)
        assert rig.reg(R.PUMA2_REG_INVALIDATED) == 1
        assert "before the promise" not in rig.log.read_text()
    finally:
        rig.close()


def test_a_command_is_decoded_only_after_its_own_store(artifacts, tmp_path):
    """Two commands, the second written while the controller decodes the first: the
    second is decoded request-ns after its own CMD store's bus transfer ends (not when
    the controller is done with the first), so its REQ leaves then, as promised."""
    p = DEFAULTS
    rig = Rig(artifacts, tmp_path, step=1000)
    try:
        t = rig.bring_up()
        rig.command(0, READ)                        # local: decoded at t + 700 + 2000
        t2 = rig.q.clock_set(t + 2500)
        rig.command(1, READ)                        # its store ends at t2 + 700
        req_at = max(t + vme_ns(p, 4) + p["request"], t2 + vme_ns(p, 4)) + p["request"]
        first_req_at(rig, req_at)
    finally:
        rig.close()


@pytest.mark.parametrize("p", [DEFAULTS, SLOW], ids=["defaults", "slow"])
def test_the_controller_and_the_copy_engine_take_one_job_at_a_time(artifacts, tmp_path, p):
    """Board 3 asks board 0 (manager and owner of page 4) for a read copy; board 1's
    PAGE for this host's READ of page 1 arrives just after. The REQ has the controller,
    then the copy engine reads page 4 for the PAGE to board 3; the arriving page waits
    for the controller, then for the copy engine."""
    ask = 2_500_000
    arrive = ask + p["request"] // 4
    frames = [(ask, 3, wire_frame(REQ, 4, 3, op=READ)),
              (arrive, 1, wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA))]
    rig = Rig(artifacts, tmp_path, props=props(p), frames=frames)
    try:
        rig.bring_up()
        rig.command(1, READ)
        sent = ask + p["request"] + copy_ns(p)
        ctrl_free = ask + 2 * p["request"]              # the PAGE's controller job ends
        done = max(ctrl_free, sent) + copy_ns(p)
        rig.q.clock_set(done - 1)
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 0
        rig.q.clock_set(done)
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == 1
        assert summary(rig.wait_frames(3))[1:] == [
            (sent, 3, PAGE_MSG, READ, 4, 3, 0, PAGE), (done, 1, CONFIRM, READ, 1, 0, 0, 0)]
        assert rig.page(1) == DATA
    finally:
        rig.close()



def test_pages_without_bytes_cost_no_copy(artifacts, tmp_path):
    """The host upgrades its read copy of page 1: board 1 (manager and old owner) hands
    the page over with no bytes (this board has them) and board 2's copy to invalidate;
    that PAGE costs the controller only, and the INV leaves then. As the owner, this
    board sends board 2 a read copy (the copy engine first), then, when board 1 forwards
    board 2's WRITE, the page with no bytes, at once."""
    p = DEFAULTS
    t_write = 2_400_000
    no_bytes = t_write + 50_000
    ack = no_bytes + 40_000
    fwd_read, fwd_write = 4_000_000, 4_200_000        # after the page read through BAR1
    frames = [(2_100_000, 1, wire_frame(PAGE_MSG, 1, 0, op=READ, data=DATA)),
              (no_bytes, 1, wire_frame(PAGE_MSG, 1, 0, op=WRITE, copyset=0b0100)),
              (ack, 2, wire_frame(INV_ACK, 1, 2)),
              (fwd_read, 1, wire_frame(FWD, 1, 2, op=READ)),
              (fwd_write, 1, wire_frame(FWD, 1, 2, op=WRITE))]
    rig = Rig(artifacts, tmp_path, frames=frames)
    try:
        rig.bring_up()
        rig.command(1, READ)
        rig.q.clock_set(t_write)
        assert rig.responses() == [resp(1, DONE, OK)]
        rig.command(1, WRITE)                       # an upgrade of a copy: to the manager
        rig.q.clock_set(no_bytes + p["request"])
        assert summary(rig.wait_frames(4))[3] == (no_bytes + p["request"], 2, INV, 0, 1, 0,
                                                  0, 0)
        rig.q.clock_set(ack + p["request"])
        assert rig.responses() == [resp(1, DONE, OK)]
        assert rig.page(1) == DATA and rig.reg(R.PUMA2_REG_PAGES_IN) == 1
        rig.command(1, RELEASE)
        rig.q.clock_set(fwd_write + p["request"])
        assert summary(rig.wait_frames(7))[4:] == [
            (ack + p["request"], 1, CONFIRM, WRITE, 1, 0, 0, 0),
            (fwd_read + p["request"] + copy_ns(p), 2, PAGE_MSG, READ, 1, 2, 0, PAGE),
            (fwd_write + p["request"], 2, PAGE_MSG, WRITE, 1, 2, 0, 0)]
        assert rig.reg(R.PUMA2_REG_PAGES_OUT) == 1
    finally:
        rig.close()


def test_a_command_held_back_by_a_full_response_fifo_goes_after_the_pop(artifacts,
                                                                       tmp_path):
    """128 answers waiting, a READ of a remote page held back: popping one lets it go;
    its REQ leaves request-ns after the pop's bus transfer ends, not before what the
    board promised the ring."""
    p = DEFAULTS
    rig = Rig(artifacts, tmp_path, step=50_000)
    try:
        rig.bring_up()
        for i in range(R.PUMA2_RESP_DEPTH):
            if i % R.PUMA2_CMD_DEPTH == 0:
                rig.q.clock_step(10**6)
            rig.command(300 + i, READ)              # RANGE
        rig.q.clock_step(10**6)
        rig.command(1, READ)
        t = rig.q.clock_set(2_000_000 * 3)          # a sync point
        assert rig.reg(R.PUMA2_REG_RESP_COUNT) == R.PUMA2_RESP_DEPTH
        assert rig.frames() == []
        t = rig.q.clock_set(t + 100_000)
        rig.reg(R.PUMA2_REG_RESP)
        req_at = t + vme_ns(p, 4) + p["request"]
        first_req_at(rig, req_at)
    finally:
        rig.close()
