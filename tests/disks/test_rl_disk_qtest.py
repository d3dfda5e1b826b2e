"""rl-disk under qtest, with no guest: the virtual clock is the test's. A request completes
at the model's time and not a nanosecond before; a snapshot of an idle disk is taken and
one of a written disk is refused, saying why; options past the declared limits are
refused by QEMU, naming them (docs/boards/scsi-disk.md)."""
import re
import subprocess

import pytest

from disk_model import Drive, Geometry
from retrolink.disks import Disk, node_args
from retrolink.model.schema import params
from retrolink.qtest.client import Qtest

DISK = Disk()
G = Geometry.of(DISK)


def start(artifacts, tmp_path, disk=DISK, name="qemu"):
    trace = tmp_path / f"{name}-trace.txt"
    q = Qtest(artifacts.qemu, [*node_args([disk]), "-trace",
                               f"enable=retrolink_disk_*,file={trace}"],
              tmp_path / f"{name}.log", qmp=True)
    return q, trace


def qemu_io(q, command: str) -> dict:
    return q.qmp("human-monitor-command", **{"command-line": f'qemu-io disk0 "{command}"'})


def completions(trace) -> list[int]:
    return [int(m.group(1)) for m in
            re.finditer(r"retrolink_disk_done \S+: sector \d+ completed at (\d+)",
                        trace.read_text())]


def test_a_request_completes_at_the_models_time_and_not_before(artifacts, tmp_path):
    q, trace = start(artifacts, tmp_path)
    try:
        now = q.clock_step(1_000_000_007)
        # 128 sectors from sector 7300 (cylinder 10, slot 20): one request, from cylinder 0
        assert "error" not in qemu_io(q, "aio_write -P 0x5a 3737600 64k")
        a = Drive(G).access(now, 7300, 128)
        assert a.done == (now + DISK.overhead_ns + G.seek_ns(10) + a.rotation
                          + 128 * DISK.sector_ns)
        q.clock_step(a.done - 1 - now)
        assert completions(trace) == []
        q.clock_step(1)
        q.qmp("query-status")           # a main-loop turn: the sleeper's timer has run
        assert completions(trace) == [a.done]
        # and the next, sequential to it, from where the heads are now
        assert "error" not in qemu_io(q, "aio_read -P 0x5a 3803136 4k")
        b = Drive(G, cylinder=a.to_cylinder).access(a.done, 7428, 8)
        q.clock_step(b.done - a.done)
        q.qmp("query-status")
        assert completions(trace) == [a.done, b.done]
    finally:
        q.close()


def test_an_idle_disk_is_saved_and_a_written_one_is_refused(artifacts, tmp_path):
    q, _ = start(artifacts, tmp_path)
    try:
        q.clock_step(1000)
        assert "error" not in qemu_io(q, "aio_read 0 4k")
        q.clock_step(100_000_000)       # done long before
        assert migrate(q, tmp_path / "idle.mig") == "completed"
        q.qmp("cont")
        assert "error" not in qemu_io(q, "aio_write 0 4k")
        q.clock_step(100_000_000)
        assert migrate(q, tmp_path / "written.mig") == "failed"
    finally:
        q.close()
    assert ("rl-disk: cannot save: the disk has been written since QEMU started"
            in (tmp_path / "qemu.log").read_text())


def test_a_disk_busy_when_the_vm_stops_is_not_saved(artifacts, tmp_path):
    """The stop's drain completes the sleeping request at once (off the model's time, with
    a warning), and the snapshot is refused: it would not be the disk the guest saw."""
    q, trace = start(artifacts, tmp_path)
    try:
        q.clock_step(1000)
        assert "error" not in qemu_io(q, "aio_read 0 64k")
        assert migrate(q, tmp_path / "busy.mig") == "failed"
    finally:
        q.close()
    log = (tmp_path / "qemu.log").read_text()
    assert "rl-disk rl-disk0: drained with a request in flight (sector 0" in log, log
    assert ("rl-disk: cannot save: 1 request(s) were in flight when the VM stopped, and "
            "completed early, off the model's time; snapshot an idle disk") in log
    assert "retrolink_disk_cut_short" in trace.read_text()


def migrate(q, path) -> str:
    assert "error" not in q.qmp("migrate", uri=f"file:{path}")
    for _ in range(200):
        status = q.qmp("query-migrate")["return"].get("status")
        if status in ("completed", "failed"):
            return status
        q.qmp("query-status")
    return status


def past_limits():
    """(option, value) just past each declared limit of the disk."""
    for p in params(Disk):
        for bound in (p.low, p.high):
            if not bound:
                continue
            op, number = bound.split()
            n = int(number)
            yield p, {">=": n - 1, ">": n, "<=": n + 1}[op]


@pytest.mark.parametrize("p,value", list(past_limits()),
                         ids=[f"{p.name}={v}" for p, v in past_limits()])
def test_qemu_refuses_each_option_past_its_declared_limit(artifacts, p, value):
    args = DISK.qemu_args(0)
    drive = args[1]
    args[1] = re.sub(rf"(?<=,){p.qemu}=[^,]*",
                     f"{p.qemu}={value}M" if p.qemu == "size" else f"{p.qemu}={value}", drive)
    assert args[1] != drive
    r = subprocess.run([str(artifacts.qemu), "-M", "none", "-accel", "qtest", "-display",
                        "none", "-nodefaults", "-drive", args[1]],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    # QEMU's error follows the option it echoes: "...,overhead-ns=...: <why>"
    why = r.stderr.strip().split(args[1] + ": ", 1)[-1]
    assert r.returncode == 1 and p.qemu in why, r.stderr


def test_qemu_takes_the_declared_defaults(artifacts, tmp_path):
    q, _ = start(artifacts, tmp_path)
    q.close()
