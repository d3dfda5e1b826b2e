"""The 100 Mb/s hub of the interconnect study (machines/eth-hub.toml): the RTL8139, whose
driver copies every frame into the NIC's four transmit buffers, runs on it as the e100
does (docs/boards/ethernet.md)."""
import json
import re

import pytest
from ethernet_runs import counters, run_dir
from helpers import by_role, run_retrolink

from retrolink.bench.net import iperf_client, iperf_json, received_MBps

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")

def node_lines(stdout: str, node: int) -> list[str]:
    return [l.split("] ", 1)[1] for l in stdout.splitlines() if l.startswith(f"[node{node}] ")]


def hub_run(settings, cmd):
    sets = [a for s in settings for a in ("--set", s)]
    r = run_retrolink("run", "eth-hub", *sets, "--timeout", "600", "--", cmd, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    stats = json.loads((run_dir(r) / "fabric-stats.json").read_text())
    stations = [l for n in stats["networks"] for l in n["links"]]
    return r, stats, stations


def test_the_rtl8139_on_the_hub():
    """8139too binds QEMU's rtl8139 presented as a plain RTL8139 (qemu/patches/0010),
    sees its link come up through the chip's link interrupt, and carries pings, TCP round
    trips and a TCP stream through the hub with nothing dropped."""
    cmd = by_role(
        n0="ping -c 2 node1 && "
           "udp_pingpong ping --tcp --peer node1 --port 7778 --sizes 64,1024 --iters 3 "
           "--warmup 1 && " + iperf_client("tcp", "-c node1 -t 1"),
        n1="udp_pingpong echo --tcp --port 7778 & iperf3 -s -1 >/dev/null && wait")
    r, stats, stations = hub_run(["eth.model=rtl8139"], cmd)
    out = r.stdout
    assert "[node0] 2 packets transmitted, 2 packets received, 0% packet loss" in out, out
    log = (run_dir(r) / "node0-kernel.log").read_text(errors="replace")
    assert re.search(r"8139too \S+ eth0: RealTek RTL8139 at", log), log[-2000:]
    one_way = {int(m.group(1)): float(m.group(2)) for m in
               re.finditer(r"RESULT one_way_us size=(\d+) value=([\d.]+) proto=tcp", out)}
    assert set(one_way) == {64, 1024} and 0 < one_way[64] < one_way[1024], out
    mbps = received_MBps(iperf_json(node_lines(out, 0), "tcp"))
    print(f"rtl8139: one way {one_way} us, {mbps} MB/s")
    assert 5 < mbps < 12.5, mbps
    c = counters(r)
    assert all(v == 0 for n in c.values() for k, v in n.items() if k.startswith("drop_")), c


def snmp_tcp(lines: list[str]) -> dict[str, int]:
    """The guest's TCP counters: the two `Tcp:` lines of /proc/net/snmp, names and values."""
    names, values = [l.split()[1:] for l in lines if l.startswith("Tcp:")][:2]
    return dict(zip(names, map(int, values)))


def dev_counters(lines: list[str]) -> dict[str, int]:
    """eth0's line of /proc/net/dev: its receive and transmit errors, drops and FIFO."""
    f = next(l for l in lines if l.strip().startswith("eth0:")).split(":", 1)[1].split()
    return {"rx_errs": int(f[2]), "rx_drop": int(f[3]), "rx_fifo": int(f[4]),
            "tx_errs": int(f[10]), "tx_drop": int(f[11]), "tx_fifo": int(f[12])}


REPORT = ("echo @@counters; grep Tcp: /proc/net/snmp; grep TcpExt: /proc/net/netstat; "
          "grep eth0: /proc/net/dev")


def tcp_ext(lines: list[str]) -> dict[str, int]:
    """The guest's TcpExt counters of /proc/net/netstat (loss probes, timeouts, ...)."""
    names, values = [l.split()[1:] for l in lines if l.startswith("TcpExt:")][:2]
    return dict(zip(names, map(int, values)))


@pytest.mark.parametrize("senders", [2, 4])
def test_a_tcp_stream_through_the_hub_loses_nothing(senders):
    """A station defers while the medium is busy and its frames wait in its NIC's ring
    (docs/fabric.md, "hub"; the e100 waits for the netdev, qemu/patches/0011): TCP
    streams through the hub, node 0 to node 1 (2 stations sending: data and ACKs) or
    each node to the next (4) lose nothing a real hub would not. The hub's queue never
    holds more than the frame waiting for the medium and drops nothing, no NIC or
    netdev drops a frame, and TCP retransmits nothing (2 stations) or no more segments
    than the hub lost to excess collisions (4 saturating stations: the capture effect
    starves a station now and then, as on a real hub), but for retransmissions its
    receiver reported as duplicates (D-SACK: nothing was lost); the senders did have to
    wait."""
    if senders == 2:
        roles = {"n0": f"{iperf_client('tcp0', '-c node1 -t 1')} && {REPORT}",
                 "n1": f"iperf3 -s -1 >/dev/null && {REPORT}"}
    else:
        roles = {f"n{i}": f"(iperf3 -s -1 >/dev/null &) ; sleep 1 && "
                          f"{iperf_client(f'tcp{i}', f'-c node{(i + 1) % 4} -t 1')} && "
                          f"sleep 1 && {REPORT}" for i in range(4)}
    r, stats, stations = hub_run([], by_role(**roles))
    out = r.stdout
    assert all(st["drops_queue_full"] == 0 for st in stations), stations
    # a node whose command has ended has left: "destination down" is no loss
    assert all(v == 0 for k, v in stats["drops"].items()
               if k not in ("destination down", "excess collisions")), stats["drops"]
    assert stats["causality_violations"] == 0, stats
    lost = stats["drops"]["excess collisions"]
    assert senders == 4 or lost == 0, stations
    retrans = 0
    for i in range(senders):
        lines = node_lines(out, i)
        assert "@@counters" in lines, out
        # a retransmission the receiver reported as a duplicate (D-SACK) lost nothing:
        # a tail loss probe sent while the last ACK waited for the medium
        ext = tcp_ext(lines)
        retrans += snmp_tcp(lines)["RetransSegs"] - ext["TCPDSACKRecvSegs"]
        print(f"{senders} senders: node {i}: RetransSegs {snmp_tcp(lines)['RetransSegs']}, "
              f"TCPLossProbes {ext['TCPLossProbes']}, TCPDSACKRecvSegs "
              f"{ext['TCPDSACKRecvSegs']}, TCPTimeouts {ext['TCPTimeouts']}")
        assert all(v == 0 for v in dev_counters(lines).values()), (i, dev_counters(lines))
    for i in range(senders if senders == 4 else 1):
        report = iperf_json(node_lines(out, i), f"tcp{i}")
        print(f"{senders} senders: node {i}: {received_MBps(report)} MB/s")
    print(f"{senders} senders: lost to excess collisions {lost}, TCP retransmitted {retrans} "
          "not reported as duplicates")
    assert retrans <= lost, (retrans, lost)
    c = counters(r)
    assert all(v == 0 for n in c.values() for k, v in n.items() if k.startswith("drop_")), c
    assert all(n["causality_violations"] == 0 for n in c.values()), c
    assert all(st["queue_peak"] <= 1 for st in stations), stations
    assert all(c[i]["tx_deferred"] > 0 for i in range(senders)), c
