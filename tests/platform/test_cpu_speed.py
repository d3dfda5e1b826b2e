"""Guest CPU speed (cluster.cpu_mips, docs/machines.md "Guest CPU speed"): QEMU's
-icount mips=X (qemu/patches/0004-icount-mips-*) with no guest at all, on a firmware of
a few instructions, where the count of every instruction is known; then in the guest.

With no guest: a 64 KiB firmware (-bios) runs from the reset vector in real mode with
interrupts off: rounds of `mov ecx, L; 1: dec ecx; jnz 1b; rdtsc`, each writing the TSC
(virtual ns under icount) to the serial port, then ends QEMU through isa-debug-exit. The
same instructions run at every speed, so at 1 ns per instruction (shift=0) the TSCs are
the instruction counts k_i themselves, and at any other speed they must be exactly
units.instructions_ns(k_i, mips) = floor(k_i * m / 2^32).

In the guest: cpu_loop (guest/bin/cpu) times a loop with the TSC on nodes of 125, 40 and
28 MIPS; the repetition no interrupt landed in is the same instructions at every speed.
"""
import json
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest
from helpers import run_retrolink

from retrolink.model import units
from retrolink.run.node_command import FIRMWARE_DIRS

DEBUG_EXIT = 0xF4
EXIT_STATUS = (0x2A << 1) | 1
# loop lengths of the rounds (0: no loop): short, long, and a spread of remainders
LOOPS = [0, 1, 2, 3, 5, 7, 11, 100, 1000, 4099, 12345, 65536, 100003, 1 << 20]


def firmware(loops=LOOPS, halt=False) -> bytes:
    """Real-mode code at the start of the image, a near jump to it at the reset vector
    (0xFFF0 in the 64 KiB image: CS base 0xFFFF0000)."""
    code = bytearray()
    for n in loops:
        if n:
            code += b"\x66\xb9" + n.to_bytes(4, "little")      # mov ecx, n
            code += b"\x66\x49\x75\xfc"                        # 1: dec ecx; jnz 1b
        code += b"\x0f\x31"                                    # rdtsc
        code += b"\x66\x89\xd3"                                # mov ebx, edx
        code += b"\xba\xf8\x03"                                # mov dx, 0x3f8
        code += b"\xee\x66\xc1\xe8\x08" * 4                    # out dx, al; shr eax, 8
        code += b"\x66\x89\xd8"                                # mov eax, ebx
        code += b"\xee\x66\xc1\xe8\x08" * 4
    if halt:
        code += b"\xf4\xeb\xfd"                                # 1: hlt; jmp 1b
    code += bytes([0xB0, 0x2A, 0xE6, DEBUG_EXIT])              # mov al, 0x2a; out 0xf4, al
    code += b"\xf4\xeb\xfd"
    image = bytearray(65536)
    image[:len(code)] = code
    rel = (0 - (0xFFF0 + 3)) & 0xFFFF                          # jmp near 0 (IP wraps)
    image[0xFFF0:0xFFF3] = b"\xe9" + rel.to_bytes(2, "little")
    return bytes(image)


def qemu_argv(qemu, tmp_path: Path, icount: str, fw: bytes, serial=None) -> list[str]:
    bios = tmp_path / "fw.bin"
    bios.write_bytes(fw)
    serial = serial or tmp_path / "tsc.bin"
    return [str(qemu), "-M", "q35", "-accel", "tcg", "-icount", icount, "-m", "64",
            *(a for d in FIRMWARE_DIRS for a in ("-L", d)),
            "-smp", "1", "-bios", str(bios), "-nodefaults", "-display", "none",
            "-no-user-config", "-serial", f"file:{serial}",
            "-device", f"isa-debug-exit,iobase={DEBUG_EXIT:#x},iosize=1"]


