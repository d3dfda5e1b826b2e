"""A multistage network of k x k switches, Omega wiring (fabric/topo/min.c)."""
from typing import ClassVar, Literal

from retrolink.model.schema import param
from retrolink.topologies.base import OverheadNetwork, TopoNs


class MinNetwork(OverheadNetwork):
    topology: Literal["min"]
    BROADCAST: ClassVar[bool] = False      # the fabric drops broadcasts here
    # the frame the fabric sees is the interface's 24-byte header and the packet's data
    mtu: int = param(532, ge=1, le=65536, unit="bytes",
                     source="cenju-3.md: largest packet, 508 bytes of data, behind the "
                            "24-byte header of proto/cenju3.h")
    k: int = param(4, ge=2, le=16, unit="ports", source="cenju-3.md: 4x4 crossbar switches")
    stages: int = param(4, ge=1, le=8, unit="stages", source="cenju-3.md: 4 stages, 4^4 = 256 ports")
    stage_delay_ns: TopoNs = param(unit="ns", source="the machine file (cenju-3.md: 250 ns)")
    prop_ns: TopoNs = param(0, unit="ns", source="our choice: cables folded into stage_delay_ns")

    def check(self, stations: int) -> list[str]:
        problems = super().check(stations)
        if self.k ** self.stages < stations:
            problems.append(f"{self.k}x{self.k} switches in {self.stages} stages give "
                            f"{self.k ** self.stages} ports, this network has {stations} "
                            "stations; raise stages or k")
        return problems
