"""`retrolink bench cenju3`: runs, reports every figure of the paper's form, and is
deterministic (the printed table and the JSON, byte for byte, host time aside)."""
import json

from helpers import run_retrolink


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    runs = []
    for i in range(2):
        out = tmp_path / f"cenju3-{i}.json"
        r = run_retrolink("bench", "cenju3", "--quick", "--json", str(out), timeout=1800)
        assert r.returncode == 0, r.stdout + r.stderr
        runs.append((r.stdout, json.loads(out.read_text())))
    (table_a, a), (table_b, b) = runs
    assert table_a == table_b
    a.pop("host_wall_s"), b.pop("host_wall_s")
    assert a == b
    assert set(a["latency_us"]) == set(a["local_latency_us"]) == {"4", "256", "2048"}
    # a long KMSG (above 440 bytes) takes the long path; remote IPC costs more than local
    assert a["latency_us"]["256"] < a["latency_us"]["2048"]
    assert all(a["local_latency_us"][s] < a["latency_us"][s] for s in a["latency_us"])
    assert a["breakdown_us"] and all(v >= 0 for v in a["breakdown_us"].values())
    # the breakdown is the one-way path of 4 bytes, which half the round trip measures
    assert abs(sum(a["breakdown_us"].values()) - a["latency_us"]["4"]) < 0.1 * a["latency_us"]["4"]
    assert set(a["ool_avg_MBps"]) == set(a["ool_max_MBps"]) == {"1", "4"}
    for p in ("1", "4"):
        # no transfer can beat the 40 MB/s link
        assert 0 < a["ool_avg_MBps"][p] <= a["ool_max_MBps"][p] < 40
    m = a["many_to_one"]
    assert m["senders"] == 7 and m["delivered"] == m["messages"] == 7 * 10
