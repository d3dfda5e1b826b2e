"""What `retrolink run` tells the user when something goes wrong (docs/reliability.md).
Each of these was reported as a success, or as the wrong failure, before."""
import os
import stat
from pathlib import Path

import pytest
from helpers import run_retrolink

from retrolink.model.machine import load_machine
from retrolink.progress import StepFailed
from retrolink.run import node_output
from retrolink.run.node_command import Artifacts
from retrolink.run.runner import run_cluster

FAULT = "modprobe rl_fault && echo {} > /sys/kernel/debug/rl_fault/provoke"


def test_a_kernel_warning_or_oops_fails_a_run_whose_command_finished(artifacts):
    """node0's kernel WARNs and its command goes on; node1 Oopses inside its command.
    Both fail the run, naming the node, the kernel's words and the kernel log."""
    cmd = (f'case $RETROLINK_NODE in 0) {FAULT.format("warn")}; echo survived;; '
           f'1) {FAULT.format("oops")}; echo unreachable;; esac')
    r = run_retrolink("run", "plain", "--", cmd)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[node0] survived" in r.stdout
    assert "node0: the guest kernel reported a problem: WARNING:" in r.stderr, r.stderr
    assert "rl_fault.c" in r.stderr, r.stderr       # where the kernel warned
    assert "node1: the guest kernel reported a problem:" in r.stderr
    assert "kernel BUG at" in r.stderr or "Oops" in r.stderr, r.stderr
    assert "node1: command exited with status" in r.stderr
    for n in (0, 1):
        assert f"node{n}-kernel.log" in r.stderr


def test_an_initramfs_that_did_not_unpack_fails_the_run():
    """With too little memory the kernel boots without its whole initramfs and the
    command printed nothing, rc=0: that was a success."""
    from retrolink.run.diagnosis import kernel_complaints
    log = ["[    2.856796] Initramfs unpacking failed: write error", "[    3.0] ok"]
    assert kernel_complaints(log) == ["Initramfs unpacking failed: write error"]


def test_output_that_looks_like_the_end_marker_is_kept(artifacts):
    """A command printing the old end marker, or one with a guessed nonce, goes on."""
    cmd = ("echo '@@retrolink-end rc=0'; echo '@@retrolink-end-0123456789abcdef rc=7'; "
           "printf 'no newline at the end'")
    r = run_retrolink("run", "plain", "--node", "0", "--", cmd)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] @@retrolink-end rc=0",
                                     "[node0] @@retrolink-end-0123456789abcdef rc=7",
                                     "[node0] no newline at the end"]


def test_output_is_read_once_however_long_it_grows(tmp_path, monkeypatch):
    """5 MB written in 1000 pieces, polled after each: every byte is read once (the old
    reader re-read the whole file every 20 ms: quadratic)."""
    read = []

    class Counting:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def seek(self, n):
            self.f.seek(n)

        def read(self):
            data = self.f.read()
            read.append(len(data))
            return data
    monkeypatch.setattr(node_output, "open", lambda p, m: Counting(open(p, m)), raising=False)
    path = tmp_path / "out"
    out = node_output.NodeOutput(path, "@@retrolink-end-x")
    line = b"y" * 4999 + b"\n"
    with open(path, "wb") as f:
        f.write(b"@@retrolink-begin node=0\n")
        for _ in range(1000):
            f.write(line)
            f.flush()
            out.poll()
        f.write(b"@@retrolink-end-x rc=0\n[ 1.0] kernel line\n")
    out.poll(final=True)
    assert sum(read) == path.stat().st_size
    assert len(out.lines) == 1000 and out.finished and out.exit_code == 0
    assert out.kernel_log == ["[ 1.0] kernel line"]


def _fake(tmp_path: Path, name: str, body: str) -> Path:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(p.stat().st_mode | stat.S_IXUSR)
    return p


