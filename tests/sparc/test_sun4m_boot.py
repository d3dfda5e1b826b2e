"""A SPARCstation 5 node (QEMU's sun4m, docs/sparc.md) boots its sparc32 kernel and
initramfs under OpenBIOS, passes the boot barrier on its system bus, runs its command
(from fw_cfg, through the kernel's view of it below 4 GiB) and returns the output on its
result port."""
from helpers import run_retrolink

MACHINE = "sparc-plain"


def run(*command):
    # cold: each run boots (the snapshot test below runs warm)
    return run_retrolink("run", MACHINE, "--cold", "--", *command)


def test_the_node_runs_its_command_and_returns_its_output(sparc):
    r = run("sh", "-c", 'echo "a  b"; uname -m; echo node=$RETROLINK_NODE; '
                  'cat /proc/sys/kernel/hostname')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] a  b", "[node0] sparc", "[node0] node=0",
                                     "[node0] node0"]


def test_the_kernel_is_the_sun4m_one_on_the_ss5(sparc):
    r = run("cat", "/proc/cpuinfo")
    assert r.returncode == 0, r.stderr
    assert "sun4m" in r.stdout, r.stdout


def test_the_barrier_on_the_system_bus_says_passed(sparc):
    # the status register after the init script's arrival: PASSED (2), as on the PC
    r = run("devmem", "0x71a00000", "8")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[node0] 0x02"]


def test_a_failing_command_fails_the_run(sparc):
    r = run("sh", "-c", "exit 3")
    assert r.returncode == 1
    assert "node0: command exited with status 3" in r.stderr


def test_a_snapshot_at_the_barrier_gives_the_same_output_as_a_cold_boot(sparc):
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
