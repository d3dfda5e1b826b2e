"""The sweep report: table rows, the figure file and its name, from a given sweep."""
from retrolink.bench import report
from retrolink.bench.harness import file_name

SWEEP = {"key": "sxm.mips", "points": [
    {"value": 1.9, "throughput_MBps": {"256": 0.6, "4096": 10.9}, "saturating_length": None},
    {"value": 20, "throughput_MBps": {"256": 5.1, "4096": 12.2}, "saturating_length": 4096}]}


def test_table_has_a_row_per_value_and_the_saturating_length():
    lines = report.sweep_table(SWEEP).splitlines()
    assert lines[1].split() == ["sxm.mips", "256B", "4096B", "saturating_length_B"]
    assert lines[2].split() == ["1.9", "0.600", "10.900", ">", "4096"]
    assert lines[3].split() == ["20", "5.100", "12.200", "4096"]


def test_plot_is_a_png(tmp_path):
    path = report.sweep_plot(SWEEP, tmp_path / "s.png", "t", (256, 4096))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_places_rates_by_size_and_names_in_order():
    assert report._positions(["10MB/s", "100Mb/s", 40000000]) == ([1e7, 12.5e6, 4e7], True)
    assert report._positions(["token_ring", "switch"]) == ([0.0, 1.0], False)


def test_plot_of_a_sweep_of_rates_or_names_is_drawn(tmp_path):
    for values in (["10MB/s", "100MB/s"], ["token_ring", "switch"]):
        sweep = {"key": "k", "points": [dict(SWEEP["points"][i], value=v)
                                        for i, v in enumerate(values)]}
        path = report.sweep_plot(sweep, tmp_path / "s.png", "t", (256, 4096))
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_names_carry_the_fixed_settings():
    assert file_name("sx-sweep-sxm.mips-link.rate=125MB/s.png") == \
        "sx-sweep-sxm_mips-link_rate_125MB_s.png"


def test_a_failed_sweep_point_keeps_the_points_before_it(tmp_path, monkeypatch, capsys):
    """The second point fails: the first is still printed, plotted and in the JSON."""
    import json

    import pytest

    from retrolink import paths
    from retrolink.bench import sx
    from retrolink.build import pipeline as build
    from retrolink.cli import make_parser
    from retrolink.progress import StepFailed

    calls = []

    def measure(machine, art, d, sizes):
        calls.append(machine.board_of_model("sx").sxm.mips)
        if len(calls) == 2:
            raise StepFailed("node0: command exited with status 1")
        return {"latency_us": {str(s): 100.0 for s in sizes},
                "throughput_MBps": {str(s): 1.0 for s in sizes}}

    out = tmp_path / "r.json"
    # the parser imports every benchmark's harness, whose definitions are in the checkout
    args = make_parser().parse_args(["bench", "sx", "--quick", "--sweep", "sxm.mips=1.9,20,100",
                                     "--json", str(out)])
    monkeypatch.setattr(build, "build_all", lambda: None)
    monkeypatch.setattr(sx, "measure_latency_and_throughput", measure)
    monkeypatch.setattr(paths, "REPO", tmp_path)
    with pytest.raises(StepFailed, match="sweep stopped at sxm.mips=20"):
        args.func(args)
    assert len(calls) == 2
    result = json.loads(out.read_text())
    assert [p["value"] for p in result["sweeps"][0]["points"]] == [1.9]
    assert "sxm.mips=20" in result["incomplete"]
    assert "1.9" in capsys.readouterr().out
    assert list((tmp_path / "results").glob("sx-sweep-sxm_mips*.png"))
