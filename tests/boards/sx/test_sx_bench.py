"""`retrolink bench sx`: runs, reports every figure, and is deterministic."""
from helpers import quick_bench_twice

FIGURES = ("send_msgs_per_s", "recv_msgs_per_s", "max_latency_us")


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    a = quick_bench_twice("sx", tmp_path, timeout=900)
    for name in FIGURES:
        assert a[name] > 0
    assert set(a["latency_us"]) == set(a["throughput_MBps"]) == {"64", "4096"}
    assert a["parameters"]["boards"]["sx"]["sxm"]["mips"] == 1.9
