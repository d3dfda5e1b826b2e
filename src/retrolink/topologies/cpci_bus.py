"""A CompactPCI backplane: one shared 33 MHz, 32-bit PCI bus, one transaction at a time,
each frame one transaction (fabric/topo/cpci_bus.c; docs/fabric.md, "cpci_bus")."""
from typing import Literal

from retrolink.model.schema import param
from retrolink.topologies.base import TOPO_PARAM_MAX, NetworkBase

# PICMG 2.0 (CompactPCI): at most 8 slots on a 33 MHz backplane segment
MAX_SLOTS = 8


class CpciBusNetwork(NetworkBase):
    topology: Literal["cpci_bus"]
    rate: int = param(133_333_333, ge=1, le=TOPO_PARAM_MAX, unit="bytes/s",
                      source="derived, checked: width_bytes every cycle_ns, the bus's peak "
                             "(interconnects.md: 133 MB/s); the fabric times cycles")
    mtu: int = param(24, ge=0, le=65536, unit="bytes",
                     source="proto/cpci.h: the 16-byte header and the largest access, 8 "
                            "bytes (CPCI_MAX_ACCESS); longer frames are dropped")
    cycle_ns: int = param(30, ge=1, le=10**6, unit="ns",
                          source="interconnects.md: CompactPCI at 33 MHz (PCI 2.x: a 30 ns "
                                 "clock)")
    width_bytes: int = param(4, ge=1, le=64, unit="bytes",
                             source="interconnects.md: 32 bits, one word a data phase")
    arb_cycles: int = param(2, ge=0, le=1000, unit="cycles",
                            source="PCI 2.x: GNT# the clock after REQ#, FRAME# the clock "
                                   "after GNT#; not hidden: each store is a transaction of "
                                   "its own on an idle bus")
    addr_cycles: int = param(1, ge=0, le=1000, unit="cycles",
                             source="PCI 2.x: one address phase (32-bit addresses)")
    turnaround_cycles: int = param(1, ge=0, le=1000, unit="cycles",
                                   source="PCI 2.x: the idle clock between two "
                                          "transactions (bus turnaround)")
    header_bytes: int = param(16, ge=0, le=65536, unit="bytes",
                              source="proto/cpci.h: CPCI_WIRE_HDR_SIZE, the frame's header "
                                     "stands for the address phase and command")
    bridge_ns: int = param(240, ge=0, le=10**9, unit="ns",
                           source="our choice: the target bridge's posted-write queue and "
                                  "its forwarding onto the node's own bus, 8 clocks at 33 MHz")

    def bus_rate(self) -> int:
        """The bus's peak in bytes/s as the fabric computes it (integer division)."""
        return self.width_bytes * 10**9 // self.cycle_ns

    def check(self, stations: int) -> list[str]:
        if stations > MAX_SLOTS:
            return [f"{stations} stations: a CompactPCI backplane has {MAX_SLOTS} slots"]
        if self.rate != self.bus_rate():
            return [f"rate = {self.rate} is not width_bytes per cycle_ns ({self.bus_rate()} "
                    "bytes/s): set cycle_ns and width_bytes, and rate to match"]
        return []

    def transaction_ns(self, length: int) -> tuple[int, int]:
        """A frame of `length` bytes on an idle bus: (from grant to the end of its last data
        phase, the time it holds the bus)."""
        data = max(0, length - self.header_bytes)
        phases = max(1, -(-data // self.width_bytes))
        last = (self.arb_cycles + self.addr_cycles + phases) * self.cycle_ns
        return last, last + self.turnaround_cycles * self.cycle_ns
