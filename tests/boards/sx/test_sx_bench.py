"""`retrolink bench sx`: runs, reports every figure, and is deterministic."""
import json

from helpers import run_retrolink

FIGURES = ("send_msgs_per_s", "recv_msgs_per_s", "max_latency_us")


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    runs = []
    for i in range(2):
        out = tmp_path / f"sx{i}.json"
        r = run_retrolink("bench", "sx", "--quick", "--json", str(out), timeout=900)
        assert r.returncode == 0, r.stdout + r.stderr
        runs.append((r.stdout, json.loads(out.read_text())))
    (table_a, a), (table_b, b) = runs
    assert table_a == table_b                       # the printed table, byte for byte
    a.pop("host_wall_s"), b.pop("host_wall_s")
    assert a == b
    for name in FIGURES:
        assert a[name] > 0
    assert set(a["latency_us"]) == set(a["throughput_MBps"]) == {"64", "4096"}
    assert a["parameters"]["boards"]["sx"]["sxm"]["mips"] == 1.9
