"""A token ring: FDDI's timed token or 802.5 (fabric/topo/ring.c)."""
from typing import Literal

from retrolink.model.schema import param
from retrolink.topologies.base import OverheadNetwork, PositiveTopoNs, TopoNs


class TokenRingNetwork(OverheadNetwork):
    topology: Literal["token_ring"]
    station_delay_ns: PositiveTopoNs = param(unit="ns", source="the machine file: the delay "
                                         "each station adds to a frame passing it")
    token_bytes: int = param(11, ge=1, le=4096, unit="bytes",
                             source="FDDI: preamble, SD, FC, ED of the token (sure-sx.md)")
    thtt_ns: TopoNs = param(0, unit="ns", source="our choice: 0 sends one frame per token visit")
