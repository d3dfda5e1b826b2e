"""norma.ko's paths to other nodes (ipc_remote.c), run on one node: norma_loop.ko is the
same IPC layer over a mirror transport (guest/kernel/norma/de_loop.c) in which node 1 is
this node seen through a mirror, so `mach_test X --node 1` talks to the echo server here
through proxies, uids, pinned OOL pages read by physical address, the window of
unaccepted messages and "message accepted" (docs/boards/norma.md). The real transport's
own tests run these subcommands between two Cenju-3 nodes."""
import pytest
from mach_cases import check_section, run_all, run_on_node0

pytestmark = pytest.mark.usefixtures("artifacts")

# death and killed look their own ports up through the mirror: every right to them is a
# proxy's, so a task's death reaches its senders as "message accepted (dead)"
REMOTE = ("rights", "inline", "ool", "qlimit", "notify", "death", "killed", "badargs", "fuzz")
# many to one: 4 senders here and 4 "on node 1" (through the mirror) to one port
MANY_TO_ONE = ('echo "== manytoone"; for i in 4 5 6 7; do mach_test sendto --node 1 --id $i & '
               'done; mach_test manytoone --senders 4 --remote 4; echo "rc-manytoone=$?"; wait')


@pytest.fixture(scope="module")
def loop_run():
    cmd = ("modprobe norma_loop || echo modprobe-failed; "
           "mach_test serve --seconds 300 & S=$!; sleep 1; "
           f"{run_all(REMOTE, '--node 1')}; kill $S; wait $S; {MANY_TO_ONE}; "
           "rmmod norma_loop && echo unloaded")
    return run_on_node0(cmd)


@pytest.mark.parametrize("name", REMOTE + ("manytoone",))
def test_subcommand_passes_every_case_through_the_mirror(loop_run, name):
    check_section(loop_run, name, remote=True)


def test_unload_after_remote_traffic(loop_run):
    """Every proxy, pending message and deferred notice is gone: the module unloads (and
    its exit would WARN, failing the run, if a port were left)."""
    assert "modprobe-failed" not in loop_run
    assert "unloaded" in loop_run, loop_run[-10:]
