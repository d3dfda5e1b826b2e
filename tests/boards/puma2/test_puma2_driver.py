"""In-guest tests of the PUMA-II driver (guest/kernel/puma2/; docs/boards/puma2.md) on
machines/puma-ii.toml, one boot shared by every test here: the shared RAM disk with
stock tools (mke2fs, mount, dd, md5sum) and its sharing rule, the mapped DSM across the
nodes (a counter under a lock in it), the user interface's errors, a process killed
mid-fault, and rmmod and unbind with the disk mounted and the DSM mapped."""
import pytest
from helpers import kernel_checked, kernel_problems, run_retrolink

pytestmark = pytest.mark.usefixtures("artifacts")

UAPI_CASES = ["mmap_private_refused", "mmap_exec_refused", "mmap_past_end_refused",
              "mmap_offset_past_end_refused", "ioctl_unknown_enotty", "info_bad_pointer_efault",
              "fetch_bad_op_einval", "fetch_past_end_einval", "fetch_reserved_einval",
              "mapped_page_written", "fetch_of_mapped_page_ebusy"]
COUNTER_ITERS = 10
PCI = "0000:00:01.0"    # the board's slot on the nodes (the only PCI device we add)

# The same script on both nodes; `n` is the node. Node 0 is the server: it fills the disk.
SCRIPT = rf"""
n=$(puma2ctl node)
mkdir -p /mnt /mnt2
puma2_driver_test --role uapi
if [ $n = 0 ]; then
  mke2fs -q -b 4096 /dev/puma2disk && mount /dev/puma2disk /mnt &&
  dd if=/dev/urandom of=/mnt/f bs=4096 count=64 2>/dev/null &&
  echo "SUM written $(md5sum < /mnt/f | cut -d' ' -f1)" && umount /mnt
fi
puma2ctl barrier 0
echo 3 > /proc/sys/vm/drop_caches
mount -o ro /dev/puma2disk /mnt && echo "SUM read $(md5sum < /mnt/f | cut -d' ' -f1)"
puma2ctl barrier 1
# the sharing rule: both nodes have it open now
if [ $n = 0 ]; then
  mount /dev/puma2disk /mnt2 2>/dev/null && echo "RULE rw_mount_allowed" || echo "RULE rw_mount_refused"
  dmesg | grep -q "the disk is open on node(s) 1, so every node only reads" && echo "RULE said_why"
else
  dd if=/dev/zero of=/dev/puma2disk bs=4096 count=1 seek=200 2>/dev/null && echo "RULE raw_write_allowed" || echo "RULE raw_write_refused"
fi
puma2ctl barrier 2
puma2ctl counter {COUNTER_ITERS}
# a process killed while its writes move one page between the nodes
puma2_driver_test --role spin & pid=$!
sleep 1
kill -9 $pid; wait $pid 2>/dev/null
puma2ctl barrier 3
puma2ctl faults --pages 4
if [ $n = 1 ]; then
  rmmod puma2 2>/dev/null && echo "UNLOAD allowed" || echo "UNLOAD refused"
  puma2_driver_test --role hold > /tmp/hold.out & hold=$!
  while ! grep -q held /tmp/hold.out; do sleep 0.1; done
  echo {PCI} > /sys/bus/pci/drivers/puma2/unbind && touch /tmp/unbound
  wait $hold; cat /tmp/hold.out
  cat /mnt/f > /dev/null 2>&1 && echo "MOUNTED readable" || echo "MOUNTED io_error"
  umount /mnt && echo "UMOUNT ok"
  echo {PCI} > /sys/bus/pci/drivers/puma2/bind && echo "REBIND ok"
  mount -o ro /dev/puma2disk /mnt && echo "SUM again $(md5sum < /mnt/f | cut -d' ' -f1)"
fi
puma2ctl barrier 4
if [ $n = 0 ]; then
  umount /mnt && mount -o ro /dev/puma2disk /mnt && echo "REMOUNT ok"
fi
puma2ctl barrier 5
"""


@pytest.fixture(scope="module")
def run():
    r = run_retrolink("run", "puma-ii", "--", "sh", "-c", kernel_checked(SCRIPT.strip()), timeout=900)
    lines = {n: [l.removeprefix(f"[node{n}] ") for l in r.stdout.splitlines()
                 if l.startswith(f"[node{n}] ")] for n in (0, 1)}
    return r, lines


def test_run_ends_cleanly_with_no_kernel_problem(run):
    r, _ = run
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-3000:]
    assert not kernel_problems(r)


@pytest.mark.parametrize("node", [0, 1])
def test_user_interface_errors(run, node):
    _, lines = run
    passed = {l.split()[1] for l in lines[node] if l.startswith("PASS ")}
    failed = [l for l in lines[node] if l.startswith("FAIL ")]
    assert not failed, failed
    assert set(UAPI_CASES) <= passed, set(UAPI_CASES) - passed


def test_every_node_reads_the_bytes_the_server_wrote(run):
    _, lines = run
    (written,) = [l.split()[2] for l in lines[0] if l.startswith("SUM written")]
    for n in (0, 1):
        assert [l.split()[2] for l in lines[n] if l.startswith("SUM read")] == [written], n
    assert [l.split()[2] for l in lines[1] if l.startswith("SUM again")] == [written]


def test_the_sharing_rule_refuses_writes_once_another_node_reads(run):
    _, lines = run
    assert "RULE rw_mount_refused" in lines[0] and "RULE said_why" in lines[0]
    assert "RULE raw_write_refused" in lines[1]


def test_counter_under_a_dsm_lock_is_exact_on_every_node(run):
    _, lines = run
    for n in (0, 1):
        counts = [l for l in lines[n] if l.startswith("counter=")]
        assert counts == [f"counter={2 * COUNTER_ITERS} expected={2 * COUNTER_ITERS}"], counts


def test_faults_after_a_killed_process_see_the_written_bytes(run):
    _, lines = run
    (read,) = [l for l in lines[1] if l.startswith("RESULT faults kind=read")]
    assert "wrong=0" in read and "pages=4" in read
    assert any(l.startswith("RESULT faults kind=write") for l in lines[0])


def test_unload_refused_and_unbind_revokes(run):
    _, lines = run
    n1 = lines[1]
    assert "UNLOAD refused" in n1
    assert "PASS sigbus_after_unbind" in n1
    assert "MOUNTED io_error" in n1
    assert "UMOUNT ok" in n1 and "REBIND ok" in n1
    # node 1 left the sharing record when it was unbound: node 0 could remount
    assert "REMOUNT ok" in lines[0]
