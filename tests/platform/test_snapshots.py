"""Clusters that start from a snapshot (docs/snapshots.md): a run from a snapshot gives
byte-identical output to a cold boot; a damaged or stale snapshot is found, never used,
and made again. Each test has a snapshot folder of its own (RETROLINK_SNAPSHOTS).
The fabric's part is tested on sx-pair (and synthetic stations on eth-hub); what does not
need a fabric on one plain node (a cold boot of it costs half one of two nodes)."""
import json

import pytest

from retrolink.model.machine import load_machine, parse_overrides
from retrolink.run import snapshot
from retrolink.run.runner import run_cluster

# a benchmark (sx_bench's ping-pong, timed by the guest's clock under the model) and the
# guest's own clock and kernel state: all must be the same whichever way the nodes booted
PINGPONG = ("case $RETROLINK_NODE in "
            "0) sx_bench pingpong --peer 1 --sizes 16,1024 --iters 20;; "
            "1) sx_bench echo --peer 0;; esac; cat /proc/uptime; "
            "grep -E '^(MemFree|Slab)' /proc/meminfo")


@pytest.fixture
def snapshots(tmp_path, monkeypatch):
    d = tmp_path / "snapshots"
    monkeypatch.setenv("RETROLINK_SNAPSHOTS", str(d))
    monkeypatch.delenv("RETROLINK_COLD", raising=False)
    return d


# a node on its own: its clock, kernel state and the time of day
ALONE = "cat /proc/uptime; grep -E '^(MemFree|Slab)' /proc/meminfo; date"


def one_plain_node(overrides=()):
    return load_machine("plain", parse_overrides(["cluster.nodes=1", *overrides]))


def restored(result) -> bool:
    """Whether the run's nodes started from a snapshot (its QEMUs loaded one)."""
    return "-incoming" in (result.run_dir / "node0-qemu.cmdline").read_text()


def run(artifacts, machine, cold=False, monkeypatch=None):
    if cold:
        monkeypatch.setenv("RETROLINK_COLD", "1")
    try:
        command = PINGPONG if machine.uses_fabric else ALONE
        result = run_cluster(machine, artifacts, {0: command, 1: command}, "snap")
    finally:
        if cold:
            monkeypatch.delenv("RETROLINK_COLD")
    assert result.ok, result.problems
    return [r.lines for r in result.nodes], result


def made(snapshots) -> list:
    return sorted(p for p in snapshots.iterdir() if (p / snapshot.MANIFEST).exists()) \
        if snapshots.exists() else []


# the root's files unpacked into RAM (the default), or on the read-only image every node
# maps, which the snapshot leaves out and the load maps again
@pytest.mark.parametrize("root_fs", ["tmpfs", "pmem"])
def test_snapshot_boot_is_byte_identical_to_a_cold_one(artifacts, snapshots, monkeypatch,
                                                       root_fs):
    machine = load_machine("sx-pair", parse_overrides([f"cluster.root_fs={root_fs}"]))
    cold, r0 = run(artifacts, machine, cold=True, monkeypatch=monkeypatch)
    assert not made(snapshots), "--cold made a snapshot"
    making, r1 = run(artifacts, machine)
    assert r1.nodes and len(made(snapshots)) == 1, "the first boot made no snapshot"
    restored, r2 = run(artifacts, machine)
    assert "RESULT" in "\n".join(cold[0])
    assert making == cold
    assert restored == cold
    # the kernel's log too: a run from the snapshot ends with the whole of it, the boot's
    # part from the snapshot's RAM
    for n in (0, 1):
        logs = [(r.run_dir / f"node{n}-kernel.log").read_text() for r in (r0, r1, r2)]
        assert "Linux version" in logs[0] and logs[1] == logs[0] and logs[2] == logs[0]
    # ... and it did start from it: its fabric says so
    assert "started at the boot barrier" in (r2.run_dir / "fabric.log").read_text()
    assert "started at the boot barrier" not in (r1.run_dir / "fabric.log").read_text()


