"""A token ring: FDDI's timed token or 802.5 (fabric/topo_ring.c)."""
from typing import Literal

from pydantic import Field

from ..schema import Ns, PositiveNs
from .base import OverheadNetwork


class TokenRingNetwork(OverheadNetwork):
    topology: Literal["token_ring"]
    station_delay_ns: PositiveNs
    token_bytes: int = Field(default=11, ge=1, le=4096)
    thtt_ns: Ns = 0
