"""In-guest tests of the Cenju-3 interface driver (guest/kernel/cenju3/;
docs/boards/cenju3-driver.md) through its test device /dev/cenju3 and c3_nic_test, on
machines/cenju-3.toml (2 nodes). One cluster run: on each node norma.ko lets go of the
interface, c3_nic_test runs against the other node, the driver is unloaded and loaded 4
times, c3_nic_test runs again, and norma.ko is loaded back."""
import re

import pytest
from helpers import kernel_checked, kernel_problems, run_retrolink

pytestmark = pytest.mark.usefixtures("artifacts")

SYSFS = "/sys/class/misc/cenju3"
COUNTERS = ("stalls", "rx_held", "cache_misses", "msgs_tx", "msgs_rx", "rx_kept",
            "bad_events", "req_failed")
NODE = ('P=$((1 - RETROLINK_NODE)); '
        'rmmod norma && echo norma-released; '
        'c3_nic_test --peer $P; '
        f'for f in {" ".join(COUNTERS)}; do echo "counter $f=$(cat {SYSFS}/$f)"; done; '
        'echo "== reload =="; '
        'for i in 1 2 3 4; do rmmod cenju3 && modprobe cenju3 || break; done; '
        '[ -c /dev/cenju3 ] && echo reloaded-4-times; '
        'c3_nic_test --peer $P --burst 40; '
        f'echo "counter cache_misses=$(cat {SYSFS}/cache_misses)"; '
        'modprobe norma && echo norma-back')


@pytest.fixture(scope="module")
def run():
    return run_retrolink("run", "cenju-3", "--timeout", "400", "--", "sh", "-c",
                         kernel_checked(NODE), timeout=600)


def phase(r, node: int, which: int) -> tuple[set, list, dict]:
    """One node's PASS names, FAIL lines and counters before (0) or after (1) reloading."""
    prefix = f"[node{node}] "
    lines = [l.removeprefix(prefix) for l in r.stdout.splitlines() if l.startswith(prefix)]
    cut = lines.index("== reload ==") if "== reload ==" in lines else len(lines)
    part = lines[:cut] if which == 0 else lines[cut:]
    counters = {m.group(1): int(m.group(2)) for l in part
                if (m := re.match(r"counter (\w+)=(\d+)$", l))}
    return ({l.split()[1] for l in part if l.startswith("PASS ")},
            [l for l in part if l.startswith("FAIL ")], counters)


def assert_passed(r, node: int, which: int, names) -> None:
    passed, failed, _ = phase(r, node, which)
    assert not failed, (node, failed, r.stdout[-3000:])
    missing = [n for n in names if n not in passed]
    assert not missing, (node, missing, r.stdout[-3000:] + r.stderr[-2000:])


ERRORS = ("info", "send_to_self_einval", "send_to_no_node_einval", "send_empty_einval",
          "send_509_einval", "send_bad_flags_einval", "rdma_empty_einval",
          "rdma_too_long_einval", "rdma_past_buffer_einval", "rdma_to_self_einval",
          "config_zero_einval", "unknown_ioctl_enotty", "info_bad_pointer_efault",
          "pread_past_buffer_einval", "recv_nothing_etimedout", "second_open_ebusy")


def test_the_test_device_gives_the_documented_errors(run):
    for node in (0, 1):
        assert_passed(run, node, 0, ERRORS)
    assert "[node0] norma-released" in run.stdout, run.stdout[-3000:]


def test_messages_both_ways_intact(run):
    """1, 5, 200, 507 and 508 bytes from node 0, each echoed back by node 1."""
    assert_passed(run, 0, 0, ("meet", "messages_both_ways"))
    assert_passed(run, 1, 0, ("meet", "messages_echoed"))


def test_remote_dma_lands_at_the_given_address(run):
    """128 KiB at node 1's buffer and 100 bytes at an unaligned address past it, with a
    notification; node 1 finds exactly those bytes and zeroes elsewhere."""
    assert_passed(run, 0, 0, ("rdma_sent", "rdma_checked_there"))
    assert_passed(run, 1, 0, ("rdma_notified", "rdma_content"))


def test_a_burst_stalls_the_interface_and_loses_nothing(run):
    """300 messages into a node that lets 4 wait: its driver holds the interface back,
    the interface stalls, and every message arrives in order."""
    assert_passed(run, 0, 0, ("burst_sent", "burst_received_there"))
    assert_passed(run, 1, 0, ("burst_in_order_intact", "burst_held_and_stalled"))
    _, _, c = phase(run, 1, 0)
    assert c["stalls"] > 0 and c["rx_held"] > 0, c
    assert c["msgs_rx"] == c["rx_kept"], c            # every message handed up, no copy
    assert c["bad_events"] == 0 and c["req_failed"] == 0, c


def test_the_driver_flushes_every_source(run):
    """The interface counts a request whose source no flush covered: none, either node."""
    for node in (0, 1):
        for which in (0, 1):
            _, _, c = phase(run, node, which)
            assert c.get("cache_misses") == 0, (node, which, c)


def test_unload_and_reload(run):
    """cenju3.ko unloaded and loaded 4 times; the interface works as before; norma.ko
    loads over it again."""
    for node in (0, 1):
        assert f"[node{node}] reloaded-4-times" in run.stdout, run.stdout[-3000:]
        assert f"[node{node}] norma-back" in run.stdout, run.stdout[-3000:]
    assert_passed(run, 0, 1, ("meet", "messages_both_ways", "rdma_checked_there",
                              "burst_received_there", "no_cache_misses"))
    assert_passed(run, 1, 1, ("meet", "messages_echoed", "rdma_content",
                              "burst_in_order_intact", "no_cache_misses"))


def test_no_kernel_problems(run):
    assert not kernel_problems(run), kernel_problems(run)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
