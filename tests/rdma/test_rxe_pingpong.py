"""soft-RoCE carries a ping-pong over the gigabit switch (docs/rdma.md): perftest's
ib_send_lat and ib_write_bw between two nodes through rxe0 on their e1000 NICs, with
figures the model bounds: a message takes at least its frames' time on both links and
the switch, and no stream beats the link."""
import pytest

from retrolink.bench.interconnects import load_definition
from retrolink.bench.results import one, parse_results
from retrolink.model.machine import load_machine
from retrolink.run.runner import run_cluster

pytestmark = pytest.mark.usefixtures("artifacts")
SIZES = (4, 1024)
# RoCE v2 headers in a frame besides the payload: Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC
# 4 (IBA annex A17); the FCS, preamble and minimum frame are the network's (wire_ns)
ROCE_HEADERS = 14 + 20 + 8 + 12 + 4


def least_one_way_ns(machine, payload: int) -> float:
    """A payload in one frame: on the sender's link, stored whole in the switch, looked
    up, on the receiver's link."""
    lan = machine.networks["lan"]
    return 2 * (lan.wire_ns(ROCE_HEADERS + payload) + lan.prop_ns) + lan.switch_delay_ns


def test_ib_send_lat_and_write_bw_over_rxe(artifacts):
    # bench interconnects' machine (and its snapshot): two 600 MIPS nodes of eth-switch
    net = load_definition(quick=True)["networks"]["rxe"]
    machine = load_machine(net["machine"], net["set"])
    opts = "--sizes 4,1024 --bw-sizes 1024 --reps 20"
    result = run_cluster(machine, artifacts, {0: f"rxe-perf --client node1 {opts}",
                                              1: f"rxe-perf --server {opts}"}, "rxe-perf")
    assert result.ok, result.problems
    res = parse_results(0, next(r.lines for r in result.nodes if r.node == 0))
    lat = {s: one(res, "rxe_latency", program="ib_send_lat", size=s).num("us") for s in SIZES}
    for s in SIZES:
        assert least_one_way_ns(machine, s) / 1000 < lat[s] < 2000, (s, lat)
    assert lat[4] < lat[1024], lat
    bw = one(res, "rxe_bandwidth", program="ib_write_bw", size=1024).num("MBps")
    assert 0 < bw < machine.networks["lan"].rate / 1e6, bw
