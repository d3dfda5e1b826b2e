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
    assert scripts[0].count("@@iperf") == 2 and scripts[1].count("@@iperf") == 1
