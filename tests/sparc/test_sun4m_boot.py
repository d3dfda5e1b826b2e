"""A SPARCstation 5 node (QEMU's sun4m, docs/sparc.md) boots its sparc32 kernel and
initramfs under OpenBIOS, passes the boot barrier on its system bus, runs its command
(from fw_cfg, through the kernel's view of it below 4 GiB) and returns the output on its
result port."""
import os

import pytest
from helpers import run_retrolink

from retrolink.progress import StepFailed

MACHINE = "sparc-plain"


@pytest.fixture(scope="module")
def sparc_build():
    """The sparc32 build (QEMU's sparc target, the kernel, klibc): cached, built the first
    time (docs/sparc.md has the times). Skipped only where the cross toolchain
    cannot be installed (not root, and deps/apt-sparc.txt's packages missing)."""
    from retrolink.build.pipeline import build_for
    from retrolink.model.machine import load_machine
    try:
        return build_for(load_machine(MACHINE))
    except StepFailed as e:
        if "missing Debian packages" in str(e) and os.geteuid() != 0:
            pytest.skip(f"the sparc32 cross toolchain is not installed and cannot be: {e}")
        raise


def run(*command):
    # cold: each run boots (the snapshot test below runs warm)
    return run_retrolink("run", MACHINE, "--cold", "--", *command)


def test_the_node_runs_its_command_and_returns_its_output(sparc_build):
    r = run("sh", "-c", 'echo "a  b"; uname -m; echo node=$RETROLINK_NODE; '
                  'cat /proc/sys/kernel/hostname')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] a  b", "[node0] sparc", "[node0] node=0",
                                     "[node0] node0"]


def test_the_kernel_is_the_sun4m_one_on_the_ss5(sparc_build):
    r = run("cat", "/proc/cpuinfo")
    assert r.returncode == 0, r.stderr
    assert "sun4m" in r.stdout, r.stdout


def test_the_barrier_on_the_system_bus_says_passed(sparc_build):
    # the status register after the init script's arrival: PASSED (2), as on the PC
    r = run("devmem", "0x71a00000", "8")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] 0x02"]


def test_a_failing_command_fails_the_run(sparc_build):
    r = run("sh", "-c", "exit 3")
    assert r.returncode == 1
    assert "node0: command exited with status 3" in r.stderr


def test_a_snapshot_at_the_barrier_gives_the_same_output_as_a_cold_boot(sparc_build):
    """The first warm run saves the node at the boot barrier, the next starts there;
    both, and a cold boot, print the same virtual uptime: runs are deterministic."""
    command = ("sh", "-c", "uname -m; cat /proc/uptime")
    cold = run(*command)
    first = run_retrolink("run", MACHINE, "--", *command)
    again = run_retrolink("run", MACHINE, "--", *command)
    for r in (cold, first, again):
        assert r.returncode == 0, r.stderr
    assert "starting from the snapshot" in again.stderr, again.stderr
    assert cold.stdout == first.stdout == again.stdout, (cold.stdout, again.stdout)