def tscs(qemu, tmp_path: Path, icount: str) -> list[int]:
    """The TSC of each round of the firmware run with -icount ICOUNT."""
    r = subprocess.run(qemu_argv(qemu, tmp_path, icount, firmware()), capture_output=True,
                       text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == EXIT_STATUS, (icount, r.returncode, r.stderr)
    out = (tmp_path / "tsc.bin").read_bytes()
    assert len(out) == 8 * len(LOOPS), len(out)
    return [int.from_bytes(out[i:i + 8], "little") for i in range(0, len(out), 8)]


@pytest.fixture(scope="module")
def qemu(artifacts):
    return artifacts.qemu


@pytest.fixture(scope="module")
def counts(qemu, tmp_path_factory):
    """k_i: each round's instruction count from reset, read at 1 ns per instruction."""
    k = tscs(qemu, tmp_path_factory.mktemp("shift0"), "shift=0,sleep=off")
    # the firmware's own arithmetic: the jump and rdtsc first, then a round is
    # 1 + 2 L instructions of loop (none without a loop) and 20 to read and write the TSC
    assert k[0] == 2
    steps = [b - a for a, b in zip(k, k[1:])]
    assert steps == [20 + (1 + 2 * n if n else 0) for n in LOOPS[1:]], steps
    return k


@pytest.mark.parametrize("mips", [40, 28, 75, 600, 1000 / 3, 33.3, 1.5, 9999.9, 0.9765625,
                                  1000000])
def test_the_time_of_n_instructions_is_floor_n_m_over_2_32(qemu, counts, tmp_path, mips):
    m = int(1000.0 * 4294967296.0 / mips + 0.5)
    if mips >= units.MIN_CPU_MIPS and mips <= units.MAX_CPU_MIPS:
        assert units.icount_ns_mult(mips) == m
    got = tscs(qemu, tmp_path, f"mips={float(mips)!r},sleep=off")
    assert got == [k * m >> 32 for k in counts], mips


def test_shift_is_unchanged_and_mips_1000_over_2_n_is_the_same_clock(qemu, counts, tmp_path):
    for n in (1, 3, 10):
        assert tscs(qemu, tmp_path, f"shift={n},sleep=off") == [k << n for k in counts]
    assert tscs(qemu, tmp_path, "mips=125,sleep=off") == [k << 3 for k in counts]
    # 40 MIPS is 25 ns an instruction, exactly 125/40 times the time at 125 MIPS
    assert tscs(qemu, tmp_path, "mips=40,sleep=off") == [k * 25 for k in counts]


@pytest.mark.parametrize("icount,error", [
    ("mips=0", "Invalid mips value (a number from 0.9765625 to 1000000)"),
    ("mips=-40", "Invalid mips value"),
    ("mips=0.97", "Invalid mips value"),
    ("mips=1000001", "Invalid mips value"),
    ("mips=inf", "Invalid mips value"),
    ("mips=nan", "Invalid mips value"),
    ("mips=40MIPS", "Invalid mips value"),
    ("mips=", "Invalid mips value"),
    ("shift=3,mips=40", "shift and mips are exclusive"),
    ("shift=auto,mips=40", "shift and mips are exclusive"),
    ("mips=40,align=on", "mips and align=on are incompatible"),
    ("mips=40,align=on,sleep=off", "mips and align=on are incompatible"),
])
def test_qemu_refuses_what_mips_cannot_mean(qemu, tmp_path, icount, error):
    r = subprocess.run(qemu_argv(qemu, tmp_path, icount, firmware()), capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and error in r.stderr, (icount, r.returncode, r.stderr)


# ---- migration: the multiplier is in the stream (snapshots) ---------------------------

class Qmp:
    def __init__(self, path: Path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(30)
        self.s.connect(str(path))
        self.f = self.s.makefile("rw")
        self.f.readline()
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.f.flush()
        while True:
            reply = json.loads(self.f.readline())      # '' (QEMU gone): ValueError
            if "return" in reply or "error" in reply:
                assert "error" not in reply, (name, reply)
                return reply["return"]

    def close(self):
        self.s.close()


def start(qemu, tmp_path, name, icount, *extra) -> subprocess.Popen:
    """The firmware's first rounds, then hlt (interrupts off: for good), with QMP."""
    argv = qemu_argv(qemu, tmp_path, icount, firmware(LOOPS[:4], halt=True),
                     serial=tmp_path / f"{name}.out")
    return subprocess.Popen([*argv, "-qmp", f"unix:{tmp_path / name}.qmp,server=on,wait=off",
                             *extra], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def qmp_of(proc: subprocess.Popen, path: Path) -> Qmp | None:
    """A QMP session, or None while QEMU has not opened its socket (or has exited)."""
    try:
        return Qmp(path) if path.exists() and proc.poll() is None else None
    except (OSError, ValueError):
        return None


def save_state(qemu, tmp_path, icount) -> Path:
    """Run the firmware to its hlt, stop it and migrate it to a file."""
    name = "src-" + icount.replace(",", "-").replace("=", "")
    state = tmp_path / f"{name}.state"
    proc = start(qemu, tmp_path, name, icount)
    deadline = time.monotonic() + 60
    qmp = None
    try:
        while not qmp or (tmp_path / f"{name}.out").stat().st_size < 8 * 4:
            assert proc.poll() is None and time.monotonic() < deadline, proc.returncode
            qmp = qmp or qmp_of(proc, tmp_path / f"{name}.qmp")
            time.sleep(0.05)
        qmp.cmd("stop")
        qmp.cmd("migrate", uri=f"file:{state}")
        while (status := qmp.cmd("query-migrate").get("status")) != "completed":
            assert status not in ("failed", "cancelled") and time.monotonic() < deadline, status
            time.sleep(0.05)
    finally:
        if qmp:
            qmp.close()
        proc.kill()
        proc.communicate(timeout=30)
    return state


def load_state(qemu, tmp_path, icount, state) -> tuple[bool, str]:
    """Start a QEMU with -incoming from the file: whether it loaded, and what it said on
    stderr."""
    proc = start(qemu, tmp_path, "dst", icount, "-incoming", f"file:{state}")
    deadline = time.monotonic() + 60
    loaded = False
    while proc.poll() is None and not loaded:
        assert time.monotonic() < deadline, "neither loaded nor exited"
        qmp = qmp_of(proc, tmp_path / "dst.qmp")
        if qmp:
            try:
                # the source was stopped: loaded, it stays paused (global state)
                loaded = qmp.cmd("query-status")["status"] in ("paused", "running")
            except (OSError, ValueError):
                pass
            qmp.close()
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
    _, err = proc.communicate(timeout=30)
    return loaded, err


def test_the_multiplier_travels_in_the_migration_stream(qemu, tmp_path):
    at40 = save_state(qemu, tmp_path, "mips=40,sleep=off")
    ok, err = load_state(qemu, tmp_path, "mips=40,sleep=off", at40)
    assert ok, err
    ok, err = load_state(qemu, tmp_path, "mips=28,sleep=off", at40)
    assert not ok and ("the migration stream has mips multiplier 107374182400 (ns per "
                       "instruction * 2^32), this QEMU has mips multiplier 153391689143") in err, err
    ok, err = load_state(qemu, tmp_path, "shift=3,sleep=off", at40)
    assert not ok and "this QEMU has no mips=, 0" in err, err
    # a state saved with a shift has no multiplier: it loads with that shift, not with mips=
    at3 = save_state(qemu, tmp_path, "shift=3,sleep=off")
    ok, err = load_state(qemu, tmp_path, "shift=3,sleep=off", at3)
    assert ok, err
    ok, err = load_state(qemu, tmp_path, "mips=125,sleep=off", at3)
    assert not ok and "the migration stream has no mips=, 0" in err, err


# ---- in the guest --------------------------------------------------------------------

def test_a_cpu_bound_loop_at_40_mips_takes_125_40_of_its_time_at_125(artifacts):
    """The same loop on nodes of 125, 40 and 28 MIPS. Its fastest repetition (no
    interrupt in it) is I instructions at every speed: 8 I ns at 125 MIPS, exactly 25 I
    at 40, and floor or ceil of I * m / 2^32 at 28 MIPS (35.714... ns an instruction:
    where the loop starts decides which). Over all repetitions the ratio is a little
    above 125/40: the kernel's timer interrupts are instructions too, and a loop that
    takes 3.125 times longer takes 3.125 times as many of them."""
    iters = 20000
    r = run_retrolink("run", "plain", "--set", "cluster.nodes=3",
                      "--set", "cluster.cpu_mips_per_node=[125, 40, 28]",
                      "--", f"cpu_loop --iters {iters} --reps 200")
    assert r.returncode == 0, r.stderr
    got = {int(n): (int(lo), int(total)) for n, lo, total in re.findall(
        r"^\[node(\d)\] RESULT loop_ns iters=\d+ reps=200 min=(\d+) max=\d+ total=(\d+)$",
        r.stdout, re.M)}
    assert sorted(got) == [0, 1, 2], r.stdout
    (min125, total125), (min40, total40), (min28, total28) = got[0], got[1], got[2]
    instructions, rest = divmod(min125, 8)
    assert rest == 0 and 2 * iters < instructions < 2 * iters + 16, min125
    assert min40 * 40 == min125 * 125 == instructions * 1000
    exact28 = instructions * units.icount_ns_mult(28) / 2**32
    assert min28 in (int(exact28), int(exact28) + 1), (min28, exact28)
    assert 125 / 40 <= total40 / total125 < 125 / 40 * 1.05, (total40, total125)
