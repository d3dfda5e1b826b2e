"""qtest: the boot barrier's port (qemu/core/rl-barrier.c; docs/snapshots.md) on its own,
without a fabric, as a node of the `plain` machine has it. What the guest's init sees, and
anything a guest program can do at its ports (it is reachable by any root process with
ioperm) leaves QEMU running: one arrival per boot, every other write ignored, every width
and offset answered. Under ASan and UBSan, so a bad access is an error, not luck."""
import random

import pytest

from retrolink.qtest.client import Qtest

pytestmark = pytest.mark.usefixtures("artifacts")

PORT = 0xF5                       # as the runner places it (node_command.BARRIER_PORT)
WAITING, ARRIVE, PASSED = 0, 1, 2
LEFT_US = PORT + 1                # .. + 4: microseconds to the barrier, little-endian
WIDTH = {"b": 1, "w": 2, "l": 4}


def start(qemu, tmp_path, props=""):
    return Qtest(qemu, ["-device", f"retrolink-barrier,iobase={PORT:#x}{props}"],
                 tmp_path / "qemu.log", qmp=True)


def test_without_a_fabric_the_barrier_is_passed_at_the_arrival(artifacts, tmp_path):
    q = start(artifacts.qemu, tmp_path)
    try:
        assert int(q.cmd(f"inb {PORT:#x}"), 16) == WAITING
        q.cmd(f"outb {PORT:#x} {ARRIVE:#x}")
        assert int(q.cmd(f"inb {PORT:#x}"), 16) == PASSED
        assert [int(q.cmd(f"inb {LEFT_US + i:#x}"), 16) for i in range(4)] == [0, 0, 0, 0]
        assert q.qmp("query-status")["return"]["status"] == "running"
    finally:
        q.close()


def test_stop_at_arrival_stops_the_vm_there(artifacts, tmp_path):
    q = start(artifacts.qemu, tmp_path, ",stop-at-arrival=on")
    try:
        assert q.qmp("query-status")["return"]["status"] == "running"
        q.cmd(f"outb {PORT:#x} {ARRIVE:#x}")
        assert q.qmp("query-status")["return"]["status"] == "paused"
        q.qmp("cont")
        assert q.qmp("query-status")["return"]["status"] == "running"
        q.cmd(f"outb {PORT:#x} {ARRIVE:#x}")         # a second arrival: ignored
        assert q.qmp("query-status")["return"]["status"] == "running"
    finally:
        q.close()


@pytest.mark.parametrize("seed", [1, 2])
def test_any_access_to_its_ports_leaves_qemu_running(asan_qemu, tmp_path, seed):
    rng = random.Random(seed)
    q = start(asan_qemu, tmp_path, ",stop-at-arrival=on" if seed % 2 else "")
    try:
        for _ in range(3000):
            size = rng.choice("bwl")
            port = PORT + rng.randrange(-2, 8)
            if rng.random() < 0.5:
                q.cmd(f"in{size} {port:#x}")
            else:
                q.cmd(f"out{size} {port:#x} {rng.getrandbits(8 * WIDTH[size]):#x}")
            if rng.random() < 0.01:
                if q.qmp("query-status")["return"]["status"] == "paused":
                    q.qmp("cont")
        assert int(q.cmd(f"inb {PORT:#x}"), 16) in (WAITING, PASSED)
    finally:
        status = q.close()
    log = (tmp_path / "qemu.log").read_text(errors="replace")
    assert "ERROR: AddressSanitizer" not in log and "runtime error" not in log, log[-2000:]
    assert status in (0, -15), (status, log[-2000:])
