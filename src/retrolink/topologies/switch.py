"""A Fibre Channel style switch with buffer-to-buffer credits (fabric/topo_switch.c)."""
from typing import Literal

from pydantic import Field

from ..schema import Ns
from .base import OverheadNetwork


class SwitchNetwork(OverheadNetwork):
    topology: Literal["switch"]
    mtu: int = Field(default=2112, ge=1, le=65536)     # FC's largest frame payload
    prop_ns: Ns = 0
    switch_delay_ns: Ns = 0
    bb_credit: int = Field(default=1, ge=1, le=1024)
    rrdy_bytes: int = Field(default=4, ge=0, le=64)     # R_RDY is one ordered set
