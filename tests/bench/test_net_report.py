"""`bench net`'s pieces that need no guest: the collisions counted per slot of virtual
time from the fabric's trace, iperf3's JSON between markers, the table's form."""
from retrolink.bench import net, report

START = net.RTC_BASE_EPOCH + 40


def test_collisions_are_counted_in_their_slot():
    at = lambda s: round((START - net.RTC_BASE_EPOCH + s) * 10**9)
    trace = "\n".join([f"{at(-1)} collision src=0 dst=3 len=60 seq=1",      # before slot 0
                       f"{at(0.5)} collision src=0 dst=3 len=60 seq=2",
                       f"{at(0.6)} start src=0 dst=3 len=60 seq=2",
                       f"{at(4.2)} collision src=1 dst=3 len=1514 seq=9",
                       f"{at(4.3)} collision src=0 dst=3 len=1514 seq=8",
                       f"{at(9)} collision src=0 dst=3 len=60 seq=3"])     # after the last
    assert net.count_collisions(trace, START, 4, 2) == [1, 2]


def test_iperf_json_between_markers():
    lines = ["boot", "@@iperf x", "{", '"end": {"sum_received": {"bytes": 2500000,',
             '"seconds": 2.0}}', "}", "@@end x", "after"]
    assert net.received_MBps(net.iperf_json(lines, "x")) == 1.25


def test_hub_load_scripts_send_in_their_slots():
    from retrolink.model.machine import load_machine
    d = net.load_definition(True)
    scripts = net.hub_load_scripts(load_machine("eth-hub", {}), d, START)
    assert set(scripts) == {0, 1, 3}            # two senders at most, the last node serves
    assert "-p 5201" in scripts[0] and "-p 5202" in scripts[1]
    assert scripts[0].count("@@iperf") == 3 and scripts[1].count("@@iperf") == 1


def test_synthetic_senders_fill_their_slot_at_the_offered_load():
    """Point 2 of --quick is one VM and two synthetic senders at 4 MB/s: the generators
    are on the hub, start at the slot, and send 1 s of 1472-byte datagrams as frames."""
    from retrolink.model.machine import load_machine
    d = net.load_definition(True)
    machine = load_machine("eth-hub", {})
    loaded, ids = net.with_synthetic_senders(machine, d, START)
    gens = loaded.networks["lan"].synthetic
    assert ids == {0: [], 1: [], 2: [4, 5]} and len(gens) == 2
    slot = d["hub_load"]["seconds"] + net.SLOT_MARGIN_S
    for g in gens:
        assert g.start_ns == (START + 2 * slot - net.RTC_BASE_EPOCH) * 10**9
        assert g.size == 1472 + 42 and g.interval_ns == 368_000 and g.dst == 3
        assert g.count == 2717                     # 1 s / 368 us
    assert loaded.total_nodes() == 6 and machine.total_nodes() == 4


def test_synthetic_delivery_is_counted_from_the_trace_as_udp_payload():
    trace = "\n".join(["100 arrive src=4 dst=3 len=1514 seq=1",
                       "200 arrive src=0 dst=3 len=1514 seq=1",       # a VM's: iperf3 counts it
                       "300 excess_collisions src=5 dst=3 len=1514 seq=2",
                       "400 arrive src=5 dst=3 len=1514 seq=3 net=0"])
    assert net.synthetic_delivered_MBps(trace, {4, 5}, 0.001) == 2.944
