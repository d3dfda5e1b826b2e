"""In-guest tests of the CompactPCI backplane board's driver (guest/kernel/cpci/,
guest/bin/cpci/; docs/boards/cpci-driver.md) on machines/cpci.toml, one boot shared by
every test here: the raw CPU-copy ping-pong through the windows (polling and with
doorbells), cpci_test's checks of every call and error path on both nodes, ping,
iperf3 (TCP and UDP) and NPtcp over the netdev bp0, a window load's round trip, rmmod
refused and unbind with the windows mapped, then a rebind."""
import re

import pytest
from helpers import assert_clean_run, guest_script_run, passed_cases, unbind_held_script

pytestmark = pytest.mark.usefixtures("artifacts")

# The ping-pongs' round trips took a third of the run's host time with 10 after 2 (every
# 4-byte store a transaction through the fabric: 16 KiB, 4096 of them a message), and the
# model gives the round trips of a size nearly the same time: 1 untimed and 3 timed a size.
SIZES = "4,1024,16384"
REPS = 3
WARMUP = 1
LOCAL_CASES = ["open_and_map", "info", "info_bad_pointer_efault", "unknown_ioctl_enotty",
               "ring_self_ehostunreach", "ring_no_such_node_ehostunreach",
               "ring_huge_node_ehostunreach", "ring_netdev_doorbell_einval",
               "ring_netdev_doorbell1_einval", "ring_no_such_doorbell_einval",
               "ring_bad_pointer_efault", "wait_times_out", "wait_rsvd_einval",
               "wait_bad_pointer_efault", "wait_signal_eintr", "mmap_own_window_ehostunreach",
               "mmap_inside_window_einval", "mmap_past_the_windows_einval",
               "mmap_past_local_einval", "mmap_too_large_einval", "mmap_window_too_large_einval",
               "mmap_exec_eperm", "mmap_local_exec_eperm", "mmap_private_einval",
               "mmap_partial_window", "mprotect_exec_refused", "local_area_rw",
               "window_store_counted", "kill_waiter_sleeping",
               "kill_waiter_killed", "kill_waiter_nothing_left", "nothing_left_after_close"]
HOLD_CASES = ["hold_mapped", "hold_window_sigbus_after_unbind", "hold_local_sigbus_after_unbind",
              "hold_ioctl_enodev", "hold_mmap_enodev", "hold_closed"]

# The same script on both nodes. The ping-pongs come first: each ends with every
# doorbell it rang taken, so cpci_test's waits find none pending.
UNBIND = unbind_held_script("cpci", "cpci0", "cpci_test hold")
SCRIPT = rf"""
n=$(cat /sys/class/misc/cpci0/node)
cpci_pingpong --sizes {SIZES} --reps {REPS} --warmup {WARMUP}
cpci_pingpong --doorbell --sizes {SIZES} --reps {REPS} --warmup {WARMUP}
cpci_test local
# the netdev: stock tools over bp0
echo "MTU $(cat /sys/class/net/bp0/mtu)"
if [ $n = 1 ]; then
  timeout 300 sh -c 'iperf3 -s -1; iperf3 -s -1' > /dev/null 2>&1 & IPERF=$!
  timeout 300 NPtcp -n 2 -l 64 -u 4096 -p 0 -o /tmp/np.out > /dev/null 2>&1 & NP=$!
  wait $IPERF; wait $NP
else
  ping -c 3 node1 > /dev/null && echo "PING ok"
  for i in 1 2 3 4 5; do iperf3 -c node1 -n 1M -J > /tmp/tcp.json && break; sleep 1; done
  grep -o '"bits_per_second":[^,]*' /tmp/tcp.json | tail -1 | sed 's/^/TCP /'
  grep -q '"error"' /tmp/tcp.json && echo "TCP error"
  sleep 1
  for i in 1 2 3 4 5; do iperf3 -c node1 -u -b 4M -n 256K -J > /tmp/udp.json && break; sleep 1; done
  grep -o '"bytes":[^,]*' /tmp/udp.json | tail -1 | sed 's/^/UDP /'
  grep -o '"lost_percent":[^,}}]*' /tmp/udp.json | tail -1 | sed 's/^/UDP /'
  grep -q '"error"' /tmp/udp.json && echo "UDP error"
  sleep 1
  NPtcp -h node1 -n 2 -l 64 -u 4096 -p 0 -o /tmp/np.out > /dev/null && echo "NPTCP ok"
  sed 's/^/NP /' /tmp/np.out
fi
grep bp0 /proc/net/dev | sed 's/^/LINK /'
cpci_test load-time --reps 50
{UNBIND}
[ -c /dev/cpci0 ] && [ -d /sys/class/net/bp0 ] && echo "STATE $(cat /sys/class/misc/cpci0/state)"
"""


