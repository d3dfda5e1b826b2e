"""Full-duplex switched Ethernet, store and forward (fabric/topo/ethernet_switch.c)."""
from typing import Literal

from retrolink.model.schema import param
from retrolink.topologies.ethernet import TOPO_PARAM_MAX, EthernetNetwork


class EthernetSwitchNetwork(EthernetNetwork):
    topology: Literal["ethernet_switch"]
    prop_ns: int = param(500, ge=0, le=TOPO_PARAM_MAX, unit="ns",
                         source="our choice: 100 m of cable at 5 ns/m")
    switch_delay_ns: int = param(5000, ge=0, le=TOPO_PARAM_MAX, unit="ns",
                                 source="our choice: a few microseconds to look the address "
                                        "up and forward, once the frame is stored")
    queue_frames: int = param(64, ge=1, le=4096, unit="frames",
                              source="our choice: per output port")
