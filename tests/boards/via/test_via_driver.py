"""In-guest tests of the VIA NIC's kernel agent and VIPL (guest/kernel/via/,
guest/lib/vipl/; docs/boards/via.md) on machines/via.toml, one boot shared by every test
here: via_test's checks of every VIPL call and error path on both nodes, its two-node
checks (messages both ways, a descriptor with memory of another tag, a disconnect
mid-transfer, a process killed mid-transfer with its VI open), the ping-pong benchmark
by polling and by blocking, ping, iperf3 and NPtcp over the LAN emulation's interface
via0, rmmod refused and unbind with a VI mapped."""
import re

import pytest
from helpers import assert_clean_run, guest_script_run, passed_cases, unbind_held_script

pytestmark = pytest.mark.usefixtures("artifacts")

SIZES = "4,1024,65536"
REPS = 20
LOCAL_CASES = ["open_register_create_vi", "query_nic", "query_junk_nic", "create_vi_junk_cq",
               "vi_reliability_refused", "vi_mtu_refused", "vi_rdma_read_refused",
               "vi_foreign_tag_refused", "register_foreign_tag", "register_unmapped",
               "agent_register_wraps_einval", "other_files_handle_enoent",
               "other_files_tag_enoent", "other_files_doorbell_mmap_refused",
               "post_send_idle_vi", "post_unregistered_descriptor", "post_misaligned_descriptor",
               "post_too_many_segments", "post_recv_queue_depth", "post_recv_queue_full",
               "recv_wait_times_out", "destroy_ptag_in_use", "connect_wait_times_out",
               "connect_to_self_unreachable", "cq_wait_times_out", "destroy_cq_in_use",
               "other_files_vi_destroy_enoent", "other_files_vi_wait_enoent",
               "agent_wait_bad_kind_einval", "agent_long_discriminator_einval",
               "agent_cq_huge_einval", "agent_deregister_huge_handle_enoent",
               "resources_free_after_close"]
CLIENT_CASES = ["echo_connect", "echo_client_data", "echo_send_after_disconnect",
                "prot_send_protection_error", "prot_vi_broken", "prot_post_on_broken_vi",
                "disc_every_send_completes", "disc_sends_after_disconnect_fail",
                "kill_child_streaming", "kill_child_killed", "kill_resources_free"]
SERVER_CASES = ["echo_connect", "echo_server_data", "disc_first_message",
                "disc_disconnect_mid_transfer"]
HOLD_CASES = ["hold_doorbell_mapped", "hold_sigbus_after_unbind", "hold_call_after_unbind",
              "hold_ioctl_enodev", "hold_closed"]

# The same script on both nodes; node 1 serves, node 0 is the client. Then each node
# holds a VI mapped, tries rmmod, unbinds the NIC under it and binds it again.
UNBIND = unbind_held_script("via", "via0", "via_test hold")
SCRIPT = rf"""
n=$(cat /sys/class/misc/via0/node)
via_test local
if [ $n = 1 ]; then
  via_test server
  via_pingpong --server --mode poll --sizes {SIZES} --reps {REPS} --bandwidth
  via_pingpong --server --mode block --sizes {SIZES} --reps {REPS} --bandwidth
else
  via_test client --peer 1
  via_pingpong --client --peer 1 --mode poll --sizes {SIZES} --reps {REPS} --bandwidth
  via_pingpong --client --peer 1 --mode block --sizes {SIZES} --reps {REPS} --bandwidth
fi
# the LAN emulation: stock tools over via0
echo "MTU $(cat /sys/class/net/via0/mtu)"
if [ $n = 1 ]; then
  timeout 120 iperf3 -s -1 > /dev/null 2>&1 & IPERF=$!
  timeout 120 NPtcp -n 2 -l 64 -u 4096 -p 0 -o /tmp/np.out > /dev/null 2>&1 & NP=$!
  wait $IPERF; wait $NP
else
  ping -c 3 node1 > /dev/null && echo "PING ok"
  for i in 1 2 3 4 5; do iperf3 -c node1 -n 4M -J > /tmp/iperf.json && break; sleep 1; done
  grep -o '"bits_per_second":[^,]*' /tmp/iperf.json | tail -1 | sed 's/^/IPERF /'
  sleep 1
  NPtcp -h node1 -n 2 -l 64 -u 4096 -p 0 -o /tmp/np.out > /dev/null && echo "NPTCP ok"
  sed 's/^/NP /' /tmp/np.out
fi
{UNBIND}
[ -c /dev/via0 ] && cat /sys/class/misc/via0/in_use | sed 's/^/IN_USE /'
"""


