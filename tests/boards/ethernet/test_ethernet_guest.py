"""In-guest tests of the stock NICs on machines/eth-pair.toml (two nodes, e1000 on a
point-to-point gigabit link): IP networking by name, and UDP round trips that are the
same, byte for byte, from run to run."""
import re

import pytest
from ethernet_runs import counters, eth_pair, run_dir
from helpers import by_role

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")


def test_nodes_ping_each_other_by_name():
    """Both names of each node resolve (/etc/hosts from the machine), ARP and ICMP cross the
    link both ways, nothing is lost, and no frame was dropped anywhere."""
    r = eth_pair(by_role(n0="ping -c 3 node1 && ping -c 2 node1-lan",
                         n1="ping -c 3 node0 && sleep 3"))
    assert r.returncode == 0, r.stdout + r.stderr
    for node, count in ((0, 3), (0, 2), (1, 3)):
        assert (f"[node{node}] {count} packets transmitted, {count} packets received, "
                "0% packet loss") in r.stdout, r.stdout
    assert "[node0] PING node1 (198.18.0.2)" in r.stdout and \
        "[node0] PING node1-lan (198.18.0.2)" in r.stdout and \
        "[node1] PING node0 (198.18.0.1)" in r.stdout, r.stdout
    c = counters(r)
    assert c[0]["tx_frames"] >= 6 and c[1]["rx_frames"] >= 6, c
    assert all(v == 0 for n in c.values() for k, v in n.items() if k.startswith("drop_")), c


def test_a_nic_that_shows_no_link_boots_fast_and_loses_nothing():
    """QEMU's tulip cannot show its link to the driver: the netdev holds it down until
    link-up-ns after the driver starts the NIC all the same (so the nodes boot with long
    grants, docs/boards/ethernet.md "The link"), and the guest waits that long before its
    command, so the first ping is answered."""
    r = eth_pair(by_role(n0="ping -c 2 node1", n1="sleep 3"), ["eth.model=tulip"],
                 timeout="120")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[node0] 2 packets transmitted, 2 packets received, 0% packet loss" in r.stdout, \
        r.stdout
    c = counters(r)
    assert all(v == 0 for n in c.values() for k, v in n.items() if k.startswith("drop_")), c


def kernel_time(log: str, pattern: str) -> float:
    """The kernel's timestamp (s) of the first line of log matching pattern."""
    return float(re.search(r"\[\s*([\d.]+)\] .*" + pattern, log).group(1))


def test_the_e100_driver_sees_its_link_come_up_through_mii():
    """QEMU's e100 shows its PHY's link (MII status register, qemu/patches/0009): the
    driver, which polls it every 2 s, reports the link up only once the netdev has brought
    it up, link-up-ns after the driver started the NIC, and the guest waits for that
    carrier before its command: the first ping is answered and nothing is dropped."""
    r = eth_pair(by_role(n0="ping -c 2 node1", n1="sleep 3"), ["eth.model=e100"],
                 timeout="120")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[node0] 2 packets transmitted, 2 packets received, 0% packet loss" in r.stdout, \
        r.stdout
    for log in sorted(run_dir(r).glob("node*-kernel.log")):
        text = log.read_text(errors="replace")
        probed = kernel_time(text, r"e100 \S+ eth0: addr ")
        up = kernel_time(text, r"eth0: NIC Link is Up 100 Mbps")
        # the link comes up 1 s after the probe enabled bus mastering; the driver's next
        # MII poll (every 2 s) sees it
        assert 1.0 <= up - probed <= 3.5, (log.name, probed, up)
    c = counters(r)
    assert all(v == 0 for n in c.values() for k, v in n.items() if k.startswith("drop_")), c


def udp_results(stdout: str) -> list[str]:
    return [l for l in stdout.splitlines() if " RESULT " in l]


def test_udp_round_trips_are_identical_run_to_run_with_or_without_the_live_clock():
    """The second run's peers see each other only at sync points (RETROLINK_LIVE_CLOCK=off,
    docs/fabric.md "Live time"): where each node stops decides only when in host time it
    runs, never what it computes; a grant too long would deliver a frame late."""
    cmd = by_role(n0="udp_pingpong ping --peer node1 --sizes 64,1024,1472 --iters 20",
                  n1="udp_pingpong echo")
    first = eth_pair(cmd)
    second = eth_pair(cmd, env={"RETROLINK_LIVE_CLOCK": "off"})
    for r in (first, second):
        assert r.returncode == 0, r.stdout + r.stderr
    assert len(udp_results(first.stdout)) == 6, first.stdout
    assert first.stdout == second.stdout
    assert counters(first) == counters(second)
    assert [c["causality_violations"] for c in counters(first).values()] == [0, 0]
    rtt = {int(m.group(1)): int(m.group(2)) for m in
           re.finditer(r"RESULT rtt_ns size=(\d+) min=\d+ median=(\d+)", first.stdout)}
    assert rtt[64] < rtt[1024] < rtt[1472], rtt
