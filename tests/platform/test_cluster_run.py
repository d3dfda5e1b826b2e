"""Integration: boot the 2-node plain cluster and run commands, as a user would."""
import pytest
from helpers import run_retrolink

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")


def test_command_with_arguments_runs_on_every_node():
    r = run_retrolink("run", "plain", "--", "sh", "-c", 'echo "a  b"; echo node=$RETROLINK_NODE')
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == ["[node0] a  b", "[node0] node=0", "[node1] a  b", "[node1] node=1"]


def test_one_argument_is_a_shell_command_line():
    r = run_retrolink("run", "plain", "--node", "0", "--", "echo one two | wc -w")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] 2"]


def test_failing_command_fails_the_run_and_names_the_node():
    r = run_retrolink("run", "plain", "--", "sh", "-c", '[ "$RETROLINK_NODE" = 0 ] || exit 3')
    assert r.returncode == 1
    assert "node1: command exited with status 3" in r.stderr
    assert "node0: command" not in r.stderr


def test_one_node_only():
    r = run_retrolink("run", "plain", "--node", "1", "--", "hostname")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node1] node1"]


def test_panic_is_reported_with_console_log():
    r = run_retrolink("run", "plain", "--node", "0", "--", "sh", "-c",
                      "echo c > /proc/sysrq-trigger")
    assert r.returncode == 1
    assert "node0 did not finish its command" in r.stderr
    assert "Kernel panic" in r.stderr and "console log:" in r.stderr


def test_hung_node_times_out_and_is_named():
    # --timeout counts from the moment every node booted, however long booting took
    r = run_retrolink("run", "plain", "--node", "1", "--timeout", "15", "--", "sh", "-c",
                      "while :; do :; done")
    assert r.returncode == 1
    assert "node1 did not finish its command: timed out after 15 s" in r.stderr


def test_a_boot_that_takes_too_long_is_named_with_its_limit():
    # cold: a start from the snapshot may well be ready within the second
    r = run_retrolink("run", "plain", "--cold", "--set", "cluster.boot_timeout_s=1", "--", "true")
    assert r.returncode == 1
    assert ("node0 did not boot: timed out after 1 s of booting (wall clock; "
            "cluster.boot_timeout_s)") in r.stderr


# statfs magic of the root (linux/magic.h): what the initramfs was unpacked into, or the
# overlay over the read-only image
ROOT_MAGIC = {"tmpfs": "1021994", "ramfs": "858458f6", "pmem": "794c7630"}


@pytest.mark.parametrize("root_fs", ["tmpfs", "ramfs", "pmem"])
def test_the_least_memory_the_checks_allow_boots_the_guest(root_fs):
    """At units.MIN_NODE_MIB (root on a tmpfs), MIN_NODE_MIB_RAMFS (on a ramfs) and
    MIN_NODE_MIB_PMEM (on the read-only image) the guest boots and runs its command, its
    kernel silent: a size the checks let through must not fail in the guest (cold: the
    boot itself). The root is the file system asked for."""
    from retrolink.model import units
    mib = {"tmpfs": units.MIN_NODE_MIB, "ramfs": units.MIN_NODE_MIB_RAMFS,
           "pmem": units.MIN_NODE_MIB_PMEM}[root_fs]
    r = run_retrolink("run", "plain", "--cold", "--node", "0", "--set",
                      f"cluster.memory_mib={mib}", "--set", f"cluster.root_fs={root_fs}",
                      "--", "sh", "-c", "echo booted; stat -f -c %t /")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] booted", f"[node0] {ROOT_MAGIC[root_fs]}"]


def test_bad_machine_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[cluster]\nnodes = 2\nfoo = 1\n")
    r = run_retrolink("run", str(bad), "--", "true")
    assert r.returncode == 2
    assert f"{bad}: invalid machine file" in r.stderr and "cluster.foo: unknown field" in r.stderr


def test_multiline_output_and_deterministic_guest_time():
    """Same command twice: byte-identical output, including guest virtual time."""
    cmd = ("sh", "-c", "for i in 1 2 3; do echo line $i; done; cat /proc/uptime; date")
    a = run_retrolink("run", "plain", "--node", "0", "--", *cmd)
    b = run_retrolink("run", "plain", "--node", "0", "--", *cmd)
    assert a.returncode == 0 and b.returncode == 0
    assert a.stdout.splitlines()[:3] == ["[node0] line 1", "[node0] line 2", "[node0] line 3"]
    assert a.stdout == b.stdout


def test_a_command_of_many_pages_runs_whole():
    """A command reaches its node in a fw_cfg slot of fixed size, read a page at a time
    up to its length (guest/rootfs/init): a script of several pages runs to its last line,
    and nothing of the slot's padding follows it."""
    script = "".join(f"x{i}={i}\n" for i in range(3000)) + 'echo "$x0 $x2999"; wc -c < /run/cmd.sh'
    r = run_retrolink("run", "plain", "--node", "0", "--", script)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] 0 2999", f"[node0] {len(script) + 1}"]


