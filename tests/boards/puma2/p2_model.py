"""An independent model of the PUMA-II boards' consistency protocol (proto/puma2.h: IVY
write-invalidate, page P's manager is board P mod N, every page starts owned and
writable at its manager, REQ / FWD / PAGE / INV / INV_ACK / CONFIRM), written from the
header's description, not from the C. It plays every board but board 0 (the device
under test): messages among its boards are handled at once, in order; a message to board
0 is handed to `send0`, and board 0's frames come in through receive(). Its boards'
hosts hold nothing: a request is answered when the protocol gives the access, and a
WRITE then writes new bytes into the page (the truth every copy must equal)."""
from collections import deque
from dataclasses import dataclass, field
from random import Random

from retrolink.qtest.puma2_regs import R, wire_frame

NONE, READ, WRITE = 0, R.PUMA2_OP_READ, R.PUMA2_OP_WRITE
PAGE = R.PUMA2_PAGE


@dataclass
class Page:
    """One page as one board sees it."""
    access: int = NONE
    data: bytes | None = None
    owner_here: bool = False
    copyset: set = field(default_factory=set)
    pending: int = 0            # this board's host request under way
    acks: int = 0               # INV_ACKs still to come (a WRITE under way here)
    # the manager's part
    owner: int = 0
    busy: int | None = None     # the requester of the transaction under way
    waiting: deque = field(default_factory=deque)


