"""`retrolink bench cenju3`: runs, reports every figure of the paper's form, and is
deterministic (the printed table and the JSON, byte for byte, host time aside)."""
from helpers import quick_bench_twice


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    a = quick_bench_twice("cenju3", tmp_path, timeout=1800)
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