def test_qemus_own_error_is_named_with_its_last_words(tmp_path, monkeypatch):
    """QEMU's error exit (status 1) was taken for the guest's normal end, and the user
    was told 'did not boot ... no kernel panic'."""
    monkeypatch.setenv("RETROLINK_RUNS", str(tmp_path / "runs"))
    qemu = _fake(tmp_path, "qemu", "echo \"qemu-system-x86_64: cannot set up guest memory "
                 "'pc.ram': Cannot allocate memory\" >&2; exit 1")
    art = Artifacts(qemu=qemu, kernel=Path("k"), initrd=Path("i"), fabric=Path("f"))
    result = run_cluster(load_machine("plain"), art, {0: "true"}, "t", timeout_s=60)
    assert not result.ok
    problem = result.nodes[0].problem
    assert problem.startswith("node0: QEMU failed with exit status 1; QEMU said: "
                              "qemu-system-x86_64: cannot set up guest memory"), problem
    assert "did not boot" not in problem


def test_a_fabric_that_refuses_to_start_is_an_error_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("RETROLINK_RUNS", str(tmp_path / "runs"))
    fabric = _fake(tmp_path, "fabric", "[ \"$1\" = --check ] && exit 0\n"
                   "echo 'fabric: conf:3: topology: bad rate' >&2; exit 2")
    art = Artifacts(qemu=Path("q"), kernel=Path("k"), initrd=Path("i"), fabric=fabric)
    with pytest.raises(StepFailed, match="the fabric refused to start .it failed with exit "
                       "status 2.: fabric: conf:3: topology: bad rate"):
        run_cluster(load_machine("sx-pair"), art, {}, "t", timeout_s=60)


def test_a_link_with_less_latency_than_an_instruction_is_refused_before_boot(tmp_path):
    """A zero-latency p2p link passes the schema, but no node could ever advance on it:
    the fabric's --check refuses it before any QEMU starts."""
    machine = tmp_path / "zero.toml"
    machine.write_text('[cluster]\nnodes = 2\n[boards.sx]\nmodel = "sx"\nnetwork = "l"\n'
                       '[networks.l]\ntopology = "p2p"\nrate = "12.5MB/s"\n')
    runs = tmp_path / "runs"
    r = run_retrolink("run", str(machine), "--", "true", env={"RETROLINK_RUNS": str(runs)})
    assert r.returncode == 2, r.stderr
    assert ("the fabric refuses this machine: fabric: the topology's least latency (1 ns, "
            "last hop) is shorter than node 0's instruction time (8 ns)") in r.stderr, r.stderr
    assert not list(runs.glob("*/node*-qemu.log")), "a node was started"


def test_last_words_are_not_the_counters_every_exit_says(tmp_path):
    """A QEMU's boards and NICs say their counters at every exit, after an error too."""
    from retrolink.run.diagnosis import last_words
    log = tmp_path / "node0-qemu.log"
    log.write_text("qemu-system-x86_64: retrolink node 0: fabric connection lost\n"
                   "retrolink-fc node 0: causality_violations=0\n\n")
    assert last_words(log) == "qemu-system-x86_64: retrolink node 0: fabric connection lost"


BANNER = "-" * 74 + "\n"


def test_a_shards_last_words_name_the_shard_not_mpiruns_banner(tmp_path):
    """The fabric in shards (docs/fabric.md, "Shards"): mpirun's words after a shard
    ended are its banner; the run names the shard, with its host."""
    from retrolink.run.diagnosis import last_words
    log = tmp_path / "fabric.log"
    log.write_text("fabric shard 0 (vm): all 2 node(s) connected; cluster started\n" + BANNER +
                   "mpirun noticed that process rank 1 with PID 0 on node vm exited on "
                   "signal 9 (Killed).\n" + BANNER)
    assert last_words(log) == "fabric shard 1 (on vm) was killed by signal 9 (Killed)"
    log.write_text("fabric shard 1 (vm): internal error: shard 0's exchange: malformed\n"
                   + BANNER + "Primary job  terminated normally, but 1 process returned\n"
                   "a non-zero exit code. Per user-direction, the job has been aborted.\n"
                   + BANNER)
    assert last_words(log) == "fabric shard 1 (vm): internal error: shard 0's exchange: malformed"
