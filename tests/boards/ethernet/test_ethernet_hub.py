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
