"""norma.ko's Mach IPC on one node (local IPC; docs/boards/norma.md): rights, inline and OOL
content, queue limits, accepted notifications, task death, killed processes, bad arguments,
random calls (mach_test fuzz: 3000, a fixed seed) and module unload, each checked by a mach_test subcommand (guest/bin/mach/) in the guest.
One boot of the `plain` machine runs them all; norma.ko loads with its stand-in transport
(de_stub.c, or de_*.c once it lands: with no Cenju-3 interface it is one node alone).
The same subcommands take --node N to run against a server on another node."""
import pytest
from mach_cases import SUBCOMMANDS, check_section, run_all, run_on_node0

pytestmark = pytest.mark.usefixtures("artifacts")

# after the subcommands: unloading is refused while a task is open, and works after
UNLOAD = ("mach_test hold --seconds 60 & H=$!; sleep 1; "
          "rmmod norma && echo unload-while-open || echo unload-refused; "
          "kill $H; wait $H; rmmod norma && echo unloaded-after-close; "
          "modprobe norma && mach_test inline > /dev/null && echo reloaded-works")


@pytest.fixture(scope="module")
def local_run():
    return run_on_node0(f"modprobe norma || echo modprobe-failed; {run_all(SUBCOMMANDS)}; "
                        f"{UNLOAD}")


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_subcommand_passes_every_case(local_run, name):
    check_section(local_run, name, remote=False)


def test_module_unload_refused_while_a_task_is_open(local_run):
    assert "modprobe-failed" not in local_run
    assert "unload-refused" in local_run and "unload-while-open" not in local_run, local_run
    assert "unloaded-after-close" in local_run, local_run[-10:]
    assert "reloaded-works" in local_run, local_run[-10:]

