"""An independent model of the CompactPCI bridge's timing (docs/boards/cpci.md, "Timing"),
from its parameters as src/retrolink/boards/cpci.py declares them (not from the device's
code): the node's PCI bus as the CPU's accesses see it, the same bus as the bridge masters
it for peers' transactions, each a server taking one transaction at a time in order."""
from dataclasses import dataclass

from retrolink.boards.cpci import BridgeParams, PciParams


def defaults() -> dict:
    pci, bridge = PciParams(), BridgeParams()
    return dict(cycle=pci.cycle_ns, width=pci.width_bytes, arb=pci.arb_cycles,
                addr=pci.addr_cycles, turn=pci.turnaround_cycles, bridge=bridge.bridge_ns,
                mem_read=bridge.mem_read_ns)


def props(p: dict) -> str:
    return (f"pci-cycle-ns={p['cycle']},pci-width-bytes={p['width']},"
            f"pci-arb-cycles={p['arb']},pci-addr-cycles={p['addr']},"
            f"pci-turnaround-cycles={p['turn']},bridge-ns={p['bridge']},"
            f"mem-read-ns={p['mem_read']}")


@dataclass
class Bridge:
    p: dict
    cpu_free: int = 0       # the node's PCI, the CPU's accesses
    target_free: int = 0    # the node's PCI, the bridge as master for peers

    def phases(self, nbytes: int) -> int:
        return max(1, -(-nbytes // self.p["width"]))

    def to_last_data(self, nbytes: int) -> int:
        return (self.p["arb"] + self.p["addr"] + self.phases(nbytes)) * self.p["cycle"]

    def transaction(self, nbytes: int) -> int:
        return self.to_last_data(nbytes) + self.p["turn"] * self.p["cycle"]

    def access(self, now: int, nbytes: int) -> int:
        """A CPU access of nbytes to the board at now: when the vCPU is released."""
        self.cpu_free = max(now, self.cpu_free) + self.transaction(nbytes)
        return self.cpu_free

    def store(self, now: int, nbytes: int) -> int:
        """A store into a window (or DB_RING): its frame's ready time on the backplane."""
        return self.access(now, nbytes) + self.p["bridge"]

    def land(self, arrival: int, nbytes: int) -> int:
        """A peer's write (nbytes; a doorbell: 0) arriving: when it reaches memory."""
        start = max(arrival, self.target_free)
        self.target_free = start + self.transaction(nbytes)
        return start + self.to_last_data(nbytes)

    def serve(self, arrival: int, nbytes: int) -> int:
        """A peer's load arriving: its completion's ready time on the backplane."""
        start = max(arrival, self.target_free)
        self.target_free = start + self.transaction(nbytes) + self.p["mem_read"]
        return self.target_free + self.p["bridge"]
