"""`retrolink bench puma3`: runs, reports every figure of the paper's form, and is
deterministic (the printed table and the JSON, byte for byte, host time aside)."""
from helpers import quick_bench_twice

KEYS = {"raw", "fm_zc_dma", "fm_pio", "fm_split", "tcp"}


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    a = quick_bench_twice("puma3", tmp_path, timeout=1200)
    assert set(a["bandwidth_MBps"]) == set(a["peak_MBps"]) == KEYS
    for key in KEYS:
        assert set(a["bandwidth_MBps"][key]) == {"64", "4096", "65536"}
        assert all(v > 0 for v in a["bandwidth_MBps"][key].values())
        assert a["peak_MBps"][key] == max(a["bandwidth_MBps"][key].values())
    assert set(a["fm_latency_us"]) == {"16", "1024"}
    assert a["fm_latency_us"]["16"] < a["fm_latency_us"]["1024"]
    # no protocol can beat the link: 1.0625 Gbaud, 8b/10b
    assert max(a["peak_MBps"].values()) < 106.25
    assert a["parameters"]["bandwidth"]["machine"] == "puma-iii"
    assert a["parameters"]["latency"]["machine"] == "puma-iii-ss5"
