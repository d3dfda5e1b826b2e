"""`retrolink bench via`: runs, reports every protocol at every size, and is deterministic:
twice --quick, byte for byte."""
from helpers import quick_bench_twice

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
