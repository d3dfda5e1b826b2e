"""`--gdb N` on a SPARCstation node (docs/debugging.md): the script is for sparc, with our
sparc32 kernel's symbols (no KASLR: where the build linked them) and the FC driver's
module where the node loaded it; gdb-multiarch attaches, reads both and detaches."""
import subprocess

from faults import BackgroundRun


def test_gdb_multiarch_attaches_reads_the_kernel_and_our_module_and_detaches(sparc, tmp_path):
    # the nodes wait in the kernel (gdb reads the kernel's memory with the CPU's
    # privilege: docs/debugging.md); 3000 virtual s, under the run's limit
    run = BackgroundRun(tmp_path, "puma-iii-ss5", "--gdb", "0", "--", "sh", "-c",
                        "echo ready; sleep 3000")
    try:
        run.wait_for_line(0, "ready")
        script = run.run_dir / "node0.gdb"
        text = script.read_text()
        assert "set architecture sparc" in text, text
        assert "\nsymbol-file " in text and "add-symbol-file " in text and "fc.ko" in text, text
        r = subprocess.run(["gdb-multiarch", "-nx", "-batch", "-x", str(script),
                            "-ex", "print fc_sbus_driver.driver.name",
                            "-ex", "print init_uts_ns.name.machine",
                            "-ex", "detach"],
                           capture_output=True, text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
        out = r.stdout + r.stderr
        assert '"fc"' in out, out                   # our module's data, read from the node
        assert '"sparc"' in out, out                # the kernel's, by its type
        assert "Inferior 1 (process 1) detached" in out, out
    finally:
        run.kill()