def test_damaged_snapshot_is_found_removed_and_made_again(artifacts, snapshots, capsys):
    """Also: a node without a fabric, started from its snapshot, gives the same output."""
    machine = one_plain_node()
    first, r1 = run(artifacts, machine)
    (snap,) = made(snapshots)
    second, r2 = run(artifacts, machine)
    assert "RESULT" not in "\n".join(first[0]) and "MemFree" in "\n".join(first[0])
    assert restored(r2) and not restored(r1)
    assert second == first
    with open(snap / "node0.mig", "r+b") as f:      # one byte, deep in the guest's RAM
        f.seek(f.seek(0, 2) // 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0xFF]))
    again, r = run(artifacts, machine)
    assert "node0.mig is damaged" in capsys.readouterr().err
    assert not restored(r)
    assert again == first
    (remade,) = made(snapshots)
    assert remade == snap
    assert not snapshot._check(snapshot.Snapshot(snap, 1, fabric=False), snap.name)


def test_stale_snapshots_are_never_used(artifacts, snapshots):
    machine = one_plain_node()
    run(artifacts, machine)
    (snap,) = made(snapshots)
    # a parameter that reaches the guest: another key, another snapshot (that one that
    # reaches a board does too is snapshot_key's: every node's QEMU command line)
    other = one_plain_node(["cluster.memory_mib=248M"])
    _, r = run(artifacts, other)
    assert len(made(snapshots)) == 2
    assert not restored(r)
    # a snapshot of another format (an older retrolink) under the same key
    manifest = json.loads((snap / snapshot.MANIFEST).read_text())
    manifest["format"] = snapshot.FORMAT + 1
    (snap / snapshot.MANIFEST).write_text(json.dumps(manifest))
    _, r = run(artifacts, machine)
    assert not restored(r)
    assert len(made(snapshots)) == 2


def test_cache_cap_removes_the_least_recently_used(snapshots, monkeypatch):
    import os
    import time
    for i, name in enumerate(["old", "new"]):
        d = snapshots / name
        d.mkdir(parents=True)
        (d / "node0.mig").write_bytes(b"x" * (600 << 10))
        (d / snapshot.MANIFEST).write_text("{}")
        os.utime(d / snapshot.MANIFEST, (time.time() - 100 + i, time.time() - 100 + i))
    monkeypatch.setenv("RETROLINK_SNAPSHOT_CAP_MIB", "1")
    snapshot.enforce_cap()
    assert [p.name for p in made(snapshots)] == ["new"]


def test_the_key_is_the_binaries_contents_wherever_they_are(tmp_path):
    """Two clones of one commit build the same initramfs in two places (the build maps
    its paths away, meson.build): they share snapshots. A byte of difference does not."""
    def binaries(where: str, initrd: bytes) -> list:
        d = tmp_path / where
        d.mkdir()
        for name, data in (("qemu-system-x86_64", b"qemu"), ("vmlinuz", b"kernel"),
                           ("initramfs.cpio", initrd)):
            (d / name).write_bytes(data)
        return sorted(d.iterdir())

    def key(bins) -> str:
        argv = [str(bins[1]), "-kernel", str(bins[2]), "-initrd", str(bins[0])]
        return snapshot.snapshot_key(bins, [argv], "nodes 1\n", [], [])
    a, b, c = binaries("a", b"guest"), binaries("b", b"guest"), binaries("c", b"guesT")
    assert key(a) == key(b)
    assert key(a) != key(c)


def test_a_file_a_device_loads_is_in_the_key_and_the_run_s_own_files_are_not(tmp_path):
    """An SBus card's FCode PROM (`prom=FILE`) becomes the device tree the snapshot's
    kernel holds: another PROM is another snapshot. The node's command file, read after
    the barrier, is not in the key."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "node0-command.sh").write_text("true\n")
    prom = tmp_path / "fc.fcode"

    def key(prom_bytes: bytes, command: str) -> str:
        prom.write_bytes(prom_bytes)
        (run_dir / "node0-command.sh").write_text(command)
        argv = ["qemu", "-device", f"retrolink-fc-sbus,slot=0,prom={prom},node=0",
                "-fw_cfg", f"name=opt/retrolink/cmd,file={run_dir / 'node0-command.sh'}"]
        named = snapshot.files_named([argv], [run_dir])
        assert named == [prom]
        return snapshot.snapshot_key(named, [argv], "nodes 1\n", [run_dir], [])
    assert key(b"\xf1one", "true\n") == key(b"\xf1one", "false\n")
    assert key(b"\xf1one", "true\n") != key(b"\xf1two", "true\n")


def test_synthetic_stations_start_at_the_barrier_from_a_snapshot_as_in_a_cold_boot(
        artifacts, snapshots):
    # a traffic generator in the fabric, sending to node 0 from 1 us: long before the
    # nodes have booted, so it starts at the barrier's time (docs/snapshots.md)
    from retrolink.topologies import Synthetic
    base = load_machine("eth-hub", {"cluster.nodes": 2})
    (name, net), = base.networks.items()
    gen = Synthetic(name="gen", dst=0, size=200, interval_ns=1_000_000, start_ns=1000, count=20)
    machine = base.model_copy(
        update={"networks": {name: net.model_copy(update={"synthetic": [gen]})}})
    command = "sleep 1; cat /proc/uptime /sys/class/net/eth0/statistics/rx_packets"
    runs = []
    for _ in range(2):      # the first boot makes the snapshot, the second starts from it
        r = run_cluster(machine, artifacts, {0: command, 1: command}, "snap", trace=True)
        assert r.ok, r.problems
        runs.append(([x.lines for x in r.nodes], (r.run_dir / "fabric-trace.txt").read_text(),
                     (r.run_dir / "fabric.log").read_text()))
    (making, trace1, log1), (restored, trace2, log2) = runs
    assert "started at the boot barrier" in log2 and "started at the boot barrier" not in log1
    assert restored == making and trace2 == trace1
    ready = [int(line.split()[0]) for line in trace1.splitlines() if " ready src=2 " in line]
    barrier = int(log2.split("started at the boot barrier, ")[1].split(" ns")[0])
    assert len(ready) == 20 and ready[0] == barrier
    assert ready == [barrier + i * 1_000_000 for i in range(20)]


def _qmp_that_hangs_up(path):
    """A QMP server that greets, takes qmp_capabilities, then closes the connection at
    the next command: what the snapshot maker sees of a QEMU that ends while it waits."""
    import socket
    import threading
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        conn.sendall(b'{"QMP": {"version": {"qemu": {"micro": 0, "minor": 0, "major": 10}, '
                     b'"package": ""}, "capabilities": []}}\n')
        conn.recv(4096)                        # qmp_capabilities
        conn.sendall(b'{"return": {}}\n')
        conn.recv(4096)                        # query-status: hang up instead
        conn.close()
        srv.close()
    threading.Thread(target=serve, daemon=True).start()


@pytest.mark.parametrize("qemu_ends", [False, True])
def test_a_qemu_gone_while_saving_is_said_in_our_words(tmp_path, capsys, qemu_ends):
    """The maker said the QMP library's words ('QMPClient is disconnecting. Call
    disconnect() to return to IDLE state.'). Now: which node, what it was doing, and
    nothing at all when the run sees the QEMU gone (the run names that failure)."""
    import time
    _qmp_that_hangs_up(tmp_path / "q.sock")
    build = tmp_path / "build"
    build.mkdir()
    t0 = time.monotonic()
    alive = (lambda: time.monotonic() - t0 < 1.0) if qemu_ends else (lambda: True)
    maker = snapshot.SnapshotMaker([tmp_path / "q.sock"], build, "k", alive=alive, fabric=False)
    maker.start()
    maker.join(timeout=30)
    err = capsys.readouterr().err
    assert maker.problem == ("node0's QEMU closed its monitor connection while retrolink was "
                             "waiting for node0 to stop at the barrier (the QEMU ended, or "
                             "the run was interrupted)"), maker.problem
    assert not maker.made and not build.exists()
    assert "QMPClient" not in err
    assert ("no snapshot made: node0's QEMU closed" in err) != qemu_ends, err
