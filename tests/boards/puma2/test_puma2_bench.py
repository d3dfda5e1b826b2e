"""`retrolink bench puma2`: runs and reports every figure of the paper's form; and its
programs, run twice, print the same bytes (the figures are a function of what they print:
bench sx compares a whole benchmark twice, tests/boards/sx/test_sx_bench.py)."""
from helpers import quick_bench, same_output_twice

from retrolink.bench import puma2


def test_quick_bench_reports_every_figure(artifacts, tmp_path):
    _, a = quick_bench("puma2", tmp_path, timeout=900)
    assert set(a["read_ms"]) == set(puma2.PATHS)
    assert all(v > 0 for v in a["read_ms"].values())
    # every page of the remote read came over the ring; the local one moved none
    assert a["network_ms"]["dsm_remote"] > 0 == a["network_ms"]["dsm_local"]
    # brd copies in kernel memory: no VME bus (but the counters' own reads), so it beats
    # the board's disk
    assert a["bus_ms"]["ramdisk"] < 0.1 and a["read_ms"]["ramdisk"] < a["read_ms"]["dsm_local"]
    assert round(sum(a["breakdown_pct"].values())) == 100
    # nothing beats the ring: 12.5 MB/s of data
    assert 0 < a["page_copy_MBps"] < 12.5
    assert a["fault_us"]["read"] > 0 and a["fault_us"]["write"] > 0
    assert a["parameters"]["machine"] == "puma-ii"


def test_the_remote_read_and_copy_print_the_same_bytes_twice(artifacts):
    """The remote read and the page copy, as the benchmark runs them, smaller."""
    d = puma2.load_definition(quick=True)
    d["file_bytes"], d["copy"]["copy_pages"] = 65536, 16
    lines = same_output_twice(d["machine"], puma2.scripts(d, full=False), artifacts)
    assert sum("RESULT read path=dsm_remote" in l for l in lines[1]) == 1
    assert sum("RESULT copy" in l for l in lines[1]) == 1
