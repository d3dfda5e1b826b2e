"""`bench cenju3`'s pieces that need no guest: the breakdown from the two PEs' traced
steps, the OOL sweep's points and their average and maximum, the quick definition, the
table's form."""
import pytest

from retrolink.bench import cenju3
from retrolink.bench.results import parse_results
from retrolink.progress import StepFailed


def test_breakdown_is_the_one_way_path_in_virtual_time():
    sender = ["RESULT step side=send name=mach_msg t_ns=1000",
              "RESULT step side=send name=request_queued t_ns=4000"]
    receiver = ["RESULT step side=recv name=request_arrived t_ns=20500",
                "RESULT step side=recv name=rcv_done t_ns=27000",
                "RESULT step side=recv name=de_accept_tx t_ns=30000"]
    # the sender's steps beside the receiver's are not on the path
    late = ["RESULT step side=send name=de_done_rx t_ns=24000"]
    res = parse_results(0, sender + late) + parse_results(1, receiver)
    assert cenju3.breakdown(res) == {"mach_msg->request_queued": 3.0,
                                     "request_queued->request_arrived": 16.5,
                                     "request_arrived->rcv_done": 6.5}


def test_breakdown_needs_two_steps():
    with pytest.raises(StepFailed, match="fewer than 2 steps"):
        cenju3.breakdown(parse_results(0, ["RESULT step side=send name=x t_ns=1"]))


def ool_lines(pages, runs=20):
    return [f"RESULT ool pages={p} runs={runs} avg_MBps={10 + p / 2:.3f} max_MBps={11 + p / 2:.3f}"
            for p in pages]


def test_default_ool_sweep_is_every_page_count_of_the_paper():
    full, quick = cenju3.load_definition(False), cenju3.load_definition(True)
    assert full["ool_pages"] == list(range(1, 26))
    # the quick run keeps a subset, and the figure's runs are separate transfers
    assert set(quick["ool_pages"]) < set(full["ool_pages"])
    assert full["ool"]["runs"] >= 5 and quick["ool"]["runs"] >= 2
    assert f"--ool-pages {','.join(map(str, range(1, 26)))} " in cenju3.pair_scripts(full)[0]


def test_ool_sweep_reads_average_and_maximum_of_every_page_count():
    d = cenju3.load_definition(False)
    r = cenju3.ool_sweep(parse_results(0, ool_lines(range(1, 26), d["ool"]["runs"])), d)
    assert r["ool_runs"] == d["ool"]["runs"]
    assert list(r["ool_avg_MBps"]) == list(r["ool_max_MBps"]) == [str(p) for p in range(1, 26)]
    assert r["ool_avg_MBps"]["9"] == 14.5 and r["ool_max_MBps"]["9"] == 15.5


@pytest.mark.parametrize("missing", [1, 9, 17, 25])
def test_ool_sweep_with_a_page_count_missing_fails(missing):
    d = cenju3.load_definition(False)
    lines = ool_lines((p for p in range(1, 26) if p != missing), d["ool"]["runs"])
    with pytest.raises(StepFailed, match=f"no ool results for pages={missing} "):
        cenju3.ool_sweep(parse_results(0, lines), d)


def test_ool_sweep_refuses_other_counts_runs_and_an_average_above_the_maximum():
    d = cenju3.load_definition(True)
    with pytest.raises(StepFailed, match="for pages 8, which the definition"):
        cenju3.ool_sweep(parse_results(0, ool_lines(d["ool_pages"] + [8], d["ool"]["runs"])), d)
    with pytest.raises(StepFailed, match="over 3 runs, not 4"):
        cenju3.ool_sweep(parse_results(0, ool_lines(d["ool_pages"], 3)), d)
    runs = d["ool"]["runs"]
    inverted = [f"RESULT ool pages=1 runs={runs} avg_MBps=12.5 max_MBps=12.4"] + \
        ool_lines(d["ool_pages"][1:], runs)
    with pytest.raises(StepFailed, match="average for 1 pages is above its maximum"):
        cenju3.ool_sweep(parse_results(0, inverted), d)


def test_permits_per_page_count():
    assert [cenju3.permits(p) for p in (1, 8, 9, 16, 17, 24, 25)] == [1, 1, 2, 2, 3, 3, 4]


def test_quick_definition_replaces_the_full_values():
    full, quick = cenju3.load_definition(False), cenju3.load_definition(True)
    assert quick["sizes"] == full["quick"]["sizes"] and quick["sizes"] != full["sizes"]
    assert quick["latency"]["reps"] == full["quick"]["reps"]
    assert quick["latency"]["warmup"] == full["latency"]["warmup"]
    assert quick["many_to_one"]["messages"] == full["quick"]["messages"]


def test_many_to_one_scripts_for_the_64_pe_machine_have_63_senders():
    """bench cenju3's many-to-one runs on cenju-3-8 (7 senders); its scripts on the 64-PE
    machine name 63 senders to one port on PE 0."""
    from retrolink.model.machine import load_machine
    for quick in (False, True):
        machines = cenju3.load_definition(quick)["machines"]
        assert machines == {"pair": "cenju-3", "many": "cenju-3-8"}
    nodes = load_machine("cenju-3-64", {}).cluster.nodes
    assert nodes == 64
    many = cenju3.many_scripts(cenju3.load_definition(False), nodes)
    assert many[0].startswith("mach_bench sink --senders 63 ")
    assert all(many[n].startswith("mach_bench source --server-node 0 ") for n in range(1, 64))


def test_scripts_name_every_node():
    d = cenju3.load_definition(True)
    pair = cenju3.pair_scripts(d)
    assert pair[0].startswith("mach_bench client --server-node 1 --sizes 4,256,2048")
    assert pair[1] == "mach_bench serve --trace 1"
    many = cenju3.many_scripts(d, 8)
    assert sorted(many) == list(range(8))
    assert many[0] == f"mach_bench sink --senders 7 --messages {d['many_to_one']['messages']}"


def test_table_has_every_figure():
    r = {"latency_us": {"4": 30.0, "2048": 120.5}, "local_latency_us": {"4": 9.0, "2048": 20.0},
         "breakdown_us": {"a->b": 3.0, "b->c": 16.5},
         "ool_runs": 20,
         "ool_avg_MBps": {"1": 20.0, "25": 31.5}, "ool_max_MBps": {"1": 21.0, "25": 32.0},
         "many_to_one": {"senders": 7, "messages": 70, "delivered": 70},
         "parameters": {"pair": {"machine": "cenju-3", "cpu_mips": 75,
                                 "networks": {"min": {"topology": "min", "rate": 40e6}}}}}
    t = cenju3.table(r)
    assert "machine cenju-3 (75 MIPS), network min 40 MB/s" in t
    assert "    2048       120.5       20.0" in t
    assert "total" in t and "19.50" in t
    assert "average and maximum of 20 runs (figure 7)" in t
    assert "     25      31.50      32.00        4" in t
    assert "many-to-one: 7 senders, 70 messages, 70 delivered" in t
