"""Topologies: how a network's frames travel (docs/fabric.md). Each is one module here
with its parameter table; this registry is the one place that lists them, and must name
the same kinds as the fabric's (fabric/topology.c; a test compares them)."""
from typing import Annotated, Union

from pydantic import Field

from .base import NetworkBase, Synthetic
from .ethernet_switch import EthernetSwitchNetwork
from .hub import HubNetwork
from .min import MinNetwork
from .p2p import P2PNetwork
from .switch import SwitchNetwork
from .token_ring import TokenRingNetwork

TOPOLOGIES: dict[str, type[NetworkBase]] = {
    "p2p": P2PNetwork, "token_ring": TokenRingNetwork, "switch": SwitchNetwork,
    "min": MinNetwork,
    "hub": HubNetwork,
    "ethernet_switch": EthernetSwitchNetwork,
}

Network = Annotated[Union[tuple(TOPOLOGIES.values())], Field(discriminator="topology")]
