"""Half-duplex Ethernet through a repeater hub, CSMA/CD (fabric/topo/hub.c)."""
from typing import Literal

from retrolink.model.schema import param
from retrolink.topologies.ethernet import TOPO_PARAM_MAX, EthernetNetwork


class HubNetwork(EthernetNetwork):
    topology: Literal["hub"]
    prop_ns: int = param(1500, ge=1, le=TOPO_PARAM_MAX, unit="ns",
                         source="our choice: two 100 m segments at 5 ns/m and 500 ns in "
                                "the repeater")
    slot_bits: int = param(512, ge=0, le=TOPO_PARAM_MAX, unit="bit times",
                           source="IEEE 802.3: slotTime")
    jam_bits: int = param(32, ge=0, le=TOPO_PARAM_MAX, unit="bits", source="IEEE 802.3: jamSize")
    attempt_limit: int = param(16, ge=1, le=TOPO_PARAM_MAX, unit="attempts",
                               source="IEEE 802.3: attemptLimit")
    backoff_limit: int = param(10, ge=0, le=16, unit="doublings",
                               source="IEEE 802.3: backoffLimit")
    seed: int = param(0, ge=0, le=TOPO_PARAM_MAX, unit="-",
                      source="our choice: seeds the stations' backoff generators")
    queue_frames: int = param(256, ge=1, le=TOPO_PARAM_MAX, unit="frames",
                              source="our choice: a NIC's transmit ring and more, per station; a "
                                     "station that waits for the hub's notices (the "
                                     "netdev) holds one here (docs/fabric.md, hub)")

    def derived_bits(self) -> dict[str, int]:
        return {**super().derived_bits(), "the slot time": self.slot_bits,
                "the jam": self.jam_bits, "the preamble": 8 * self.preamble_bytes}

    def check(self, stations: int) -> list[str]:
        problems = super().check(stations)
        if not problems and 2 * self.prop_ns > self.wire_ns(0):
            problems.append(f"a round trip (2 * prop_ns = {2 * self.prop_ns} ns) is longer "
                            f"than the shortest frame on the wire ({self.wire_ns(0)} ns): a "
                            "collision could go unnoticed; lower prop_ns or the rate")
        return problems
