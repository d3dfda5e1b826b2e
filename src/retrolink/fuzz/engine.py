"""The fuzzing engine, the same for every board (the board's description: spec.BoardSpec).

One *execution* is a fresh QEMU (the ASan/UBSan build, -accel qtest) with the board on a
fake fabric, driven by a program drawn from a seeded generator, in the spirit of QEMU's
generic-fuzz target: register reads and writes of every width at in-range and
out-of-range offsets of every BAR, bulk window accesses, PCI configuration writes (BARs
moved, decoding switched off), MSI aimed anywhere (guest RAM, MMIO holes, beyond RAM, the
board's own registers, 2^64-1), clock steps, and the board's own sequences (descriptors,
doorbells). At every sync point the fake fabric answers with frames and link events the
board description makes up (valid, truncated, oversized, bad slots, tags and generations,
confirmations for nothing), from peers and non-peers, at times in and out of the grant,
now and then a malformed message, and a grant.

A *finding* is QEMU exiting abnormally, a sanitizer report in its output, a hang (no
qtest reply within HANG_S), or a malformed message from the board (fake_fabric.py's
checks and the board's check_frame). Each is written as a reproducer: the exact qtest
command lines and the fabric's replies to each sync point, which replay() runs again.
"""
import itertools
import json
import re
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

from retrolink import wire
from retrolink.fuzz.spec import NEVER, BoardSpec, FabricView, value
from retrolink.qtest.client import (
    PCI_CONFIG_ADDR, PCI_CONFIG_DATA, SIZES, Qtest, QtestClosed, QtestTimeout
)
from retrolink.qtest.fake_fabric import FakeFabric

HANG_S = 10                 # a command with no reply within this is a hang
MAX_OPS = 200               # generator operations per execution, at most
CLOCK_LIMIT = 1 << 62       # virtual time stays below this (qtest's clock is an int64)
SANITIZER_ENV = {
    # abort at the first report, so the reproducer ends at the command that caused it;
    # QEMU's exit-time leaks are not the board's
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1:halt_on_error=1:handle_abort=1",
    "UBSAN_OPTIONS": "halt_on_error=1:abort_on_error=1:print_stacktrace=1",
}
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error:",
                     "SUMMARY: UndefinedBehaviorSanitizer", "ERROR: LeakSanitizer")
MIB = 1 << 20
# where a device's own memory accesses (MSI, DMA) may be aimed: guest RAM (q35 default
# 128 MiB), MMIO holes, the q35 MMCONFIG window, IOAPIC, the MSI window, BIOS, beyond RAM
ANYWHERE = (0, 0x1000, 0xA0000, 128 * MIB - 4, 128 * MIB, 0xB0000000, 0xD0000000,
            0xFEC00000, 0xFEE00000, 0xFEE00FFC, 0xFFFFFFFC, 1 << 32, 1 << 40, (1 << 63) - 4,
            NEVER - 3, NEVER)
BAR_PLACES = (0xC0000000, 0xC1000000, 0xD0000000, 0xFEB00000, 0xE0000000)


class Stop(Exception):
    """End of an execution before its program did: a finding or the deadline."""


@dataclass
class Finding:
    kind: str           # crash, sanitizer, hang, fabric
    summary: str        # one line
    detail: str = ""    # QEMU's output around it

    def signature(self) -> str:
        """What identifies the bug across runs: the summary without numbers."""
        return self.kind + ": " + re.sub(r"0x[0-9a-f]+|\d+", "N", self.summary)


@dataclass
class Execution:
    """Everything needed to run one execution again, and what it found."""
    board: str
    seed: str
    config: dict                                    # QEMU arguments and the cluster
    commands: list = field(default_factory=list)    # qtest lines, in order
    replies: list = field(default_factory=list)     # per sync point: messages (hex)
    finding: Finding | None = None
    outcome: str = ""           # ok, refused (QEMU would not start), deadline, finding

    def save(self, path: Path) -> None:
        f = self.finding
        path.write_text(json.dumps({
            "board": self.board, "seed": self.seed, "config": self.config,
            "finding": f and {"kind": f.kind, "summary": f.summary, "detail": f.detail},
            "qtest": self.commands, "fabric_replies": self.replies}, indent=1) + "\n")

    @staticmethod
    def load(path: Path) -> "Execution":
        d = json.loads(path.read_text())
        f = d.get("finding")
        return Execution(d["board"], d["seed"], d["config"], d["qtest"], d["fabric_replies"],
                         Finding(**f) if f else None)


