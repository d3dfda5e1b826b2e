"""`retrolink bench net --quick`: runs on both machines and reports every figure, with the
hub's load from VMs and synthetic stations. Run once: six boots for a byte-for-byte
comparison cost more than the rest of the Ethernet tests together. Its determinism rests on
the runs it is made of, each tested twice: UDP round trips on eth-pair
(test_ethernet_guest.py), SX and Ethernet in one machine (tests/boards/multinet), the hub's
contention with synthetic stations (tests/fabric/test_hub_synthetic.py); and the SX
benchmark, the same harness, is compared byte for byte (tests/boards/sx/test_sx_bench.py)."""
import json

from helpers import run_retrolink


def test_quick_net_bench_reports_every_figure(artifacts, tmp_path):
    out = tmp_path / "net.json"
    r = run_retrolink("bench", "net", "--quick", "--json", str(out), timeout=3000)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    a = json.loads(out.read_text())
    assert set(a) == {"hub", "switch", "host_wall_s"}
    for name in ("hub", "switch"):
        m = a[name]
        assert set(m["udp_latency_us"]) == set(m["tcp_latency_us"]) == {"32", "1024"}
        assert all(v > 0 for v in [*m["udp_latency_us"].values(), *m["tcp_latency_us"].values()])
        # 1 KB takes longer than 32 B, by more on the slower network
        assert m["udp_latency_us"]["1024"] > m["udp_latency_us"]["32"]
        assert m["throughput_MBps"] > 0
    assert a["hub"]["throughput_MBps"] < 12.5 < a["switch"]["throughput_MBps"]   # 100 Mb/s
    hub = a["hub"]["hub_load"]
    assert [(p["vm_stations"], p["synthetic_stations"], p["stations"], p["offered_MBps"])
            for p in hub] == [(1, 0, 1, 4.0), (2, 0, 2, 8.0), (1, 2, 3, 12.0)]
    for p in hub:
        assert 0 < p["delivered_MBps"] <= p["offered_MBps"] * 1.05, p
    # one station alone on the hub never collides; three at once do
    assert hub[0]["collisions"] == 0 and hub[2]["collisions"] > 0, hub
    assert "hub: aggregate UDP throughput" in r.stdout
