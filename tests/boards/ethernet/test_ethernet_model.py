"""Model test: the one-way time of a UDP datagram measured in the guest is the sum of the
component times (docs/boards/ethernet.md, "How a frame's times are computed").

A datagram of n bytes travels as a frame of F = n + 42 bytes (UDP 8, IPv4 20, Ethernet
14; at least 60, as the MAC pads). On an idle point-to-point link one way takes
    tx_latency + dma(F) + wire(F) + prop + rx_latency + dma(F)
where dma(F) = F / dma_rate (the NIC's bus) and wire(F) = (F + overhead) / rate.
What the guest measures (half the median round trip of udp_pingpong, busy polling, so
that QEMU's e1000 interrupt moderation, which holds an interrupt up to 128 us, is not on
the path) is that plus the guest's own software on its 125 MIPS CPU: per direction a
sendto and a recvfrom through UDP/IP and the e1000 driver, and two copies of the
payload. Measured from the netdev's trace (a frame entering the NIC to the reply
leaving it): about 90 us (11,000 instructions) when the busy poll finds the frame, about
175 us when the NIC's interrupt comes first and its handler runs. The tolerance is
therefore [0, 200 us + 15 us per KB]. It never goes below 0 (the model cannot be
beaten). With the machine's own parameters the hardware is a few microseconds of it;
the second case slows every component (10 Mb/s, a slow bus, long latencies and cable)
until each is larger than the tolerance, so that a component the netdev or the fabric
left out, or counted twice, fails the test.
"""

import pytest
from ethernet_runs import eth_pair
from helpers import by_role
from helpers import byte_time_ns as ns
from helpers import check_model

from retrolink.model.machine import load_machine, parse_overrides

HEADERS = 14 + 20 + 8
SIZES = (64, 1472)
SLOW = ("lan.rate=1.25MB/s", "lan.prop_ns=500000", "eth.dma_rate=2MB/s",
        "eth.tx_latency_ns=500000", "eth.rx_latency_ns=500000")


def guest_software_allowance_us(n: int) -> float:
    return 200 + 15 * n / 1024


def model_one_way_us(machine, n: int) -> float:
    nic = machine.board_of_model("e1000")
    lan = machine.network_of(nic)
    frame = max(n + HEADERS, 60)
    dma = ns(frame, nic.dma_rate)
    wire = ns(frame + lan.overhead_bytes, lan.rate) + lan.prop_ns
    return (nic.tx_latency_ns + dma + wire + nic.rx_latency_ns + dma) / 1000


def parse_settings(settings):
    """As --set takes them (a number is a number, "1.25MB/s" a rate)."""
    return parse_overrides(settings)


@pytest.mark.parametrize("settings", [(), SLOW], ids=["eth-pair", "slowed"])
def test_one_way_latency_is_the_sum_of_the_components(artifacts, settings):
    machine = load_machine("eth-pair", parse_settings(settings))
    if settings:
        components_us = [machine.boards["eth"].tx_latency_ns / 1000,
                         ns(SIZES[-1] + HEADERS, machine.boards["eth"].dma_rate) / 1000,
                         machine.networks["lan"].prop_ns / 1000]
        assert min(components_us) > guest_software_allowance_us(SIZES[-1])
    sizes = ",".join(map(str, SIZES))
    r = eth_pair(by_role(n0=f"udp_pingpong ping --peer node1 --sizes {sizes} --iters 9 "
                            "--warmup 2 --busy-poll 100000",
                         n1="udp_pingpong echo --busy-poll 100000"), settings)
    assert r.returncode == 0, r.stdout + r.stderr
    check_model(r.stdout, "one_way_us", SIZES, lambda n: model_one_way_us(machine, n),
                guest_software_allowance_us)
