"""The sweep report: table rows, the figure file and its name, from a given sweep."""
from retrolink.bench import report
from retrolink.bench.cli import _file_name

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


def test_plot_names_carry_the_fixed_settings():
    assert _file_name("sx-sweep-sxm.mips-link.rate=125MB/s.png") == \
        "sx-sweep-sxm_mips-link_rate_125MB_s.png"
