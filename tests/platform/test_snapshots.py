"""Clusters that start from a snapshot (docs/snapshots.md): a run from a snapshot gives
byte-identical output to a cold boot; a damaged or stale snapshot is found, never used,
and made again. Each test has a snapshot folder of its own (RETROLINK_SNAPSHOTS)."""
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


def run(artifacts, machine, cold=False, monkeypatch=None):
    if cold:
        monkeypatch.setenv("RETROLINK_COLD", "1")
    try:
        result = run_cluster(machine, artifacts, {0: PINGPONG, 1: PINGPONG}, "snap")
    finally:
        if cold:
            monkeypatch.delenv("RETROLINK_COLD")
    assert result.ok, result.problems
    return [r.lines for r in result.nodes], result


def made(snapshots) -> list:
    return sorted(p for p in snapshots.iterdir() if (p / snapshot.MANIFEST).exists()) \
        if snapshots.exists() else []


def test_snapshot_boot_is_byte_identical_to_a_cold_one(artifacts, snapshots, monkeypatch):
    machine = load_machine("sx-pair")
    cold, _ = run(artifacts, machine, cold=True, monkeypatch=monkeypatch)
    assert not made(snapshots), "--cold made a snapshot"
    making, r1 = run(artifacts, machine)
    assert r1.nodes and len(made(snapshots)) == 1, "the first boot made no snapshot"
    restored, r2 = run(artifacts, machine)
    assert "RESULT" in "\n".join(cold[0])
    assert making == cold
    assert restored == cold
    # ... and it did start from it: its fabric says so
    assert "started at the boot barrier" in (r2.run_dir / "fabric.log").read_text()
    assert "started at the boot barrier" not in (r1.run_dir / "fabric.log").read_text()


def test_damaged_snapshot_is_found_removed_and_made_again(artifacts, snapshots, capsys):
    machine = load_machine("sx-pair")
    first, _ = run(artifacts, machine)
    (snap,) = made(snapshots)
    with open(snap / "node1.mig", "r+b") as f:      # one byte, deep in the guest's RAM
        f.seek(f.seek(0, 2) // 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0xFF]))
    again, r = run(artifacts, machine)
    assert "node1.mig is damaged" in capsys.readouterr().err
    assert "started at the boot barrier" not in (r.run_dir / "fabric.log").read_text()
    assert again == first
    (remade,) = made(snapshots)
    assert remade == snap and not snapshot._check(snapshot.Snapshot(snap, 2), snap.name)


def test_stale_snapshots_are_never_used(artifacts, snapshots):
    machine = load_machine("sx-pair")
    run(artifacts, machine)
    (snap,) = made(snapshots)
    # a parameter that reaches a board: another key, another snapshot
    other = load_machine("sx-pair", parse_overrides(["boards.sx.sxm.recv_insns=800"]))
    _, r = run(artifacts, other)
    assert len(made(snapshots)) == 2
    assert "started at the boot barrier" not in (r.run_dir / "fabric.log").read_text()
    # a snapshot of another format (an older retrolink) under the same key
    manifest = json.loads((snap / snapshot.MANIFEST).read_text())
    manifest["format"] = snapshot.FORMAT + 1
    (snap / snapshot.MANIFEST).write_text(json.dumps(manifest))
    _, r = run(artifacts, machine)
    assert "started at the boot barrier" not in (r.run_dir / "fabric.log").read_text()
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
