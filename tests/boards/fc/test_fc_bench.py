"""`retrolink bench puma3`: runs and reports every figure of the paper's form; and its
programs, run twice, print the same bytes (the figures are a function of what they print:
bench sx compares a whole benchmark twice, tests/boards/sx/test_sx_bench.py)."""
import re

import pytest
from helpers import (guest_script_run, quick_bench, same_output_twice,
                     same_output_with_and_without_the_live_clock)

from retrolink.bench import puma3
from retrolink.bench.results import find, parse_results

KEYS = {"raw", "fm_zc_dma", "fm_pio", "fm_split", "tcp"}


def test_quick_bench_reports_every_figure(artifacts, sparc, tmp_path):
    _, a = quick_bench("puma3", tmp_path, timeout=1200)
    assert set(a["bandwidth_MBps"]) == set(a["peak_MBps"]) == KEYS
    for key in KEYS:
        assert set(a["bandwidth_MBps"][key]) == {"64", "4096", "65536"}
        assert all(v > 0 for v in a["bandwidth_MBps"][key].values())
        assert a["peak_MBps"][key] == max(a["bandwidth_MBps"][key].values())
    assert set(a["stream_MBps"]) == set(puma3.STREAM_PROTOCOLS)
    for key in puma3.STREAM_PROTOCOLS:
        assert set(a["stream_MBps"][key]) == {"64", "4096", "65536"}
    assert set(a["fm_latency_us"]) == {"16", "1024"}
    assert a["fm_latency_us"]["16"] < a["fm_latency_us"]["1024"]
    # no protocol can beat the link: 1.0625 Gbaud, 8b/10b
    assert max(a["peak_MBps"].values()) < 106.25
    assert a["parameters"]["bandwidth"]["machine"] == "puma-iii"
    assert a["parameters"]["latency"]["machine"] == "puma-iii-ss5"
    assert a["parameters"]["latency"]["arch"] == "sparc32"     # the paper's SPARCstation 5s


def test_the_latency_programs_print_the_same_bytes_twice_on_the_sparcstations(sparc):
    """fc_bench's latency runs on the SPARCstation 5 nodes (sun4m, the SBus card), as the
    benchmark runs them, shorter: two runs, the same bytes."""
    d = puma3.load_definition(quick=True)
    modes = [p for p in d["protocols"] if p.startswith("fm_")]
    lines = same_output_twice(d["machines"]["latency"],
                              puma3.same_on_both(puma3.fc_bench(d, modes, [16, 1024])), sparc)
    assert sum("RESULT pingpong" in l for l in lines[0]) == 2 * len(modes)


def test_the_bandwidth_programs_print_the_same_bytes_twice(artifacts):
    """fc_bench on every protocol and NPtcp over FC, as the benchmark runs them, shorter."""
    d = puma3.load_definition(quick=True)
    d["sizes"], d["bandwidth"]["bytes"] = [64, 4096], 16384
    # NPtcp at 64 bytes in a run of its own, from 1024 to 4096 in one run
    d["tcp"]["one_run_from"] = 1024
    scripts = puma3.chain(puma3.same_on_both(puma3.fc_bench(d, d["protocols"], d["sizes"])),
                          puma3.tcp_scripts(d, [64, 1024, 4096]))
    lines = same_output_twice(d["machines"]["bandwidth"], scripts, artifacts)
    assert sum("RESULT pingpong" in l for l in lines[0]) == 2 * len(d["protocols"])
    # the one run steps through 1536, 2048 and 3072 bytes too
    assert puma3.nptcp_MBps(lines[0]).keys() == {"64", "1024", "1536", "2048", "3072", "4096"}


