"""What every network has, whatever its topology (docs/fabric.md)."""
from typing import Annotated, ClassVar

from pydantic import Field

from retrolink.model.schema import FrameBytes, Name, Ns, PositiveNs, Rate, Strict, param

# the fabric's bound on every topology parameter and every time derived from them
# (TOPO_PARAM_MAX in fabric/core/link_stats.h): sums of a few never wrap 64 bits
TOPO_PARAM_MAX = 10**12
# a topology's time in ns: within the fabric's bound (below schema.Ns's hour)
TopoNs = Annotated[int, Field(ge=0, le=TOPO_PARAM_MAX)]
PositiveTopoNs = Annotated[int, Field(ge=1, le=TOPO_PARAM_MAX)]


class Synthetic(Strict):
    """A traffic generator inside the fabric (no VM): a station of its network."""
    name: Name
    dst: int = Field(ge=0, description="a VM node with a board on this network")
    size: FrameBytes
    interval_ns: PositiveNs
    start_ns: Ns = 0
    count: int = Field(ge=1, le=10**9)


class NetworkBase(Strict):
    rate: Rate = param(unit="bytes/s", source="the machine file: the link's data rate")
    mtu: int = param(4500, ge=1, le=65536, unit="bytes",
                     source="our choice: FDDI's largest frame (4500 bytes); larger frames are dropped")
    synthetic: list[Synthetic] = []

    # it delivers a frame for RL_NODE_BROADCAST to every other station (fabric/topo/*.c,
    # struct topology_ops.broadcast)
    BROADCAST: ClassVar[bool] = True

    def fabric_params(self) -> dict:
        """The topology's keys in the fabric's configuration (all but the kind itself and
        the synthetic stations, which have lines of their own)."""
        return {k: v for k, v in self.model_dump().items()
                if k not in ("topology", "synthetic")}

    def check(self, stations: int) -> list[str]:
        """What this topology cannot do with that many stations (empty: nothing)."""
        return []


class OverheadNetwork(NetworkBase):
    """A network whose framing is a fixed number of bytes per frame on the wire (the
    Ethernet topologies spell theirs out instead: ethernet.py)."""
    overhead_bytes: int = param(0, ge=0, le=4096, unit="bytes",
                                source="the machine file: framing sent with every frame")
    min_frame_bytes: int = param(0, ge=0, le=65536, unit="bytes",
                                 source="the machine file: the protocol's least frame, "
                                        "overhead_bytes not counted (a header every frame "
                                        "carries; Ethernet's 60 bytes without its FCS); a "
                                        "shorter frame is padded on the wire")

    def check(self, stations: int) -> list[str]:
        if self.min_frame_bytes > self.mtu:
            return [f"min_frame_bytes = {self.min_frame_bytes} is larger than mtu = "
                    f"{self.mtu}: a frame cannot be padded past the largest frame"]
        return []