class FuzzFabric(FakeFabric):
    """The fake fabric of one execution: makes up its replies to each sync point (or
    replays recorded ones), records them, and checks the board's frames."""

    def __init__(self, path: Path, board: BoardSpec, config: dict, rng: Random,
                 script: list | None):
        self.board, self.rng, self.script = board, rng, script
        self.view = FabricView(rng, config["node"], config["nodes"], config["props"])
        self.replies: list[list[bytes]] = []
        self.command = 0            # the main thread's command count: bounds the syncs
        self.burst_of, self.burst = -1, 0
        self.seq = 0
        super().__init__(path, config["nodes"], config["first_grant"], self.reply)

    def reply(self, m: dict) -> list[bytes]:
        k = len(self.replies)
        if self.script is None:
            out = self.generate(m)
        else:
            out = [bytes.fromhex(x) for x in self.script[k]] if k < len(self.script) \
                else [wire.grant(self.view.node, NEVER)]
        self.replies.append(out)
        for o in out:
            if len(o) >= 48 and o[:4] == wire.MAGIC.to_bytes(4, "little"):
                d = wire.unpack(o)
                if d["type"] == wire.DELIVER:
                    self.view.delivered.append((d["src"], d["payload"]))
        return out

    def check_frame(self, m: dict) -> str | None:
        self.view.sent.append((m["dst"], m["payload"]))
        return self.board.check_frame(self.view, m) if self.board.check_frame else None

    # ---- what the fabric makes up --------------------------------------------------
    def generate(self, m: dict) -> list[bytes]:
        rng, node, t = self.rng, self.view.node, m["time"]
        if self.command != self.burst_of:
            self.burst_of, self.burst = self.command, 0
        self.burst += 1
        # grants grow within one command, so a long clock step takes few sync points
        step = rng.choice((1, 1000, 100_000, 1_000_000, 10_000_000)) << min(self.burst, 40)
        grant = NEVER if rng.random() < 0.01 or t + step >= 1 << 63 else t + step
        out = []
        for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 4))):
            r = rng.random()
            if r < 0.75 and self.board.frame:
                out.append(self.deliver(t, grant))
            elif r < 0.97:
                out.append(self.link(t, grant))
            else:
                out.append(self.junk(t))
        if rng.random() < 0.05:
            out.append(wire.grant(node, self.grant))      # a grant that does not advance
        out.append(wire.grant(node, grant))
        return out

    def when(self, t: int, grant: int) -> int:
        rng, r = self.rng, self.rng.random()
        if r < 0.6:
            return rng.randint(t, min(grant, t + 10**9))
        if r < 0.7:
            return t
        if r < 0.8:
            return max(0, t - rng.choice((1, 1000, 10**6)))          # in the past
        if r < 0.9:
            return min(grant, CLOCK_LIMIT) + rng.choice((1, 10**6, 10**9))
        return rng.choice((1 << 62, (1 << 63) - 1, 1 << 63, NEVER - 1, NEVER))

    def sender(self, src: int | None) -> int:
        r = self.rng.random()
        if r < 0.015:
            return self.view.node                                  # itself
        if r < 0.03:
            return self.rng.choice((self.view.nodes, 255, 1 << 31, 0xFFFFFFFF))
        return self.view.peer() if src is None else src

    def deliver(self, t: int, grant: int) -> bytes:
        src, payload = self.board.frame(self.view)
        if self.rng.random() < 0.9:
            self.seq += 1                                          # else a repeated one
        flags = 0 if self.rng.random() < 0.9 else self.rng.getrandbits(32)
        return wire.deliver(self.view.node, self.when(t, grant), self.sender(src), payload,
                            seq=self.seq, flags=flags)

    def link(self, t: int, grant: int) -> bytes:
        peer = self.view.peer() if self.rng.random() < 0.9 else self.sender(None)
        return wire.link_status(self.view.node, self.when(t, grant), peer,
                                self.rng.random() < 0.5)

    def junk(self, t: int) -> bytes:
        """A message the link port must refuse (it drops the connection)."""
        node, rng = self.view.node, self.rng
        good = wire.deliver(node, t, self.view.peer(), b"\0" * 16)
        return rng.choice((
            b"\x52" * rng.randrange(1, 24),                        # shorter than a header
            b"\0\0\0\0" + good[4:],                                 # bad magic
            good[:4] + b"\x09\x00" + good[6:],                      # bad version
            good[:6] + b"\x63\x00" + good[8:],                      # unknown type
            good + b"\0",                                           # length field wrong
            good[:32] + (1000).to_bytes(4, "little") + good[36:],   # payload length wrong
            wire.grant(node, max(0, self.grant - 1)),              # a grant going back
            wire.welcome(node, t, self.view.nodes),                 # a second WELCOME
            wire.deliver(node, t, self.view.peer(), b"\0" * 65537),  # over the maximum
        ))