class Model:
    def __init__(self, nodes: int, pages: int, send0, rng: Random):
        """send0(src, frame bytes): a message for board 0."""
        self.nodes, self.pages, self.send0, self.rng = nodes, pages, send0, rng
        self.queue: deque = deque()
        self.boards = {b: {} for b in range(1, nodes)}
        self.truth = {p: bytes(PAGE) for p in range(pages)}
        self.completed: list[tuple[int, int, int]] = []     # (board, page, op)
        self.errors: list[str] = []

    def manager(self, page: int) -> int:
        return page % self.nodes

    def pg(self, b: int, page: int) -> Page:
        st = self.boards[b].get(page)
        if st is None:
            m = self.manager(page)
            st = self.boards[b][page] = Page(owner=m)
            if m == b:
                st.access, st.owner_here, st.data = WRITE, True, bytes(PAGE)
        return st

    # ---- the traffic ---------------------------------------------------------------
    def send(self, src: int, dst: int, type_: int, page: int, from_: int, op: int = 0,
             copyset: int = 0, data: bytes | None = None) -> None:
        if dst == 0:
            self.send0(src, wire_frame(type_, page, from_, op=op, copyset=copyset, data=data))
        else:
            self.queue.append((src, dst, type_, page, from_, op, copyset, data))

    def receive(self, dst: int, hdr: dict) -> None:
        """A frame board 0 sent to board dst."""
        self.queue.append((0, dst, hdr["type"], hdr["page"], hdr["from_"], hdr["op"],
                           hdr["copyset"], hdr["data"] or None))

    def run(self) -> None:
        while self.queue:
            self.handle(*self.queue.popleft())

    # ---- a board's host ------------------------------------------------------------
    def request(self, b: int, page: int, op: int) -> bool:
        """Board b's host wants the page for op; False if it has a request under way."""
        st = self.pg(b, page)
        if st.pending:
            return False
        if st.access >= op:
            self.complete(b, page, op)
            return True
        st.pending = op
        self.send(b, self.manager(page), R.PUMA2_MSG_REQ, page, b, op=op)
        return True

    def complete(self, b: int, page: int, op: int) -> None:
        st = self.pg(b, page)
        st.pending = 0
        self.completed.append((b, page, op))
        if op == WRITE:
            if st.access != WRITE:
                self.errors.append(f"board {b} completes a WRITE of page {page} with access "
                                   f"{st.access}")
            st.data = self.truth[page] = self.rng.randbytes(PAGE)

    # ---- the protocol ---------------------------------------------------------------
    def handle(self, src, b, type_, page, from_, op, copyset, data) -> None:
        st = self.pg(b, page)
        if type_ == R.PUMA2_MSG_REQ:                        # at the manager
            assert self.manager(page) == b
            if st.busy is not None:
                st.waiting.append((from_, op))
            else:
                self.forward(b, page, from_, op)
        elif type_ == R.PUMA2_MSG_FWD:                      # at the owner
            if not st.owner_here:
                self.errors.append(f"board {b} got a FWD of page {page} it does not own")
                return
            if from_ == b:
                self.start_write(b, page, st.copyset)
            elif op == READ:
                st.copyset.add(from_)
                st.access = READ
                self.send(b, from_, R.PUMA2_MSG_PAGE, page, from_, op=READ, data=st.data)
            else:
                copies = st.copyset - {from_}
                has_copy = from_ in st.copyset
                st.access, st.owner_here, st.copyset = NONE, False, set()
                self.send(b, from_, R.PUMA2_MSG_PAGE, page, from_, op=WRITE,
                          copyset=sum(1 << n for n in copies),
                          data=None if has_copy else st.data)
                st.data = None
        elif type_ == R.PUMA2_MSG_PAGE:                     # at the requester
            if st.pending != op:
                self.errors.append(f"board {b} got a PAGE of page {page} for op {op}, "
                                   f"pending {st.pending}")
                return
            if data is not None:
                st.data = bytes(data)
            elif st.access == NONE:
                self.errors.append(f"board {b} got a PAGE of page {page} with no bytes and "
                                   f"has no copy")
            if op == READ:
                st.access = READ
                self.complete(b, page, READ)
                self.send(b, self.manager(page), R.PUMA2_MSG_CONFIRM, page, b, op=READ)
            else:
                self.start_write(b, page, {n for n in range(self.nodes) if copyset >> n & 1})
        elif type_ == R.PUMA2_MSG_INV:                      # at a copy holder
            if st.owner_here:
                self.errors.append(f"board {b} (the owner) got an INV of page {page}")
            st.access, st.data = NONE, None
            self.send(b, from_, R.PUMA2_MSG_INV_ACK, page, b)
        elif type_ == R.PUMA2_MSG_INV_ACK:                  # at the new owner
            st.acks -= 1
            if st.acks < 0:
                self.errors.append(f"board {b} got an INV_ACK of page {page} it did not want")
            elif st.acks == 0:
                self.finish_write(b, page)
        elif type_ == R.PUMA2_MSG_CONFIRM:                  # at the manager
            if st.busy != src:
                self.errors.append(f"board {b} got a CONFIRM of page {page} from {src}, "
                                   f"busy with {st.busy}")
            if op == WRITE:
                st.owner = from_
            st.busy = None
            if st.waiting:
                self.forward(b, page, *st.waiting.popleft())
        else:
            self.errors.append(f"board {b} got a frame of type {type_}")

    def forward(self, b: int, page: int, from_: int, op: int) -> None:
        st = self.pg(b, page)
        st.busy = from_
        self.send(b, st.owner, R.PUMA2_MSG_FWD, page, from_, op=op)

    def start_write(self, b: int, page: int, copies: set) -> None:
        st = self.pg(b, page)
        copies = copies - {b}
        st.owner_here, st.copyset, st.access = True, set(), READ
        st.acks = len(copies)
        if not copies:
            self.finish_write(b, page)
        for n in sorted(copies):
            self.send(b, n, R.PUMA2_MSG_INV, page, b)

    def finish_write(self, b: int, page: int) -> None:
        st = self.pg(b, page)
        st.access = WRITE
        self.complete(b, page, WRITE)
        self.send(b, self.manager(page), R.PUMA2_MSG_CONFIRM, page, b, op=WRITE)

    # ---- what the test checks ----------------------------------------------------------
    def access(self, b: int, page: int) -> int:
        st = self.boards[b].get(page)
        return st.access if st else (WRITE if self.manager(page) == b else NONE)

    def pending(self) -> list[tuple[int, int, int]]:
        return [(b, p, st.pending) for b, pages in self.boards.items()
                for p, st in pages.items() if st.pending]
