"""In-guest tests of the PUMA-III FC driver (guest/kernel/fc/; docs/boards/fc-driver.md):
IP over FC with stock tools, the user device's documented errors and protection, and
removal with traffic in flight. Two nodes on an FC switch; two cluster runs in all, each
shared by the tests that read it."""
import re

import pytest
from helpers import by_role, kernel_checked, run_retrolink

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")

# Two nodes, an FC adapter each, on the fabric's FC switch. Every board parameter at its
# default (src/retrolink/boards/fc.py); the network as 1 Gb/s Fibre Channel.
MACHINE = """
[cluster]
name = "fc-driver-test"
description = "2 nodes, PUMA-III FC adapters on an FC switch (driver tests)"
nodes = 2
memory_mib = "256M"
cpu_mips = 125

[boards.fc]
model = "fc"
network = "fcsw"

[networks.fcsw]
topology = "switch"
rate = "100MB/s"        # 1.0625 Gbaud, 8b/10b: ~100 MB/s of data
overhead_bytes = 12     # SOF 4 + CRC 4 + EOF 4 (the 24-byte header travels in the frame)
mtu = 2200              # FC's largest frame: 24-byte header + 2112 bytes of payload
prop_ns = 500
switch_delay_ns = 1000
bb_credit = 2
"""


# fc_driver_test's cases, by what they show (test_fc_sbus_driver.py runs them too)
UAPI_ERRORS = ("open_twice_ebusy", "reopen_after_close", "info", "info_bad_pointer_efault",
               "unknown_ioctl_enotty", "alloc_zero_einval", "alloc_too_big_einval",
               "alloc_8mib_enomem", "alloc_bad_pointer_efault", "free_unallocated_enoent",
               "free_ring_einval", "dvma_space_fills_and_empties")
MMAP_CASES = ("mmap_regs", "mprotect_exec_refused", "mmap_regs_two_pages_einval",
              "mmap_exec_eperm", "mmap_private_einval", "mmap_between_einval", "mmap_ring",
              "mmap_part_of_ring_einval", "mmap_unallocated_einval",
              "mmap_beyond_buffer_einval", "mmap_inside_buffer_einval", "mmap_buffer",
              "free_mapped_ebusy", "free_partly_mapped_ebusy", "free_after_munmap",
              "free_twice_enoent")
DMA_CASES = ("send_past_buffer_refused", "send_straddling_end_refused",
             "send_unallocated_refused", "send_beyond_table_refused", "send_from_buffer",
             "free_after_send", "send_from_freed_refused")
FORK_CASES = ("madvise_dofork_refused", "fork_child_inherits_no_mapping",
              "fork_child_info_eacces", "fork_child_alloc_eacces", "fork_child_free_eacces",
              "fork_child_mmap_regs_eacces", "fork_child_mmap_ring_eacces",
              "fork_child_exited", "fork_owner_still_works", "fork_owner_thread_may_call",
              "fork_owner_frees_its_buffer", "fork_reopen_after_close",
              "owner_killed_child_holds_ebusy", "orphan_child_info_eacces",
              "open_after_orphan_closed", "orphan_child_exited")
UNBIND_CASES = ("ioctl_after_unbind_enodev", "mmap_after_unbind_enodev",
                "regs_sigbus_after_unbind", "dma_sigbus_after_unbind", "open_after_rebind")


def run(tmp_path_factory, cmd: str, timeout: str = "400"):
    machine = tmp_path_factory.mktemp("fc-driver") / "fc-driver-test.toml"
    machine.write_text(MACHINE)
    return run_retrolink("run", str(machine), "--timeout", timeout, "--", "sh", "-c", cmd,
                         timeout=int(timeout) + 120)


def passes(r, node: int) -> tuple[set, list]:
    """fc_driver_test's PASS names and FAIL lines on one node."""
    prefix = f"[node{node}] "
    lines = [l.removeprefix(prefix) for l in r.stdout.splitlines() if l.startswith(prefix)]
    return ({l.split()[1] for l in lines if l.startswith("PASS ")},
            [l for l in lines if l.startswith("FAIL ")])


# ---- run 1: the user device, then IP over FC with stock tools ------------------------

# node 1 serves qperf and iperf3 and reads node 0's raw sends in its ring; node 0 runs
# the uapi tests (which end with those sends), the fork tests, then ping, qperf and
# iperf3. node 1 stays up until the iperf3 test is over (a bounded wait: its server
# serves one test). The stock tools' traffic is what this run spends its host time on
# (a guest second of TCP at full rate costs tens of host seconds): qperf's round trips
# for its one second (qperf takes whole seconds), then iperf3's stream for 1 MB, not a
# second (TCP's bandwidth is iperf3's to show, and it does in a 20th of the time).
CLIENT = ("fc_driver_test --role uapi --peer 1; fc_driver_test --role fork; "
          "ping -c 3 node1 && echo ping-ok; "
          "qperf -t 1 node1 tcp_lat && echo qperf-ok; "
          "for i in 1 2 3 4 5; do iperf3 -c node1 -n 1M -J > /tmp/iperf.json && break; "
          "sleep 1; done; grep -q bits_per_second /tmp/iperf.json && echo iperf-ok; "
          "grep -m1 -o '\"bits_per_second\":[^,]*' /tmp/iperf.json; "
          "cat /sys/class/net/fc0/mtu; cat /sys/class/misc/fc0/ip_rx_drops")
