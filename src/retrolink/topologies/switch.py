"""A Fibre Channel style switch with buffer-to-buffer credits (fabric/topo/switch.c)."""
from typing import ClassVar, Literal

from retrolink.model.schema import param
from retrolink.topologies.base import OverheadNetwork, TopoNs


class SwitchNetwork(OverheadNetwork):
    topology: Literal["switch"]
    BROADCAST: ClassVar[bool] = False      # the fabric drops broadcasts here
    mtu: int = param(2112, ge=1, le=65536, unit="bytes",
                     source="puma-iii.md: largest FC frame payload")
    prop_ns: TopoNs = param(0, unit="ns", source="the machine file: signal propagation per link")
    switch_delay_ns: TopoNs = param(0, unit="ns", source="the machine file: the switch's own delay")
    bb_credit: int = param(1, ge=1, le=1024, unit="frames",
                           source="our choice: one buffer-to-buffer credit, the least FC allows")
    rrdy_bytes: int = param(4, ge=0, le=64, unit="bytes",
                            source="FC-PH: R_RDY is one ordered set, 4 bytes")
