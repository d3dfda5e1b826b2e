"""qtest: the real PUMA-II board as board 0 of a ring whose other boards are an
independent model of the protocol (p2_model.py): the fake ring hands the board's frames
to the model and the model's frames to the board. Random requests from every board
(seeded, reproducible): the test's host holds pages, writes into those it holds for
writing, answers RECALLs with RELEASE (not always at once) and lets go of pages on its
own. After every step, for every page: one writer or many readers, never both; every
copy the model holds, and every page the device's host holds (read through BAR1), has
the bytes of the last write; at the end every request of every board was answered."""
import random

import pytest
from p2_model import Model
from p2_rig import MEM, PAGE, Rig

from retrolink import wire
from retrolink.qtest.puma2_regs import R, parse_resp, parse_wire

READ, WRITE, RELEASE = R.PUMA2_OP_READ, R.PUMA2_OP_WRITE, R.PUMA2_OP_RELEASE
PAGES = 8                               # pages 0..7: each board manages some
SAMPLE = 64                             # bytes of a held page compared at each step


class Driver:
    """The device's host and the model's boards, stepped by one seeded generator."""

    def __init__(self, rig: Rig, seed: int, nodes: int):
        self.rig, self.rng, self.nodes = rig, random.Random(seed), nodes
        self.model = Model(nodes, PAGES, self.to_board, random.Random(seed + 1))
        self.seen = 0                   # the board's frames handed to the model
        self.wants: list[tuple[int, int, int]] = []     # model requests for the next sync
        self.hold = {}                  # page -> READ / WRITE: what the device's host holds
        self.asked = {}                 # page -> op: its commands not yet answered
        self.recalled = set()
        self.unsure = set()             # released while an upgrade was under way
        self.released_again = set()     # released again after its answer: maybe refused
        self.settling = {}              # page -> when that RELEASE is surely decoded
        self.t = 0
        self.answered = self.recalls = 0
        self.now = 0

    # the fake ring's side, at each sync point (under the rig's lock)
    def to_board(self, src: int, frame: bytes) -> None:
        self.rig.queue.append((self.now + 1000, src, frame))

    def react(self, rig: Rig, now: int) -> None:
        self.now = now
        frames = rig.fabric.of_type(wire.FRAME)
        for m in frames[self.seen:]:
            self.model.receive(m["dst"], parse_wire(m["payload"]))
        self.seen = len(frames)
        for b, page, op in self.wants:
            self.model.request(b, page, op)
        self.wants.clear()
        self.model.run()

    # the device's host
    def command(self, page: int, op: int) -> None:
        self.rig.command(page, op)
        if op == RELEASE:
            del self.hold[page]
            self.recalled.discard(page)
            if page in self.asked:
                # an upgrade under way: if the board granted it before it decoded this
                # RELEASE, the page is let go; if it waits on the ring, its answer will
                # hold the page. The answer cannot tell which: the host lets go again
                self.unsure.add(page)
        else:
            self.asked[page] = op

    def answers(self) -> None:
        for v in self.rig.responses():
            page, kind, status = parse_resp(v)
            if kind == R.PUMA2_KIND_RECALL:
                self.recalls += 1
                if page in self.hold:       # else it came before the RELEASE was decoded
                    self.recalled.add(page)
                continue
            if kind == R.PUMA2_KIND_REFUSED and page in self.released_again:
                assert status == R.PUMA2_ST_NOT_HELD, (page, kind, status)
                continue
            assert kind == R.PUMA2_KIND_DONE and status == R.PUMA2_ST_OK, (page, kind, status)
            op = self.asked.pop(page)
            self.answered += 1
            if page in self.unsure:
                self.unsure.discard(page)
                self.rig.command(page, RELEASE)         # held or not: not after this
                self.released_again.add(page)
                self.settling[page] = self.t + 1_000_000
                continue
            self.hold[page] = max(self.hold.get(page, 0), op)
            if op == WRITE:             # the host writes into it at once
                off = self.rng.randrange(0, PAGE, 8)
                val = self.rng.getrandbits(64)
                self.rig.q.write(8, MEM + page * PAGE + off, val)
                with self.rig.lock:
                    t = self.model.truth[page]
                    self.model.truth[page] = t[:off] + val.to_bytes(8, "little") + t[off + 8:]

    def step(self, quiet: bool = False) -> None:
        rng = self.rng
        r = rng.random()
        if not quiet and r < 0.3:
            page, op = rng.randrange(PAGES), rng.choice((READ, WRITE))
            held = self.hold.get(page, 0)
            if page not in self.asked and held != WRITE and held != op:
                self.command(page, op)
        elif not quiet and r < 0.6:
            with self.rig.lock:
                self.wants.append((rng.randrange(1, self.nodes), rng.randrange(PAGES),
                                   rng.choice((READ, WRITE))))
        for page in sorted(self.hold):
            if page in self.recalled and (quiet or rng.random() < 0.7) or \
                    (quiet or rng.random() < 0.1) and page not in self.asked:
                self.command(page, RELEASE)
        self.t = self.rig.q.clock_step(rng.choice((5_000, 20_000, 100_000, 400_000)))
        self.answers()

    def check(self) -> None:
        with self.rig.lock:
            model = self.model
            assert not model.errors, model.errors
            for page in range(PAGES):
                access = {b: model.access(b, page) for b in range(1, self.nodes)}
                # the device's hold is not known until a second RELEASE is decoded
                unknown = page in self.unsure or self.settling.get(page, 0) > self.t
                access[0] = 0 if unknown else self.hold.get(page, 0)
                writers = [b for b, a in access.items() if a == WRITE]
                readers = [b for b, a in access.items() if a == READ]
                assert len(writers) <= 1 and not (writers and readers), (page, access)
                for b in range(1, self.nodes):
                    if access[b]:
                        assert model.pg(b, page).data == model.truth[page], (page, b)
            truth = dict(model.truth)
        for page in self.hold:
            off = self.rng.randrange(0, PAGE - SAMPLE + 1, 8)
            assert self.rig.q.memread(MEM + page * PAGE + off, SAMPLE) == \
                truth[page][off:off + SAMPLE], (page, off)