@pytest.fixture(scope="module")
def run():
    return guest_script_run("via", SCRIPT, timeout=600)


def test_run_ends_cleanly_with_no_kernel_problem(run):
    assert_clean_run(*run)


@pytest.mark.parametrize("node", [0, 1])
def test_every_vipl_call_and_error_path(run, node):
    _, lines = run
    assert set(LOCAL_CASES) <= passed_cases(lines[node]), set(LOCAL_CASES) - passed_cases(lines[node])


def test_two_nodes_messages_protection_disconnect_and_a_killed_process(run):
    _, lines = run
    assert set(CLIENT_CASES) <= passed_cases(lines[0]), set(CLIENT_CASES) - passed_cases(lines[0])
    assert set(SERVER_CASES) <= passed_cases(lines[1]), set(SERVER_CASES) - passed_cases(lines[1])


@pytest.mark.parametrize("mode", ["poll", "block"])
def test_pingpong_latency_and_bandwidth(run, mode):
    _, lines = run
    lat = {int(m[1]): float(m[2]) for l in lines[0]
           if (m := re.fullmatch(rf"RESULT via_latency mode={mode} size=(\d+) us=([\d.]+)", l))}
    bw = {int(m[1]): float(m[2]) for l in lines[0]
          if (m := re.fullmatch(rf"RESULT via_bandwidth mode={mode} size=(\d+) MBps=([\d.]+)", l))}
    sizes = [int(s) for s in SIZES.split(",")]
    assert sorted(lat) == sizes and sorted(bw) == sizes, (lat, bw)
    # latency grows with size; 64 KB streams close to the link's 125 MB/s, never above
    assert lat[4] < lat[1024] < lat[65536], lat
    assert 0 < bw[4] < bw[65536] <= 125, bw


def test_polling_is_faster_than_blocking(run):
    _, lines = run
    lat = {m[1]: float(m[2]) for l in lines[0]
           if (m := re.fullmatch(r"RESULT via_latency mode=(\w+) size=4 us=([\d.]+)", l))}
    assert lat["poll"] < lat["block"], lat


@pytest.mark.parametrize("node", [0, 1])
def test_unload_refused_and_unbind_revokes(run, node):
    _, lines = run
    n = lines[node]
    assert "UNLOAD refused" in n and "UNBIND ok" in n and "REBIND ok" in n, n
    assert set(HOLD_CASES) <= passed_cases(n), set(HOLD_CASES) - passed_cases(n)
    (in_use,) = [l for l in n if l.startswith("IN_USE ")]
    assert re.fullmatch(r"IN_USE vis (\d+) cqs 0 regions (\d+) tags (\d+) tpt \d+", in_use)


def test_lan_emulation_carries_ping_iperf3_and_nptcp(run):
    _, lines = run
    n0 = lines[0]
    assert "MTU 8000" in n0 and "MTU 8000" in lines[1]
    assert "PING ok" in n0 and "NPTCP ok" in n0, n0
    (iperf,) = [l for l in n0 if l.startswith("IPERF ")]
    bps = float(iperf.split(":")[1])
    assert 1e6 < bps <= 1e9, iperf     # at most the link's 125 MB/s
    np_rows = [l.split()[1:] for l in n0 if l.startswith("NP ")]
    assert len(np_rows) >= 5 and all(float(r[1]) > 0 for r in np_rows), np_rows
