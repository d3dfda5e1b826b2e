"""`retrolink bench sx`: runs, reports every figure, and is deterministic."""
from helpers import quick_bench_twice, same_output_with_and_without_the_live_clock

FIGURES = ("send_msgs_per_s", "recv_msgs_per_s", "max_latency_us")


def test_quick_bench_twice_gives_identical_results(artifacts, tmp_path):
    a = quick_bench_twice("sx", tmp_path, timeout=900)
    for name in FIGURES:
        assert a[name] > 0
    assert set(a["latency_us"]) == set(a["throughput_MBps"]) == {"64", "4096"}
    assert a["parameters"]["boards"]["sx"]["sxm"]["mips"] == 1.9


def test_ping_pong_and_stream_print_the_same_bytes_with_or_without_the_live_clock(artifacts):
    """The board's pending floor (its SXM's pipeline and confirmations, docs/fabric.md "Live
    time") decides only when in host time a node runs, never what it computes; a grant too
    long would deliver a frame late, which each node's board counts."""
    scripts = {
        0: ("sx_bench pingpong --peer 1 --sizes 64,4096 --iters 4 --warmup 1 && "
            "sx_bench stream --dst 1 --size 4096 --count 16 --window 8"),
        1: "sx_bench echo --peer 0 && sx_bench sink --count 16 --size 4096",
    }
    lines = same_output_with_and_without_the_live_clock("sure-sx", scripts, artifacts,
                                                        "retrolink-sx")
    assert sum("latency_us" in l for l in lines[0]) == 2, lines[0]
    assert any("throughput_MBps" in l for l in lines[1]), lines[1]