@pytest.fixture(scope="module")
def run():
    return guest_script_run("cpci", SCRIPT)


def latencies(lines, mode):
    return {int(m[1]): float(m[2]) for l in lines
            if (m := re.fullmatch(rf"RESULT cpci_latency mode={mode} size=(\d+) us=([\d.]+)", l))}


def test_run_ends_cleanly_with_no_kernel_problem(run):
    assert_clean_run(*run)


@pytest.mark.parametrize("node", [0, 1])
def test_every_call_and_error_path(run, node):
    _, lines = run
    assert set(LOCAL_CASES) <= passed_cases(lines[node]), set(LOCAL_CASES) - passed_cases(lines[node])


@pytest.mark.parametrize("mode", ["copy", "copy_db"])
def test_pingpong_latency_grows_with_the_stores(run, mode):
    _, lines = run
    lat = latencies(lines[0], mode)
    sizes = [int(s) for s in SIZES.split(",")]
    assert sorted(lat) == sizes, lat
    # every 4-byte store is a backplane transaction: the time grows with the words
    assert 0 < lat[4] < lat[1024] < lat[16384], lat
    per_word = (lat[16384] - lat[1024]) / ((16384 - 1024) / 4)
    assert per_word > 0.01, lat     # at least 10 ns a word: no copy is free


def test_polling_is_faster_than_a_doorbell(run):
    _, lines = run
    assert latencies(lines[0], "copy")[4] < latencies(lines[0], "copy_db")[4], lines[0]


def test_a_window_load_reads_the_store_and_is_a_round_trip(run):
    _, lines = run
    assert all("PASS window_load_reads_the_store" in lines[n] for n in (0, 1)), lines
    loads = [float(m[1]) for n in (0, 1) for l in lines[n]
             if (m := re.fullmatch(r"RESULT cpci_load us=([\d.]+)", l))]
    assert len(loads) == 2, lines
    # a load waits for the data: longer than one store of the ping-pong
    stores = latencies(lines[0], "copy")
    per_word = (stores[16384] - stores[1024]) / ((16384 - 1024) / 4)
    assert all(load > per_word for load in loads), (loads, per_word)


@pytest.mark.parametrize("node", [0, 1])
def test_unload_refused_and_unbind_revokes(run, node):
    _, lines = run
    n = lines[node]
    assert "UNLOAD refused" in n and "UNBIND ok" in n and "REBIND ok" in n, n
    assert set(HOLD_CASES) <= passed_cases(n), set(HOLD_CASES) - passed_cases(n)
    (state,) = [l for l in n if l.startswith("STATE ")]
    assert re.match(r"STATE files 0 waiters 0 ", state), state


def test_netdev_carries_ping_iperf3_and_nptcp(run):
    _, lines = run
    n0 = lines[0]
    assert "MTU 1500" in n0 and "MTU 1500" in lines[1]
    assert "PING ok" in n0 and "NPTCP ok" in n0, n0
    assert "TCP error" not in n0 and "UDP error" not in n0, n0
    (tcp,) = [l for l in n0 if l.startswith("TCP ")]
    assert 1e5 < float(tcp.split(":")[1]) <= 33e6 * 32, tcp   # at most the bus's 132 MB/s
    udp = {m[1]: float(m[2]) for l in n0
           if (m := re.fullmatch(r'UDP "(\w+)":\s*([\d.]+)', l))}
    # the 256 KiB sent arrived: the receiver's count, nothing lost
    assert udp.get("bytes", 0) >= 256 * 1024 and udp.get("lost_percent") == 0, udp
    np_rows = [l.split()[1:] for l in n0 if l.startswith("NP ")]
    assert len(np_rows) >= 5 and all(float(r[1]) > 0 for r in np_rows), np_rows
