"""`bench interconnects`'s pieces that need no guest: its definition, the CPU-load slots in
virtual time, each node's script, the table and the plot."""
from datetime import datetime

import pytest

from retrolink.bench import interconnects as ic
from retrolink.bench import interconnects_report as report
from retrolink.model.machine import load_machine
from retrolink.progress import StepFailed
from retrolink.run.node_command import RTC_BASE, RTC_BASE_EPOCH_S


def test_the_epoch_constant_is_the_guests_clock_at_power_on():
    assert RTC_BASE_EPOCH_S == int(datetime.fromisoformat(RTC_BASE + "+00:00").timestamp())


@pytest.mark.parametrize("quick", [False, True])
def test_every_network_names_a_machine_and_known_protocols(quick):
    d = ic.load_definition(quick)
    ic.check_definition(d)
    for name, net in d["networks"].items():
        load_machine(net["machine"], net.get("set", {}))
    assert {"udp", "tcp"} <= set(d["cpu_load"]["protocols"]) <= set(ic.PROTOCOLS)


def test_an_unknown_protocol_is_refused_by_name():
    d = ic.load_definition(True)
    d["networks"]["hub"]["protocols"].append("carrier_pigeon")
    with pytest.raises(StepFailed, match="network hub: no protocol carrier_pigeon"):
        ic.check_definition(d)


def test_load_slots_follow_each_other_from_start_s():
    d = ic.load_definition(True)
    c = d["cpu_load"]
    slots = ic.load_slots(d)
    assert [p for p, _ in slots] == [ic.IDLE] + c["protocols"]
    first = (RTC_BASE_EPOCH_S + c["start_s"]) * 1000
    assert [at for _, at in slots] == [first + k * (c["stream_ms"] + c["slot_gap_ms"])
                                       for k in range(len(slots))]
    # the window lies inside the stream
    assert c["settle_ms"] + c["window_ms"] <= c["stream_ms"]


def test_scripts_meter_both_sides_of_each_stream_then_ping():
    d = ic.load_definition(True)
    s = ic.scripts(d, ["udp", "tcp", "via_poll"])
    for proto, at in ic.load_slots(d):
        meter = f"cpu_meter --at {at + d['cpu_load']['settle_ms']} --ms {d['cpu_load']['window_ms']} --tag {proto}"
        assert meter in s[0] and meter in s[1]
    assert s[0].count("udp_pingpong stream") == 2 and s[1].count("udp_pingpong sink") == 2
    assert "udp_pingpong stream --tcp" in s[0] and "udp_pingpong sink --tcp" in s[1]
    # the pings come after the streams; VIA's server runs on node 1, UDP/TCP's are echo servers
    assert s[0].index("udp_pingpong ping") > s[0].rindex("udp_pingpong stream")
    assert "via_pingpong --client --peer 1 --mode poll" in s[0]
    assert "via_pingpong --server --peer 0 --mode poll" in s[1]
    assert s[1].startswith("udp_pingpong echo")


def fake_result() -> dict:
    d = ic.load_definition(True)
    lat = {"hub": {"udp": {str(s): 30.0 + s / 10 for s in d["sizes"]},
                   "tcp": {str(s): 35.0 + s / 10 for s in d["sizes"]}},
           "clan": {"udp": {str(s): 30.0 + s / 100 for s in d["sizes"]},
                    "via_poll": {str(s): 8.0 + s / 120 for s in d["sizes"]}}}
    load = {n: {p: {"sender": 1.5, "receiver": 2.5} for p in ("idle", "udp", "tcp")}
            for n in lat}
    params = {n: ic.machine_parameters(load_machine(m)) for n, m in (("hub", "p3-hub"),
                                                                     ("clan", "via"))}
    return {"latency_us": lat, "cpu_load_pct": load, "parameters": params,
            "definition": {k: d[k] for k in ("sizes", "reps", "warmup", "cpu_load")}}


def test_table_has_a_block_per_network_and_the_cpu_load():
    t = report.table(fake_result())
    assert "100 Mb/s hub (82557, DMA): p3-hub (2 x 600 MIPS; e100; hub 12.5 MB/s)" in t
    assert "cLAN 1.25 Gb/s: via" in t
    assert "    size_B          udp   via_poll" in t
    assert "         4         30.0        8.0\n" in t
    assert "      1024        132.4      137.4\n" in t
    assert "  hub                1.5        2.5        1.5" in t


def test_plot_is_written(tmp_path):
    png = tmp_path / "x.png"
    report.plot(fake_result(), png)
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_bandwidth_of_a_protocol_without_it_is_refused():
    d = ic.load_definition(True)
    d["networks"]["hub"]["bandwidth"] = ["udp"]
    with pytest.raises(StepFailed, match="network hub: bandwidth of udp"):
        ic.check_definition(d)


def test_rxe_runs_perftest_on_both_nodes_with_its_bandwidth():
    d = ic.load_definition(True)
    net = d["networks"]["rxe"]
    s = ic.scripts(d, net["protocols"], net["bandwidth"])
    sizes = ",".join(map(str, d["sizes"]))
    # perftest's least iterations, more than --quick's reps
    reps = max(d["reps"], ic.PERFTEST_MIN_ITERS)
    assert d["reps"] < reps
    assert f"rxe-perf --client node1 --sizes {sizes} --reps {reps} --bw-sizes {sizes}" in s[0]
    assert f"rxe-perf --server --sizes {sizes} --reps {reps} --bw-sizes {sizes}" in s[1]
    assert load_machine(net["machine"], net["set"]).guest.packages == ["rdma"]


def test_table_and_plot_show_the_bandwidths(tmp_path):
    r = fake_result()
    sizes = r["definition"]["sizes"]
    r["bandwidth_MBps"] = {"clan": {"via_poll": {str(s): s / 10 for s in sizes}}}
    t = report.table(r)
    assert "    size_B          udp   via_poll via_poll_MBps" in t
    assert "      1024         40.2       16.5        102.40\n" in t
    report.plot(r, tmp_path / "x.png")
    assert (tmp_path / "x.png").read_bytes()[:4] == b"\x89PNG"