@pytest.mark.parametrize("nodes,seed", [(4, 1), (4, 2), (4, 3), (2, 4), (6, 5)])
def test_the_board_keeps_the_protocol_with_a_model_of_the_others(artifacts, tmp_path, nodes,
                                                                 seed):
    driver = None

    def react(rig, now):
        driver.react(rig, now)

    rig = Rig(artifacts, tmp_path, nodes=nodes, step=10_000, react=react)
    try:
        driver = Driver(rig, seed, nodes)
        rig.bring_up()
        for _ in range(150):
            driver.step()
            driver.check()
        for _ in range(40):             # no new requests; every hold let go
            driver.step(quiet=True)
            driver.check()
            if not driver.asked and not driver.hold and not driver.model.pending():
                break
        assert not driver.asked and not driver.hold, (driver.asked, driver.hold)
        assert not driver.model.pending(), driver.model.pending()
        # every page's copies, the device's too (each read whole while held for reading)
        for page in range(PAGES):
            driver.command(page, READ)
            rig.q.clock_step(1_000_000)
            driver.answers()
            assert rig.page(page) == driver.model.truth[page], page
            driver.command(page, RELEASE)
        rig.q.clock_step(10**7)
        driver.answers()
        assert not driver.asked
        # it did go through the protocol's paths
        kinds = {parse_wire(m["payload"])["type"] for m in rig.fabric.of_type(wire.FRAME)}
        assert kinds == {R.PUMA2_MSG_REQ, R.PUMA2_MSG_FWD, R.PUMA2_MSG_PAGE, R.PUMA2_MSG_INV,
                         R.PUMA2_MSG_INV_ACK, R.PUMA2_MSG_CONFIRM}, kinds
        assert len(driver.model.completed) > 20 and driver.answered > 20
        assert driver.recalls > 3 and rig.reg(R.PUMA2_REG_INVALIDATED) > 1
        assert rig.reg(R.PUMA2_REG_PAGES_IN) > 5 and rig.reg(R.PUMA2_REG_PAGES_OUT) > 5
        log = rig.log.read_text()
        assert "dropped" not in log and "before the promise" not in log
    finally:
        rig.close()
