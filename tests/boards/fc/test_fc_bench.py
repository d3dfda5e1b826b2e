"""`retrolink bench puma3`: runs and reports every figure of the paper's form; and its
programs, run twice, print the same bytes (the figures are a function of what they print:
bench sx compares a whole benchmark twice, tests/boards/sx/test_sx_bench.py)."""
from helpers import quick_bench, same_output_twice

from retrolink.bench import puma3

KEYS = {"raw", "fm_zc_dma", "fm_pio", "fm_split", "tcp"}


def test_quick_bench_reports_every_figure(artifacts, tmp_path):
    _, a = quick_bench("puma3", tmp_path, timeout=1200)
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


def test_the_bandwidth_programs_print_the_same_bytes_twice(artifacts):
    """fc_bench on every protocol and NPtcp over FC, as the benchmark runs them, shorter."""
    d = puma3.load_definition(quick=True)
    d["sizes"], d["bandwidth"]["bytes"] = [64, 4096], 16384
    lines = same_output_twice(d["machines"]["bandwidth"], puma3.bandwidth_scripts(d), artifacts)
    assert sum("RESULT pingpong" in l for l in lines[0]) == 2 * len(d["protocols"])
    assert puma3.nptcp_MBps(lines[0]).keys() == {"64", "4096"}
