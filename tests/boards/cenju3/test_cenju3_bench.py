"""`retrolink bench cenju3`: runs and reports every figure of the paper's form; and its
programs, run twice, print the same bytes (the figures are a function of what they print:
bench sx compares a whole benchmark twice, tests/boards/sx/test_sx_bench.py)."""
from helpers import quick_bench, same_output_twice, same_output_with_and_without_the_live_clock

from retrolink.bench import cenju3


def test_quick_bench_reports_every_figure(artifacts, tmp_path):
    _, a = quick_bench("cenju3", tmp_path, timeout=1800)
    assert set(a["latency_us"]) == set(a["local_latency_us"]) == {"4", "256", "2048"}
    # a long KMSG (above 440 bytes) takes the long path; remote IPC costs more than local
    assert a["latency_us"]["256"] < a["latency_us"]["2048"]
    assert all(a["local_latency_us"][s] < a["latency_us"][s] for s in a["latency_us"])
    assert a["breakdown_us"] and all(v >= 0 for v in a["breakdown_us"].values())
    # the breakdown is the one-way path of 4 bytes, which half the round trip measures
    assert abs(sum(a["breakdown_us"].values()) - a["latency_us"]["4"]) < 0.1 * a["latency_us"]["4"]
    d = cenju3.load_definition(quick=True)
    assert set(a["ool_avg_MBps"]) == set(a["ool_max_MBps"]) == {"1", "4"}
    assert a["ool_runs"] == d["ool"]["runs"]
    for p in ("1", "4"):
        # no transfer can beat the 40 MB/s link
        assert 0 < a["ool_avg_MBps"][p] <= a["ool_max_MBps"][p] < 40
    m = a["many_to_one"]
    assert m["senders"] == 7 and m["delivered"] == m["messages"] == 7 * 10


def test_the_pair_programs_print_the_same_bytes_twice(artifacts):
    """mach_bench's inline latency, local and remote, with the traced 4-byte message, and
    OOL throughput, as the benchmark runs them, shorter."""
    d = cenju3.load_definition(quick=True)
    d["sizes"], d["ool_pages"] = [4, 256], [1]
    d["latency"].update(reps=5, warmup=1)
    d["ool"].update(runs=2, warmup=1)
    lines = same_output_twice(d["machines"]["pair"], cenju3.pair_scripts(d), artifacts)
    assert any("RESULT ool" in l for l in lines[0]) and any("RESULT step" in l for l in lines[0])


def test_the_pair_programs_print_the_same_bytes_with_or_without_the_live_clock(artifacts):
    """The interface's pending floor and lead (docs/fabric.md "Live time") decide only when
    in host time a node runs, never what it computes; a grant too long would deliver a
    packet late, which each node's interface counts."""
    d = cenju3.load_definition(quick=True)
    d["sizes"], d["ool_pages"] = [4, 256], [1]
    d["latency"].update(reps=5, warmup=1)
    d["ool"].update(runs=2, warmup=1)
    lines = same_output_with_and_without_the_live_clock(d["machines"]["pair"],
                                                        cenju3.pair_scripts(d), artifacts,
                                                        "retrolink-cenju3")
    assert any("RESULT ool" in l for l in lines[0]) and any("RESULT step" in l for l in lines[0])
