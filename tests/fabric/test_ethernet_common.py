"""What the hub and the Ethernet switch share (docs/fabric.md, "Ethernet"): the default
MTU is the largest Ethernet frame without FCS, 1514 bytes, and a longer one is dropped;
bad parameters are configuration errors; the known kinds are listed."""
import pytest
from ethernet import times, wire_ns
from fakenode import check_config, cluster, finish, run_until_delivered

BYTE = 80                              # 100 Mb/s


@pytest.mark.parametrize("topology, unloaded", [
    ("hub rate=12500000 prop_ns=1500", lambda w: w + 1500),
    ("ethernet_switch rate=12500000 prop_ns=500 switch_delay_ns=5000",
     lambda w: 2 * (w + 500) + 5000),
])
def test_default_mtu_is_1514_and_a_longer_frame_is_dropped(fabric, topology, unloaded):
    f, n = cluster(fabric, 2, topology)
    n[0].send(0, 1, b"x" * 1515, seq=0)
    n[0].send(0, 1, b"y" * 1514, seq=1)
    run_until_delivered(n, {1: 1})
    assert n[1].delivered[0]["payload"] == b"y" * 1514
    assert times(n[1]) == [unloaded(wire_ns(1514, BYTE))]
    assert finish(f, n)["drops"]["oversize"] == 1


@pytest.mark.parametrize("topology, why", [
    ("hub rate=12500000 prop_ns=2881", "round trip"),            # 2 * prop > 5760 ns
    ("hub rate=1250000 prop_ns=0", "prop_ns > 0"),
    ("hub rate=1250000 backoff_limit=17", "backoff_limit <= 16"),
    ("hub rate=1250000 colour=blue", "no parameter 'colour'"),
    ("hub prop_ns=1000", "missing rate="),
    ("ethernet_switch rate=12500000 queue_frames=0", "queue_frames from 1 to 4096"),
    ("ethernet_switch rate=12500000 queue_frames=4097", "queue_frames from 1 to 4096"),
    ("ethernet_switch rate=12500000 mtu=65537", "mtu=65537: at most 65536"),
    ("ethernet_switch rate=12500000 ifg_bits=1000000000000",
     "inter-frame gap lasts more than 10^12 ns"),
    ("ethernet_switch rate=12500000 bb_credit=1", "no parameter 'bb_credit'"),
    ("bus rate=1", "hub, ethernet_switch, cpci_bus)"),                     # the known kinds
])
def test_bad_parameters_are_configuration_errors(fabric_binary, tmp_path, topology, why):
    r = check_config(fabric_binary, tmp_path, f"nodes 2\ntopology {topology}\n")
    assert r.returncode == 2 and why in r.stderr, r.stderr
