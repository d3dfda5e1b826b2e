"""`retrolink bench via`: runs, reports every protocol at every size, and is deterministic:
twice --quick, byte for byte."""
from helpers import (a_lead_too_long_is_caught, quick_bench_twice,
                     same_output_with_and_without_the_live_clock)

from retrolink.bench import via


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    a = quick_bench_twice("via", tmp_path, timeout=900)
    d = via.load_definition(quick=True)
    sizes = {str(s) for s in d["sizes"]}
    assert set(a["latency_us"]) == set(via.PROTOCOLS)
    assert all(set(v) == sizes for v in a["latency_us"].values())
    assert set(a["bandwidth_MBps"]["via"]) == sizes
    lat = a["latency_us"]
    small, large = str(min(d["sizes"])), str(max(d["sizes"]))
    # user-level VIA beats the kernel's stacks over the same NIC, and polling beats blocking
    # (the blocking receiver pays the interrupt and a wake-up)
    assert lat["via_poll"][small] < lat["via_block"][small] < lat["udp"][small]
    assert lat["via_poll"][small] < lat["tcp"][small]
    # a larger message takes longer
    assert all(lat[p][small] < lat[p][large] for p in via.PROTOCOLS)
    # no transfer beats the link: 125 MB/s of data (the PCI bus, 133 MB/s, comes after)
    assert all(0 < v < 125 for v in a["bandwidth_MBps"]["via"].values())
    assert a["parameters"]["machine"] == "via"


def live_clock_scripts() -> dict[int, str]:
    """VIA ping-pong with polling completion, then its stream (--bandwidth), as the
    benchmark runs them, shorter."""
    d = via.load_definition(quick=True)
    d["sizes"], d["reps"] = [4, 4096], 4
    return {0: via.via_pingpong("client", 1, "poll", d, bandwidth=True),
            1: via.via_pingpong("server", 0, "poll", d, bandwidth=True)}


def test_ping_pong_and_stream_print_the_same_bytes_with_or_without_the_live_clock(artifacts):
    """The NIC's pending floor and lead (docs/fabric.md "Live time") decide only when in
    host time a node runs, never what it computes; a grant too long would deliver a frame
    late, which each node's NIC counts."""
    lines = same_output_with_and_without_the_live_clock("via", live_clock_scripts(), artifacts,
                                                        "retrolink-via")
    assert sum("RESULT" in l for l in lines[0]) >= 4, lines[0]


def test_a_lead_too_long_is_caught(artifacts):
    """The test above can fail: with a lead 100 us too long a NIC counts late frames."""
    a_lead_too_long_is_caught("via", live_clock_scripts(), artifacts, "retrolink-via")
