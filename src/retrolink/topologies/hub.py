"""Half-duplex Ethernet through a repeater hub, CSMA/CD (fabric/topo_hub.c)."""
from typing import Literal

from pydantic import Field

from .ethernet import TOPO_PARAM_MAX, EthernetNetwork


class HubNetwork(EthernetNetwork):
    topology: Literal["hub"]
    # two 100 m segments at 5 ns/m and 500 ns in the repeater
    prop_ns: int = Field(default=1500, ge=1, le=TOPO_PARAM_MAX)
    slot_bits: int = Field(default=512, ge=0, le=TOPO_PARAM_MAX)       # 802.3 slotTime
    jam_bits: int = Field(default=32, ge=0, le=TOPO_PARAM_MAX)         # 802.3 jamSize
    attempt_limit: int = Field(default=16, ge=1, le=TOPO_PARAM_MAX)    # 802.3 attemptLimit
    backoff_limit: int = Field(default=10, ge=0, le=16)                # 802.3 backoffLimit
    seed: int = Field(default=0, ge=0, le=TOPO_PARAM_MAX)              # the backoff generators'
    queue_frames: int = Field(default=256, ge=1, le=TOPO_PARAM_MAX)    # per station

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