class Session:
    """One execution running: QEMU, the fake fabric, and every command recorded."""

    def __init__(self, qemu: Path, board: BoardSpec, ex: Execution, rng: Random,
                 script: list | None, deadline: float):
        self.board, self.ex, self.deadline = board, ex, deadline
        self.dir = Path(tempfile.mkdtemp(prefix="rl-fuzz-"))   # short: a socket path
        self.log = self.dir / "qemu.log"
        cfg = ex.config
        sock = self.dir / "fabric.sock"
        self.fabric = FuzzFabric(sock, board, cfg, rng, script)
        if board.qemu_args:
            args = board.qemu_args(cfg["node"], str(sock), cfg["props"])
        else:
            props = ",".join(f"{k}={v}" for k, v in cfg["props"].items())
            args = ["-device", f"{board.device},node={cfg['node']},fabric={sock}"
                    + (f",{props}" if props else "")]
        args += ["-qtest-log", "none", *cfg["qemu_args"]]
        self.q, self.startup = None, None
        try:
            self.q = Qtest(qemu, args, self.log, env=SANITIZER_ENV, timeout=HANG_S)
        except QtestClosed as e:        # QEMU exited before it even talked qtest
            self.startup = e
        self.now = 0

    def send(self, text: str) -> str:
        """One qtest command: recorded, sent, its reply returned (FAIL and ERR are
        answers too); raises QtestClosed/QtestTimeout, or Stop on a bad frame."""
        self.ex.commands.append(text)
        self.fabric.command = len(self.ex.commands)
        reply = self.q.raw(text)
        if self.fabric.violations:
            raise Stop("fabric")
        return reply

    def finish(self, during: Exception | None) -> Finding | None:
        """Stop QEMU and the fabric; the finding, if any, from everything seen."""
        hung = isinstance(during, QtestTimeout)
        if self.q is None:
            status = self.startup.status
        else:
            if hung:
                self.q.proc.send_signal(signal.SIGABRT)     # its stack, in the log
            status = self.q.close()
        self.fabric.stop()
        self.ex.replies = [[m.hex() for m in r] for r in self.fabric.replies]
        out = self.log.read_text(errors="replace")
        # QEMU exits at once, with status 1, when the board refuses its properties
        refused = isinstance(during, QtestClosed) and len(self.ex.commands) <= 1
        self.ex.finding = classify(out, status, hung, self.fabric.violations, refused)
        self.ex.outcome = "finding" if self.ex.finding else "refused" if refused else \
            "deadline" if isinstance(during, Stop) and str(during) == "deadline" else "ok"
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.ex.finding


def classify(out: str, status: int, hung: bool, violations: list[str],
             refused: bool) -> Finding | None:
    """The finding in what one execution left: QEMU's output and exit status, whether
    it stopped answering, what the fabric saw."""
    lines = out.splitlines()
    if hung:
        return Finding("hang", f"no qtest reply within {HANG_S} s", "\n".join(lines[-60:]))
    for marker in SANITIZER_MARKERS:
        hit = next((i for i, l in enumerate(lines) if marker in l), None)
        if hit is not None and "AddressSanitizer: ABRT" not in lines[hit]:
            summary = next((l for l in lines if l.startswith("SUMMARY:")), lines[hit])
            return Finding("sanitizer", summary.strip(), "\n".join(lines[hit:hit + 40]))
    if violations:
        return Finding("fabric", "malformed message from the board: " + violations[0],
                       "\n".join(violations[:20]))
    if status != 0 and not (refused and status == 1):
        how = f"killed by {signal.Signals(-status).name}" if status < 0 else f"exit {status}"
        why = next((l for l in lines if "ssertion" in l or "ERROR" in l or "Bail out" in l),
                   lines[-1] if lines else "")
        return Finding("crash", f"QEMU {how}: {why.strip()}", "\n".join(lines[-40:]))
    return None


