"""A multistage network of k x k switches, Omega wiring (fabric/topo_min.c)."""
from typing import Literal

from pydantic import Field

from ..schema import Ns
from .base import OverheadNetwork


class MinNetwork(OverheadNetwork):
    topology: Literal["min"]
    mtu: int = Field(default=508, ge=1, le=65536)      # Cenju-3's largest packet
    k: int = Field(default=4, ge=2, le=16)
    stages: int = Field(default=4, ge=1, le=8)
    stage_delay_ns: Ns
    prop_ns: Ns = 0

    def check(self, stations: int) -> list[str]:
        if self.k ** self.stages < stations:
            return [f"{self.k}x{self.k} switches in {self.stages} stages give "
                    f"{self.k ** self.stages} ports, this network has {stations} stations; "
                    "raise stages or k"]
        return []
