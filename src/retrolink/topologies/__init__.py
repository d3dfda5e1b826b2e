"""Topologies: how a network's frames travel (docs/fabric.md). Each is one module here
with its parameter table; this registry is the one place that lists them, and must name
the same kinds as the fabric's (fabric/topo/registry.c; a test compares them)."""
from typing import Annotated, Union

from pydantic import Field

from retrolink.topologies.base import NetworkBase, Synthetic
from retrolink.topologies.cpci_bus import CpciBusNetwork
from retrolink.topologies.ethernet_switch import EthernetSwitchNetwork
from retrolink.topologies.hub import HubNetwork
from retrolink.topologies.min import MinNetwork
from retrolink.topologies.p2p import P2PNetwork
from retrolink.topologies.switch import SwitchNetwork
from retrolink.topologies.token_ring import TokenRingNetwork

TOPOLOGIES: dict[str, type[NetworkBase]] = {
    "p2p": P2PNetwork, "token_ring": TokenRingNetwork, "switch": SwitchNetwork,
    "min": MinNetwork,
    "hub": HubNetwork,
    "ethernet_switch": EthernetSwitchNetwork,
    "cpci_bus": CpciBusNetwork,
}

Network = Annotated[Union[tuple(TOPOLOGIES.values())], Field(discriminator="topology")]