class Generator:
    """Draws one execution's program and runs it command by command."""

    def __init__(self, s: Session, board: BoardSpec, rng: Random):
        self.s, self.board, self.rng = s, board, rng
        self.bars: dict[int, list] = {}         # bar -> [address, size, 64-bit]
        self.msi = None

    # ---- commands the board sequences use too ---------------------------------------
    def read(self, size: int, addr: int) -> int | None:
        reply = self.s.send(f"read{SIZES[size]} 0x{addr:x}")
        return int(reply.split()[1], 16) if reply.startswith("OK ") else None

    def write(self, size: int, addr: int, val: int) -> None:
        self.s.send(f"write{SIZES[size]} 0x{addr:x} 0x{val:x}")

    def memwrite(self, addr: int, data: bytes) -> None:
        self.s.send(f"write 0x{addr:x} 0x{len(data):x} 0x{data.hex()}")

    def bar(self, n: int) -> int:
        return self.bars[n][0] if n in self.bars else 0

    def value(self, size: int, hints=()) -> int:
        return value(self.rng, size, hints)

    @property
    def node(self) -> int:
        return self.s.ex.config["node"]

    @property
    def nodes(self) -> int:
        return self.s.ex.config["nodes"]

    # ---- PCI ------------------------------------------------------------------------
    def cfg_addr(self, off: int) -> None:
        self.s.send(f"outl 0x{PCI_CONFIG_ADDR:x} 0x{0x80000000 | self.dev << 11 | off & 0xFC:x}")

    def cfg_read(self, size: int, off: int) -> int:
        self.cfg_addr(off)
        reply = self.s.send(f"in{SIZES[size]} 0x{PCI_CONFIG_DATA + (off & 3):x}")
        return int(reply.split()[1], 16) if reply.startswith("OK ") else 0

    def cfg_write(self, size: int, off: int, val: int) -> None:
        self.cfg_addr(off)
        self.s.send(f"out{SIZES[size]} 0x{PCI_CONFIG_DATA + (off & 3):x} 0x{val:x}")

    def setup(self) -> None:
        """Find the board, size and map its BARs, find its MSI capability."""
        vendor, device = self.board.pci_id
        for self.dev in range(32):
            if self.cfg_read(4, 0) == device << 16 | vendor:
                break
        else:
            raise RuntimeError(f"no PCI device {vendor:04x}:{device:04x} in QEMU")
        places = list(BAR_PLACES)
        self.rng.shuffle(places)
        for bar in range(6):
            off = 0x10 + 4 * bar
            if bar - 1 in self.bars and self.bars[bar - 1][2]:
                continue                        # the upper half of a 64-bit BAR
            self.cfg_write(4, off, 0xFFFFFFFF)
            mask = self.cfg_read(4, off)
            if not mask or mask & 1:            # absent, or an I/O BAR: not ours
                continue
            size = (~(mask & ~0xF) & 0xFFFFFFFF) + 1
            base = places.pop() if self.rng.random() < 0.9 else places[0]   # or overlapping
            self.cfg_write(4, off, base)
            is64 = (mask >> 1) & 3 == 2
            if is64:
                self.cfg_write(4, off + 4, 0)
            self.bars[bar] = [base, size, is64]
        self.cfg_write(2, 0x04, 0x6)                # memory space, bus master
        ptr = self.cfg_read(1, 0x34)
        for _ in range(16):
            if not ptr:
                break
            if self.cfg_read(1, ptr) == 0x05:       # MSI: where its data register is
                self.msi = ptr
                self.msi_data = ptr + (12 if self.cfg_read(2, ptr + 2) & 0x80 else 8)
                break
            ptr = self.cfg_read(1, ptr + 1)

    # ---- the generic operations -----------------------------------------------------
    def offset(self, bar: int, size: int) -> tuple[int, tuple]:
        bsize = self.bars[bar][1]
        regs = [r for r in self.board.registers if r.bar == bar]
        r = self.rng.random()
        if regs and r < 0.4:
            reg = self.rng.choice(regs)
            return reg.offset + self.rng.choice((0, 0, 0, 0, 1, 2, 3)), reg.values
        if r < 0.7:
            return self.rng.randrange(0, bsize, size), ()
        if r < 0.8:
            return self.rng.randrange(bsize), ()                   # unaligned
        if r < 0.9:
            return bsize - self.rng.randint(1, size), ()           # across the end
        return bsize + self.rng.choice((0, 1, 4, 0x1000, 0xFFFF)), ()   # beyond it

    def op_mmio(self) -> None:
        bar = self.rng.choice(list(self.bars))
        size = self.rng.choice(list(SIZES))
        off, hints = self.offset(bar, size)
        if self.rng.random() < 0.5:
            self.read(size, self.bar(bar) + off)
        else:
            self.write(size, self.bar(bar) + off, self.value(size, hints))

    def op_bulk(self) -> None:
        bar = self.rng.choice(list(self.bars))
        n = self.rng.choice((1, 3, 16, 64, 4096, 8192))
        off = self.rng.choice((0, self.rng.randrange(self.bars[bar][1]),
                               self.bars[bar][1] - n // 2))
        addr = self.bar(bar) + max(0, off)
        if self.rng.random() < 0.5:
            self.s.send(f"read 0x{addr:x} 0x{n:x}")
        else:
            self.memwrite(addr, self.rng.randbytes(n))

    def op_clock(self) -> None:
        if self.s.now >= CLOCK_LIMIT:
            return              # further steps could overflow qtest's own arithmetic
        r = self.rng.random()
        if r < 0.3:
            cmd = "clock_step"                                     # to the next timer
        elif r < 0.9:
            cmd = f"clock_step {min(10 ** self.rng.randint(0, 10), CLOCK_LIMIT - self.s.now)}"
        else:
            cmd = f"clock_set {min(self.s.now + self.rng.choice((1, 10**9, 1 << 40)), CLOCK_LIMIT)}"
        reply = self.s.send(cmd)
        words = reply.split()
        if len(words) == 2 and words[1].isdigit():
            self.s.now = max(self.s.now, int(words[1]))

    def op_config(self) -> None:
        """Any register of the board's configuration space, BARs and MSI included."""
        size = self.rng.choice((1, 2, 4))
        off = self.rng.choice((self.rng.randrange(0, 256, size), 0x04, 0x06, 0x10, 0x14,
                               0x18, 0x3C, self.msi or 0x40))
        if self.rng.random() < 0.4:
            self.cfg_read(size, off)
            return
        self.cfg_write(size, off, self.value(size))
        if 0x10 <= off < 0x28:
            for bar in self.bars:
                self.bars[bar][0] = self.cfg_read(4, 0x10 + 4 * bar) & ~0xF

    def op_msi(self) -> None:
        """MSI aimed anywhere: the board's own memory write, when it interrupts."""
        if self.msi is None:
            return
        target = self.rng.choice(ANYWHERE + tuple(
            self.bar(b) + r.offset for r in self.board.registers for b in (r.bar,)))
        self.cfg_write(4, self.msi + 4, target & 0xFFFFFFFF)
        if self.msi_data == self.msi + 12:
            self.cfg_write(4, self.msi + 8, target >> 32)
        self.cfg_write(2, self.msi_data, self.value(2))
        self.cfg_write(2, self.msi + 2, 1 if self.rng.random() < 0.8 else 0)

    def op_remap(self) -> None:
        """Move a BAR (over the other, over RAM, to the top) or switch decoding."""
        if self.rng.random() < 0.5:
            self.cfg_write(2, 0x04, self.rng.choice((0x6, 0x6, 0x2, 0x4, 0x0)))
            return
        bar = self.rng.choice(list(self.bars))
        size = self.bars[bar][1]
        base = self.rng.choice(BAR_PLACES + (0, 0x100000, 0xFFFFFFFF & -size,
                                              *(b[0] for b in self.bars.values())))
        self.cfg_write(4, 0x10 + 4 * bar, base)
        self.bars[bar][0] = self.cfg_read(4, 0x10 + 4 * bar) & ~0xF

    def op_board(self) -> None:
        if self.board.sequences:
            self.rng.choice(self.board.sequences)(self)

    OPS = ((op_mmio, 30), (op_board, 25), (op_clock, 18), (op_bulk, 6), (op_config, 6),
           (op_msi, 3), (op_remap, 2))

    def run(self) -> None:
        self.setup()
        fns, weights = zip(*self.OPS)
        for _ in range(self.rng.randint(1, MAX_OPS)):
            if time.monotonic() > self.s.deadline:
                raise Stop("deadline")
            self.rng.choices(fns, weights)[0](self)


def make_config(board: BoardSpec, rng: Random) -> dict:
    """The cluster and QEMU arguments of one execution."""
    nodes = rng.choice((2, 2, 2, 3, 4, 1, 33, 256))
    node = rng.randrange(nodes) if rng.random() < 0.97 else nodes     # or not in it
    return {"nodes": nodes, "node": node, "props": board.properties(rng),
            "first_grant": rng.choice((0, 1000, 100_000, 10**6, 10**9, NEVER)),
            "qemu_args": ["-only-migratable"] if rng.random() < 0.02 else []}


def run_execution(qemu: Path, board: BoardSpec, ex: Execution, rng: Random | None,
                  deadline: float) -> Finding | None:
    """Run ex: generate its program with rng, or replay ex.commands and ex.replies
    (rng None). Sets ex.finding and ex.outcome."""
    script = None
    if rng is None:
        script, commands, ex.commands = ex.replies, ex.commands, []
    s = Session(qemu, board, ex, Random(f"{ex.seed}:fabric"), script, deadline)
    during = None
    try:
        if s.q is None:
            raise s.startup
        if rng is not None:
            Generator(s, board, rng).run()
        else:
            for text in commands:
                s.send(text)
    except (QtestClosed, QtestTimeout, Stop) as e:
        during = e
    return s.finish(during)


@dataclass
class Summary:
    executions: int = 0
    commands: int = 0
    refused: int = 0            # QEMU would not start with the drawn properties
    seconds: float = 0.0
    findings: dict = field(default_factory=dict)    # signature -> [Execution, path, count]

    def rate(self, n: int) -> float:
        return n / self.seconds if self.seconds else 0.0


def fuzz(qemu: Path, board: BoardSpec, seconds: float, seed: str, out_dir: Path,
         executions: range | None = None, stop_on_finding: bool = False,
         report=print, progress_every: float = 5.0) -> Summary:
    """Run executions seed:0, seed:1, ... (or just those in executions) until seconds
    have passed; write a reproducer for each new finding; return the totals."""
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    deadline, last = start + seconds, start
    sm = Summary()
    for k in executions if executions is not None else itertools.count():
        if time.monotonic() >= deadline:
            break
        rng = Random(f"{seed}:{k}")
        ex = Execution(board.name, f"{seed}:{k}", make_config(board, rng))
        found = run_execution(qemu, board, ex, rng, deadline)
        sm.executions += 1
        sm.commands += len(ex.commands)
        sm.refused += ex.outcome == "refused"
        sm.seconds = time.monotonic() - start
        if found:
            sig = found.signature()
            if sig in sm.findings:
                sm.findings[sig][2] += 1
            else:
                path = out_dir / f"{board.name}-{seed}-{k}.json".replace(":", "-")
                ex.save(path)
                sm.findings[sig] = [ex, path, 1]
                report(f"FINDING (seed {seed}, execution {k}: --seed {seed}:{k}): "
                       f"{found.kind}: {found.summary}\n"
                       f"  reproducer: {path} ({len(ex.commands)} qtest commands, "
                       f"{len(ex.replies)} fabric replies)\n"
                       f"  replay:     retrolink fuzz {board.name} --replay {path}")
                if stop_on_finding:
                    break
        if time.monotonic() - last >= progress_every:
            last = time.monotonic()
            report(f"{board.name}: {sm.executions} executions ({sm.rate(sm.executions):.1f}"
                   f" execs/s), {sm.commands} qtest commands ({sm.rate(sm.commands):.0f}/s), "
                   f"{len(sm.findings)} findings")
    sm.seconds = time.monotonic() - start
    return sm


def replay(qemu: Path, board: BoardSpec, recorded: Execution) -> Finding | None:
    """Run a reproducer's commands and fabric replies again; what it finds now."""
    ex = Execution(recorded.board, recorded.seed, recorded.config, list(recorded.commands),
                   list(recorded.replies))
    return run_execution(qemu, board, ex, None, float("inf"))