def test_nptcp_runs_a_size_each_below_one_run_from_and_one_run_over_the_others():
    d = puma3.load_definition(quick=False)
    small = [s for s in d["sizes"] if s < d["tcp"]["one_run_from"]]
    assert small and len(small) < len(d["sizes"])
    scripts = puma3.tcp_scripts(d, d["sizes"])
    sent, received = scripts[0].split(" && "), scripts[1].split(" && ")
    assert sent[0] == "echo @@tcp" and len(sent) == len(received) + 1 == len(small) + 2
    bounds = [re.search(r"-l (\d+) -u (\d+)", r).groups() for r in sent[1:]]
    assert bounds == [(str(s), str(s)) for s in small] + \
        [(str(d["tcp"]["one_run_from"]), str(max(d["sizes"])))]
    assert [re.search(r"-l \d+ -u \d+", r)[0] for r in received] == \
        [re.search(r"-l \d+ -u \d+", r)[0] for r in sent[1:]]
    # one run reaches its lower size times 2^k only
    with pytest.raises(ValueError, match="not 196608"):
        puma3.tcp_scripts(d, [65536, 196608, 262144])


def test_the_streaming_measurement_prints_the_same_bytes_twice_and_split_wins(artifacts):
    """fc_bench --mode stream as the benchmark runs it, shorter: the same bytes twice, and
    the split send, which prepares the next buffer while the DMA runs, beats zero-copy
    DMA, which prepares and sends in turn."""
    d = puma3.load_definition(quick=True)
    d["stream"]["sizes"], d["stream"]["bytes"] = [4096, 65536], 65536
    lines = same_output_twice(d["machines"]["bandwidth"], puma3.same_on_both(puma3.fc_stream(d)),
                              artifacts)
    res = parse_results(0, lines[0])
    mbps = {(p, s): puma3.stream_point(res, p, s).num("MBps")
            for p in puma3.STREAM_PROTOCOLS for s in d["stream"]["sizes"]}
    assert len(find(res, "stream")) == 4
    for s in d["stream"]["sizes"]:
        assert mbps["fm_split", s] > 1.2 * mbps["fm_zc_dma", s], mbps
    # no sender can beat the link: 1.0625 Gbaud, 8b/10b
    assert max(mbps.values()) < 106.25


def test_ping_pong_and_stream_print_the_same_bytes_with_or_without_the_live_clock(artifacts):
    """The adapter's pending floor and lead (docs/fabric.md "Live time") decide only when in
    host time a node runs, never what it computes; a grant too long would deliver a frame
    late, which each node's adapter counts."""
    d = puma3.load_definition(quick=True)
    d["bandwidth"]["bytes"], d["stream"]["sizes"], d["stream"]["bytes"] = 16384, [4096], 65536
    scripts = puma3.chain(puma3.same_on_both(puma3.fc_bench(d, d["protocols"], [64, 4096])),
                          puma3.same_on_both(puma3.fc_stream(d)))
    lines = same_output_with_and_without_the_live_clock(d["machines"]["bandwidth"], scripts,
                                                        artifacts, "retrolink-fc")
    assert sum("RESULT pingpong" in l for l in lines[0]) == 2 * len(d["protocols"])
    assert sum("RESULT stream" in l for l in lines[0]) == len(puma3.STREAM_PROTOCOLS)


BAD_ARGS = {
    "mode": ("--mode burst", "--mode: 'burst' is not pingpong or stream"),
    "raw": ("--mode stream --protocols raw", "not raw"),
    "pio": ("--mode stream --protocols fm_split,fm_pio", "not fm_pio"),
    "size": ("--mode stream --sizes 8", "--sizes"),
    "bytes": ("--mode stream --reps-bytes 0", "--reps-bytes"),
}


def test_fc_bench_refuses_bad_arguments(artifacts):
    """Each a message on stderr naming what is wrong, and exit status 2 (before the
    adapter is opened: node 1 runs nothing)."""
    script = "; ".join(f'out=$(fc_bench {args} 2>&1); echo "case-{name} rc=$? $out"'
                       for name, (args, _) in BAD_ARGS.items())
    r, lines = guest_script_run("puma-iii", script, nodes=(0,))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    for name, (_, message) in BAD_ARGS.items():
        (line,) = [l for l in lines[0] if l.startswith(f"case-{name} ")]
        assert line.startswith(f"case-{name} rc=2 fc_bench: "), line
        assert message in line, line
