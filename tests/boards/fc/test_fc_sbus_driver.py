"""In-guest tests of the FC driver on the SBus card (machines/puma-iii-ss5.toml:
SPARCstation 5 nodes, sparc32 Linux; docs/sparc.md): the same fc_driver_test cases as
on the PCs (test_fc_driver.py), cross-built against klibc; the card's interrupt
delivered (the PROM's "intr"); ping over fc0 (rltools' ping: the nodes have no busybox);
the driver unloaded with IP traffic in flight, reloaded, and the card unbound with
/dev/fc0 mapped (its mappings then SIGBUS: guest/sparc/patches/0003). One cluster run,
shared by the tests."""
import re

import pytest
from helpers import KERNEL_PROBLEMS, by_role, run_retrolink
from test_fc_driver import (DMA_CASES, FORK_CASES, MMAP_CASES, UAPI_ERRORS, UNBIND_CASES,
                            passes)

MACHINE = "puma-iii-ss5"
PEER = "198.18.0.2"         # node 1's address on fc0 (node N: 198.18.0.N+1/24)
# the address back on fc0 after a reload or a rebind, and its carrier awaited (klibc's
# shell: no seq)
READD = (f"ip addr add 198.18.0.1/24 dev fc0 && ip link set fc0 up && "
         "for i in 1 2 3 4 5 6 7 8 9 10; do "
         "[ \"$(cat /sys/class/net/fc0/carrier)\" = 1 ] && break; usleep 100000; done")
FC_INTERRUPTS = "while read irq count chip kind name; do [ \"$name\" = fc ] && " \
                "echo fc-interrupts=$count; done < /proc/interrupts"
CLIENT = (f"fc_driver_test --role uapi --peer 1; fc_driver_test --role fork; "
          f"ping -c 3 -i 0.2 {PEER} > /dev/null && echo ping-ok; {FC_INTERRUPTS}; "
          # a stream of pings in flight (it ends when fc0 goes) while the driver unloads
          f"ping -c 100 -i 0.01 {PEER} > /dev/null 2>&1 & usleep 300000; "
          "rmmod fc && echo unloaded; wait; modprobe fc && echo reloaded; "
          "for i in 1 2 3 4 5; do rmmod fc && modprobe fc || break; done; "
          f"[ -c /dev/fc0 ] && echo reloaded-5-times; {READD}; "
          f"ping -c 2 {PEER} > /dev/null && echo ping-after-reload; "
          f"fc_driver_test --role unbind; {READD}; "
          f"ping -c 2 {PEER} > /dev/null && echo ping-after-rebind")
# node 1 answers the pings and reads node 0's raw sends; its sleep passes in no host time
# once node 0 is done
SERVER = "fc_driver_test --role receiver; sleep 60; echo server-done"


@pytest.fixture(scope="module")
def sbus_run(sparc):
    cmd = f"{{ {by_role(n0=CLIENT, n1=SERVER)}; }}; rc=$?; dmesg; exit $rc"
    return run_retrolink("run", MACHINE, "--timeout", "600", "--", "sh", "-c", cmd,
                         timeout=900)


def test_user_device_errors_mappings_and_dma_as_on_the_pcs(sbus_run):
    r = sbus_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    missing = [n for n in (*UAPI_ERRORS, *MMAP_CASES, *DMA_CASES) if n not in passed]
    assert not missing, (missing, r.stdout)
    passed1, failed1 = passes(r, 1)
    assert "receive_into_ring" in passed1 and not failed1, r.stdout


def test_the_channel_is_the_opening_process_s(sbus_run):
    r = sbus_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    # klibc has no threads: that one case is said to be skipped, not passed
    assert "[node0] SKIP fork_owner_thread_may_call: klibc has no threads" in r.stdout
    missing = [n for n in FORK_CASES if n != "fork_owner_thread_may_call" and n not in passed]
    assert not missing, (missing, r.stdout)


def test_ping_over_fc0_is_answered_through_the_card_s_interrupt(sbus_run):
    r = sbus_run
    assert "[node0] ping-ok" in r.stdout, r.stdout + r.stderr
    m = re.search(r"^\[node0\] fc-interrupts=(\d+)$", r.stdout, re.M)
    assert m and int(m.group(1)) > 0, r.stdout


def test_rmmod_with_traffic_in_flight_and_reloads(sbus_run):
    r = sbus_run
    for line in ("unloaded", "reloaded", "reloaded-5-times", "ping-after-reload"):
        assert f"[node0] {line}" in r.stdout, (line, r.stdout + r.stderr)
    assert "[node1] server-done" in r.stdout, r.stdout + r.stderr


def test_unbind_with_the_device_mapped(sbus_run):
    """The file fails with ENODEV, its mappings give SIGBUS (not SIGSEGV), the card comes
    back on a rebind."""
    r = sbus_run
    passed, failed = passes(r, 0)
    assert not failed, r.stdout + r.stderr
    missing = [n for n in UNBIND_CASES if n not in passed]
    assert not missing, (missing, r.stdout)
    assert "[node0] ping-after-rebind" in r.stdout, r.stdout


def test_no_kernel_problems(sbus_run):
    r = sbus_run
    problems = [l for l in r.stdout.splitlines() if re.search(KERNEL_PROBLEMS, l)]
    assert not problems, problems
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
