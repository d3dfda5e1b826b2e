"""`retrolink bench net --quick`: runs on both machines, reports every figure, and is
deterministic (the same table and JSON twice)."""
import json

from helpers import run_retrolink


def test_quick_net_bench_twice_gives_identical_results(artifacts, tmp_path):
    runs = []
    for i in range(2):
        out = tmp_path / f"net{i}.json"
        r = run_retrolink("bench", "net", "--quick", "--json", str(out), timeout=3000)
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        runs.append((r.stdout, json.loads(out.read_text())))
    (table_a, a), (table_b, b) = runs
    assert table_a == table_b                       # the printed table, byte for byte
    a.pop("host_wall_s"), b.pop("host_wall_s")
    assert a == b
    assert set(a) == {"hub", "switch"}
    for m in a.values():
        assert set(m["udp_latency_us"]) == set(m["tcp_latency_us"]) == {"32", "1024"}
        assert all(v > 0 for v in [*m["udp_latency_us"].values(), *m["tcp_latency_us"].values()])
        assert m["throughput_MBps"] > 0
    hub = a["hub"]["hub_load"]
    assert [(p["vm_stations"], p["synthetic_stations"], p["stations"], p["offered_MBps"])
            for p in hub] == [(1, 0, 1, 4.0), (2, 0, 2, 8.0), (1, 2, 3, 12.0)]
    for p in hub:
        assert 0 < p["delivered_MBps"] <= p["offered_MBps"] * 1.05, p
    # one station alone on the hub never collides; three at once do
    assert hub[0]["collisions"] == 0 and hub[2]["collisions"] > 0, hub
