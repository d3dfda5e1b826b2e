"""`retrolink bench puma2`: runs, reports every figure of the paper's form, and is
deterministic: twice --quick, byte for byte."""
from helpers import (a_lead_too_long_is_caught, quick_bench_twice,
                     same_output_with_and_without_the_live_clock)

from retrolink.bench import puma2


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    a = quick_bench_twice("puma2", tmp_path, timeout=900)
    assert set(a["read_ms"]) == set(puma2.PATHS)
    assert all(v > 0 for v in a["read_ms"].values())
    # every page of the remote read came over the ring; the local one moved none
    assert a["network_ms"]["dsm_remote"] > 0 == a["network_ms"]["dsm_local"]
    # brd copies in kernel memory: no VME bus (but the counters' own reads), so it beats
    # the board's disk; the SCSI disk and NFS over 10 Mb/s are slower than either
    assert a["bus_ms"]["ramdisk"] < 0.1 and a["read_ms"]["ramdisk"] < a["read_ms"]["dsm_local"]
    assert a["read_ms"]["dsm_local"] < a["read_ms"]["scsi"] < a["read_ms"]["nfs"]
    # 1 MB is at least 0.84 s of payload at 10 Mb/s
    assert a["read_ms"]["nfs"] > 838
    assert round(sum(a["breakdown_pct"].values())) == 100
    # nothing beats the ring: 12.5 MB/s of data
    assert 0 < a["page_copy_MBps"] < 12.5
    assert a["fault_us"]["read"] > 0 and a["fault_us"]["write"] > 0
    assert a["parameters"]["machine"] == "puma-ii"


# the lock's page goes back and forth between the boards (a ping-pong of the ring's
# messages), then node 1 brings pages node 0 wrote (a stream of page copies)
LIVE_CLOCK_SCRIPT = "puma2ctl counter 40 && puma2ctl copy --pages 16"


def test_counter_and_copy_print_the_same_bytes_with_or_without_the_live_clock(artifacts):
    """The board's pending floor and lead (docs/fabric.md "Live time") decide only when in
    host time a node runs, never what it computes; a grant too long would deliver a frame
    late, which each node's board counts."""
    lines = same_output_with_and_without_the_live_clock(
        "puma-ii", {0: LIVE_CLOCK_SCRIPT, 1: LIVE_CLOCK_SCRIPT}, artifacts, "retrolink-puma2")
    assert any("RESULT" in l for l in lines[1]), lines


def test_a_lead_too_long_is_caught(artifacts):
    """The test above can fail: with a lead 100 us too long a board counts late frames."""
    a_lead_too_long_is_caught("puma-ii", {0: LIVE_CLOCK_SCRIPT, 1: LIVE_CLOCK_SCRIPT},
                              artifacts, "retrolink-puma2")
