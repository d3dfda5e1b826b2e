"""Full-duplex switched Ethernet, store and forward (fabric/topo_eth_switch.c)."""
from typing import Literal

from pydantic import Field

from .ethernet import TOPO_PARAM_MAX, EthernetNetwork


class EthernetSwitchNetwork(EthernetNetwork):
    topology: Literal["ethernet_switch"]
    prop_ns: int = Field(default=500, ge=0, le=TOPO_PARAM_MAX)       # 100 m at 5 ns/m
    # a few microseconds to look the address up and forward, once the frame is stored
    switch_delay_ns: int = Field(default=5000, ge=0, le=TOPO_PARAM_MAX)
    queue_frames: int = Field(default=64, ge=1, le=4096)              # per output port