SERVER = ("timeout 120 iperf3 -s -1 > /dev/null 2>&1 & IPERF=$!; "
          "qperf > /dev/null 2>&1 & "
          "fc_driver_test --role receiver; wait $IPERF")


@pytest.fixture(scope="module")
def traffic_run(tmp_path_factory):
    return run(tmp_path_factory, kernel_checked(by_role(n0=CLIENT, n1=SERVER)))


def test_user_device_errors_are_the_documented_ones(traffic_run):
    r = traffic_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    for name in UAPI_ERRORS:
        assert name in passed, (name, r.stdout)


def test_mmap_gives_only_what_was_allocated(traffic_run):
    r = traffic_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    for name in MMAP_CASES:
        assert name in passed, (name, r.stdout)


def test_the_adapter_reaches_only_the_files_memory(traffic_run):
    """Sends from outside the process's DMA memory are refused by the adapter (the
    driver's DVMA table), sends from it arrive intact in the peer's mapped ring."""
    r = traffic_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    for name in DMA_CASES:
        assert name in passed, (name, r.stdout)
    passed1, failed1 = passes(r, 1)
    assert "receive_into_ring" in passed1 and not failed1, r.stdout


def test_the_channel_is_the_opening_process_s(traffic_run):
    """A forked child inherits the file but none of its mappings, and every ioctl and
    mmap it makes is EACCES; the owner and its threads go on as before. The owner killed
    while its child holds the file: the channel stays taken until the child's close, the
    last, frees it; then it opens again."""
    r = traffic_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    for name in FORK_CASES:
        assert name in passed, (name, r.stdout)


def test_stock_tools_run_over_the_netdev(traffic_run):
    r = traffic_run
    assert "[node0] ping-ok" in r.stdout, r.stdout + r.stderr
    assert "[node0] iperf-ok" in r.stdout, r.stdout + r.stderr
    assert "[node0] qperf-ok" in r.stdout, r.stdout + r.stderr
    m = re.search(r"\"bits_per_second\":\s*([\d.e+]+)", r.stdout)
    assert m and float(m.group(1)) > 1e6, r.stdout   # more than 1 Mb/s of TCP
    assert "[node0] 2098" in r.stdout, r.stdout      # the MTU: one frame per packet


def test_no_kernel_problems_in_traffic_run(traffic_run):
    r = traffic_run
    assert "kernel-problem:" not in r.stdout, r.stdout
    assert r.returncode == 0, r.stdout + r.stderr


# ---- run 2: removal with traffic in flight --------------------------------------------

# node 0 unloads the driver under an iperf3 stream, loads it again (and unloads and
# loads it 5 times more), gives the interface its address back and pings; then unbinds the adapter under a process holding /dev/fc0
# mapped, and pings once more after the rebind.
READD = ("ip addr add $ADDR dev fc0 && ip link set fc0 up && "
         "for i in $(seq 50); do [ $(cat /sys/class/net/fc0/carrier) = 1 ] && break; "
         "sleep 0.1; done")
UNLOADER = ("ADDR=$(ip -o -4 addr show dev fc0 | awk '{print $4}'); "
            "iperf3 -c node1 -t 4 > /dev/null 2>&1 & sleep 1; "
            "rmmod fc && echo unloaded; wait; "
            "modprobe fc && echo reloaded; "
            "for i in $(seq 5); do rmmod fc && modprobe fc || break; done; "
            "[ -c /dev/fc0 ] && echo reloaded-5-times; " + READD + "; "
            "ping -c 2 node1 > /dev/null && echo ping-after-reload; "
            "fc_driver_test --role unbind; " + READD + "; "
            "ping -c 2 node1 > /dev/null && echo ping-after-rebind")
# node 1 serves iperf3 and stays up through node 0's pings (guest seconds: once node 0
# is done, node 1's idle sleep passes at once). Long: an iperf3 client whose interface
# went away mid-stream may wait out TCP's retransmissions, minutes, before node 0 goes on
SINK = "iperf3 -s > /dev/null 2>&1 & sleep 600; echo server-done"


@pytest.fixture(scope="module")
def removal_run(tmp_path_factory):
    return run(tmp_path_factory, kernel_checked(by_role(n0=UNLOADER, n1=SINK)))


def test_rmmod_with_traffic_in_flight_is_clean(removal_run):
    r = removal_run
    assert "[node0] unloaded" in r.stdout, r.stdout + r.stderr
    assert "[node0] reloaded" in r.stdout, r.stdout + r.stderr
    assert "[node0] reloaded-5-times" in r.stdout, r.stdout + r.stderr
    assert "[node0] ping-after-reload" in r.stdout, r.stdout + r.stderr
    assert "[node1] server-done" in r.stdout, r.stdout + r.stderr


def test_unbind_with_the_device_mapped(removal_run):
    """The file stays valid and fails with ENODEV; its mappings give SIGBUS; the adapter
    comes back on a rebind."""
    r = removal_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    for name in UNBIND_CASES:
        assert name in passed, (name, r.stdout)
    assert "[node0] ping-after-rebind" in r.stdout, r.stdout


def test_no_kernel_problems_in_removal_run(removal_run):
    r = removal_run
    assert "kernel-problem:" not in r.stdout, r.stdout
