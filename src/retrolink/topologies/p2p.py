"""A full-duplex point-to-point link (fabric/topo/p2p.c)."""
from typing import Literal

from retrolink.model.schema import param
from retrolink.topologies.base import OverheadNetwork, TopoNs


class P2PNetwork(OverheadNetwork):
    topology: Literal["p2p"]
    prop_ns: TopoNs = param(0, unit="ns", source="the machine file: signal propagation")

    def check(self, stations: int) -> list[str]:
        problems = super().check(stations)
        if stations != 2:
            problems.append(f"topology = \"p2p\" joins exactly 2 stations, this network has "
                            f"{stations}")
        return problems