def test_boot_barrier_copies_a_length_and_says_what_is_wrong():
    """init's boot_barrier (guest/bin/boot), run again after the barrier (passed: it only
    copies): the slot's first LENGTH bytes and the marker; a bad length file, a slot
    shorter than its length and bad arguments each a message and their exit status."""
    script = "\n".join([
        "cd /tmp; printf 'abcdef\\0\\0' > slot; printf 00000004 > len; printf mark > end",
        "boot_barrier --length len --slot slot --out out --print end; echo \" rc=$?\"",
        "cat out; echo",
        "printf 0004x > bad; boot_barrier --length bad --slot slot --out o2; echo rc=$?",
        "printf 12 > long; boot_barrier --length long --slot slot --out o3; echo rc=$?",
        "boot_barrier --length nosuch --slot slot --out o4; echo rc=$?; [ -e o4 ] || echo none",
        "boot_barrier --slot slot --out o5; echo rc=$?",
    ])
    r = run_retrolink("run", "plain", "--node", "0", "--", script)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "[node0] mark rc=0", "[node0] abcd",
        '[node0] boot_barrier: bad holds "0004x", not a length', "[node0] rc=1",
        "[node0] boot_barrier: slot ends 4 bytes short of its length", "[node0] rc=1",
        "[node0] rc=0", "[node0] none",
        "[node0] boot_barrier: missing --length (see boot_barrier --help)", "[node0] rc=2"]


def test_a_command_longer_than_its_slot_is_a_clear_error():
    # several words: one argument of a program may not pass 128 KiB (MAX_ARG_STRLEN)
    words = ["echo", *["x" * 100_000] * 3]
    r = run_retrolink("run", "plain", "--", *words)
    assert r.returncode == 2
    assert "node 0: the command is 300008 bytes, more than a node takes (262144)" in r.stderr
    assert "booting" not in r.stderr and "Traceback" not in r.stderr


def test_node_out_of_range_is_a_clear_error():
    r = run_retrolink("run", "plain", "--node", "5", "--", "true")
    assert r.returncode == 2
    assert "--node 5: this machine has nodes 0..1" in r.stderr
    assert "Traceback" not in r.stderr


def test_profiling_a_node_that_runs_no_command_is_a_clear_error():
    r = run_retrolink("run", "plain", "--node", "1", "--insn-profile", "0", "--", "true")
    assert r.returncode == 2
    assert "--insn-profile 0: node 0 runs no command (--node chose 1)" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("setting,cmdline,spectre_v2", [
    ("auto", False, "Mitigation: Retpolines"),
    ("off", True, "Vulnerable"),
])
def test_mitigations_reach_the_guest_kernel(setting, cmdline, spectre_v2):
    """cluster.mitigations: on the kernel's command line with "off", and the kernel's own
    report of what it mitigates changes with it (docs/machines.md)."""
    r = run_retrolink("run", "plain", "--node", "0", "--set", f"cluster.mitigations={setting}",
                      "--", "cat /proc/cmdline /sys/devices/system/cpu/vulnerabilities/spectre_v2")
    assert r.returncode == 0, r.stderr
    line, report = [l.removeprefix("[node0] ") for l in r.stdout.splitlines()]
    assert ("mitigations=off" in line.split()) == cmdline, line
    assert report.startswith(spectre_v2), report


def test_a_capped_translation_cache_changes_no_output(artifacts):
    """cluster.tb_size_mib reaches QEMU (-accel tcg,tb-size=) and, with a cache small
    enough to be flushed and filled again, the guest does and times everything the same:
    translation never changes what guest code does or how many instructions it runs."""
    from retrolink.model.machine import load_machine
    from retrolink.run.runner import run_cluster
    small = load_machine("plain", {"cluster.tb_size_mib": 8})
    cmd = ("echo MARK ready; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; "
           "ls -R / | wc -l; cat /proc/uptime")
    runs = [run_cluster(m, artifacts, {0: cmd}, "tb-size")
            for m in (load_machine("plain"), small)]
    for r in runs:
        assert r.ok, r.problems
    assert runs[0].nodes[0].lines == runs[1].nodes[0].lines
    cmdlines = [(r.run_dir / "node0-qemu.cmdline").read_text().split() for r in runs]
    assert "tcg" in cmdlines[0] and "tcg,tb-size=8" in cmdlines[1]
    # each node's QEMU resident memory when its mark appeared: a booted 256 MiB guest
    # and QEMU itself, not nothing and not more than the guest's RAM and a full cache
    for r in runs:
        rss_mib = r.mark_rss_kib[(0, "ready")] / 1024
        assert 64 < rss_mib < 256 + 1024, rss_mib
