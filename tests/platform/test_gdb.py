"""`--gdb N` (docs/debugging.md): gdb attaches to a node through the script retrolink
writes, reads our module's symbols and memory, and detaches; a node held at a
breakpoint holds the cluster, which then resumes and prints what it prints without gdb."""
import contextlib
import os
import signal
import subprocess
import time

import pytest
from faults import BackgroundRun
from helpers import REPO, run_retrolink, session_env, shell_run


pytestmark = pytest.mark.usefixtures("artifacts")

# node 1 echoes node 0's messages: every round trip passes its sx_ioctl (run writes the
# gdb script before the nodes start, so gdb is in before the first); the latencies are
# virtual time, the same in every run
PINGPONG = ("case $RETROLINK_NODE in 0) sx_bench pingpong --peer 1 --sizes 16,1024 "
            "--iters 1000;; 1) sx_bench echo;; esac")


def gdb_batch(script, *commands, timeout=120) -> str:
    args = ["gdb", "-nx", "-batch", "-x", str(script)]
    for c in commands:
        args += ["-ex", c]
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    return r.stdout + r.stderr


def wait_for_script(runs, timeout=300):
    """Until retrolink has written node 1's gdb script with its module symbols into the
    one run directory under runs; the script's path."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in runs.glob("*/node1.gdb"):
            if "add-symbol-file" in path.read_text():
                return path
        time.sleep(0.2)
    raise AssertionError(f"no gdb script with symbols in {runs} within {timeout} s")


@contextlib.contextmanager
def up_with_gdb(tmp_path):
    """`retrolink up sx-pair --gdb 1`: yields its latest-up folder and node 1's gdb script
    once written; then ends it, and requires that it said how to attach."""
    runs = tmp_path / "runs"
    proc = subprocess.Popen([str(REPO / "retrolink"), "up", "sx-pair", "--gdb", "1"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, **session_env, RETROLINK_RUNS=str(runs)))
    try:
        script = wait_for_script(runs)
        yield runs / "latest-up", script
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert "node1: attach gdb with: gdb -x " in out, out
    assert proc.returncode == 0, out


def address(gdb_out: str, symbol: str) -> str:
    """The address `info address SYMBOL` gave, as /proc/kallsyms writes it."""
    addr = gdb_out.split(f'Symbol "{symbol}" is a function at address ')[1].split(".")[0]
    return f"{int(addr, 16):016x}"


def test_gdb_attaches_reads_our_symbols_and_detaches(tmp_path):
    with up_with_gdb(tmp_path) as (latest, script):
        out = gdb_batch(script, "print sx_driver.name", "info address sx_ioctl",
                        "print/x $pc", "detach")
        assert "$1 = " in out and '"sx"' in out, out         # a global read from the guest
        assert "Inferior 1 (process 1) detached" in out, out
        # the address gdb has from our sx.ko matches the guest's own /proc/kallsyms
        listed = shell_run(latest / "node1-shell.sock", "grep -w sx_ioctl /proc/kallsyms",
                           "@@kallsyms")
        assert f"{address(out, 'sx_ioctl')} t sx_ioctl\t[sx]" in listed, (out, listed)
        # and the node runs on after the detach
        assert "node1" in shell_run(latest / "node1-shell.sock", "hostname", "@@host")


def test_gdb_has_the_guest_kernels_symbols_once_fetched(tmp_path, artifacts):
    from retrolink.run import gdb
    abi = gdb.kernel_abi(artifacts.kernel)
    if not gdb.debug_vmlinux(abi).is_file():
        pytest.skip("the guest kernel's symbols are fetched only on request: "
                    "./retrolink debug-symbols (0.9 GB)")
    with up_with_gdb(tmp_path) as (latest, script):
        out = gdb_batch(script, "info address __x64_sys_ioctl",
                        "print init_uts_ns.name.release", "detach")
        assert f'"{abi}"' in out, out              # the kernel's own data, by its type
        listed = shell_run(latest / "node1-shell.sock",
                           "grep -w __x64_sys_ioctl /proc/kallsyms", "@@kallsyms")
        # vmlinux's symbols shifted by the boot's KASLR offset
        assert f"{address(out, '__x64_sys_ioctl')} T __x64_sys_ioctl" in listed, (out, listed)


def test_an_out_of_range_gdb_node_is_refused_before_anything_boots():
    r = run_retrolink("run", "sx-pair", "--gdb", "2", "--", "true", timeout=60)
    assert r.returncode == 2
    assert "--gdb 2: this machine has nodes 0..1" in r.stderr, r.stderr
    assert "booting" not in r.stderr


def test_a_breakpoint_holds_the_cluster_which_resumes_with_the_same_output(tmp_path):
    plain = run_retrolink("run", "sx-pair", "--", PINGPONG, timeout=600)
    assert plain.returncode == 0, plain.stderr
    run = BackgroundRun(tmp_path, "sx-pair", "--gdb", "1", "--", PINGPONG)
    try:
        script = wait_for_script(run.runs)
        # held at the breakpoint for longer than the fabric's stall report (5 s), then
        # 50 single steps (the script's Qqemu.sstep: interrupts taken as they come)
        out = gdb_batch(script, "break sx_ioctl", "continue",
                        "print $pc == sx_ioctl", "shell sleep 8", "delete", "stepi 50",
                        "print $pc != sx_ioctl", "detach")
        r = run.finish(timeout=600)
    finally:
        run.kill()
    assert "Breakpoint 1, " in out and "sx_ioctl" in out, out
    assert "$1 = 1" in out and "$2 = 1" in out, out
    assert "Inferior 1 (process 1) detached" in out, out
    assert r.returncode == 0, r.stderr
    assert "node1 is stopped in gdb" in r.stderr, r.stderr
    results = [l for l in r.stdout.splitlines() if l.startswith("[node")]
    assert results == [l for l in plain.stdout.splitlines() if l.startswith("[node")]
    assert any("RESULT latency_us size=1024" in l for l in results), r.stdout


def test_the_script_places_the_kernel_and_modules_where_the_guest_says(tmp_path):
    from retrolink.run import gdb
    layout = gdb.GuestLayout()
    dump = ["@@gdb kernel ffffffff9a000000",
            "@@gdb section sx .text 0xffffffffc040d000",
            "@@gdb section sx .data 0xffffffffc0411040",
            "@@gdb section sx .no_such_section 0xffffffffc0419000",
            "@@gdb section nomodule .text 0xffffffffc0500000",
            "stty -echo; awk '$3 == \"_text\" ...' /proc/kallsyms; echo @@gdb-end"]
    assert [layout.add(line) for line in dump] == [True] * 5 + [False]
    # a vmlinux whose _text is linked at 0x1000: the KASLR offset is the rest
    src = tmp_path / "k.s"
    src.write_text(".globl _text\n.text\n.skip 0x1000\n_text: nop\n")
    vmlinux = tmp_path / "vmlinux"
    subprocess.run(["gcc", "-c", "-o", vmlinux, src], check=True)
    ko = gdb.our_modules()["sx"]
    text, notes = gdb.script_text(tmp_path / "n.sock", layout, {"sx": ko}, vmlinux)
    lines = text.splitlines()
    assert f"symbol-file -o {0xffffffff9a000000 - 0x1000:#x} {vmlinux}" in lines
    # only the sections the module has; no module we did not build
    assert f"add-symbol-file {ko} 0xffffffffc040d000 -s .data 0xffffffffc0411040" in lines
    assert not any("nomodule" in line for line in lines)
    assert lines[-2:] == [f"target remote {tmp_path / 'n.sock'}",
                          "maintenance packet Qqemu.sstep=0x1"]
    assert notes == []
    text, notes = gdb.script_text(tmp_path / "n.sock", layout, {"sx": ko}, tmp_path / "none")
    assert "symbol-file -o" not in text and "retrolink debug-symbols" in notes[0]
    assert gdb.split_dump(["@@gdb kernel 1", "@@gdb-end", "@@gdb output"]) == ["@@gdb output"]
    # --cold: the script is written when the node's command has printed the dump
    said = []
    target = gdb.target_for("x86_64", tmp_path / "vmlinuz-6.1.0-1-amd64")
    reader = gdb.DumpReader(tmp_path, 1, tmp_path / "n.sock", target, said.append)
    reader(0, ["@@gdb-end"])
    reader(1, dump[:3])
    assert not said and not (tmp_path / "node1.gdb").exists()
    reader(1, ["@@gdb-end", "output"])
    assert said == [f"node1: attach gdb with: gdb -x {tmp_path / 'node1.gdb'}",
                    "  (no guest kernel symbols: ./retrolink debug-symbols fetches Debian's "
                    "linux-image-<abi>-dbg (about 0.9 GB) once into the cache)"]
    assert f"add-symbol-file {ko} 0xffffffffc040d000 -s .data 0xffffffffc0411040" in \
        (tmp_path / "node1.gdb").read_text()


def test_a_gdbstub_does_not_change_the_snapshot_key(tmp_path):
    """A node with --gdb starts from the snapshot a run without it made (docs/snapshots.md)."""
    from retrolink.run import gdb, snapshot
    qemu = tmp_path / "qemu-system-x86_64"
    qemu.write_bytes(b"qemu")
    argv = [str(qemu), "-icount", "shift=3,sleep=off"]
    with_gdb = argv + gdb.qemu_args(tmp_path / gdb.socket_name(1))
    assert snapshot.snapshot_key([qemu], [argv, argv], "nodes 2\n", [tmp_path], []) == \
        snapshot.snapshot_key([qemu], [argv, with_gdb], "nodes 2\n", [tmp_path], [])
    assert snapshot.snapshot_key([qemu], [argv, argv], "nodes 2\n", [tmp_path], []) != \
        snapshot.snapshot_key([qemu], [argv, argv + ["-S"]], "nodes 2\n", [tmp_path], [])
