"""An independent model of the CompactPCI bridge's timing (docs/boards/cpci.md, "Timing"),
from its parameters as src/retrolink/boards/cpci.py declares them (not from the device's
code): the node's PCI bus as the CPU's accesses see it, the same bus as the bridge masters
it for peers' transactions, each a server taking one transaction at a time in order; the
bridge's posted-write buffer and the backplane that frees it ("Back-pressure")."""
from dataclasses import dataclass, field

from retrolink.boards.cpci import BridgeParams, PciParams
from retrolink.topologies.cpci_bus import CpciBusNetwork


def defaults() -> dict:
    pci, bridge = PciParams(), BridgeParams()
    return dict(cycle=pci.cycle_ns, width=pci.width_bytes, arb=pci.arb_cycles,
                addr=pci.addr_cycles, turn=pci.turnaround_cycles, bridge=bridge.bridge_ns,
                mem_read=bridge.mem_read_ns, pw=bridge.posted_write_bytes)


def props(p: dict) -> str:
    return (f"pci-cycle-ns={p['cycle']},pci-width-bytes={p['width']},"
            f"pci-arb-cycles={p['arb']},pci-addr-cycles={p['addr']},"
            f"pci-turnaround-cycles={p['turn']},bridge-ns={p['bridge']},"
            f"mem-read-ns={p['mem_read']},posted-write-bytes={p['pw']}")


@dataclass
class Backplane:
    """The cpci_bus as docs/fabric.md describes it, its parameters the topology's
    defaults: transactions granted in the order they are offered (the caller offers them
    by ready time, then station), one at a time."""
    net: CpciBusNetwork = field(default_factory=lambda: CpciBusNetwork(topology="cpci_bus"))
    free: int = 0

    def carry(self, ready: int, data_bytes: int) -> tuple[int, int]:
        """A transaction of data_bytes ready at `ready`: (its arrival at the target, the
        notice that frees its sender's buffer entries)."""
        last, held = self.net.transaction_ns(self.net.header_bytes + data_bytes)
        start = max(ready, self.free)
        self.free = start + held
        lookahead = self.net.transaction_ns(self.net.header_bytes)[0] + self.net.bridge_ns
        return start + last + self.net.bridge_ns, max(start + last, ready + lookahead)


@dataclass
class Bridge:
    p: dict
    cpu_free: int = 0       # the node's PCI, the CPU's accesses
    target_free: int = 0    # the node's PCI, the bridge as master for peers
    # the posted-write buffer: (the notice that frees it, bytes) per frame, oldest first
    posted: list = field(default_factory=list)
    retries: int = 0        # stores that found it full

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

    def posted_store(self, now: int, nbytes: int, bus: Backplane) -> tuple[int, int]:
        """A store on a backplane whose notices free the buffer: a full buffer retries
        the store until the oldest entries are free. (ready time, arrival at the peer)."""
        go = max(now, self.cpu_free)
        entry = self.phases(nbytes) * self.p["width"]
        self.posted = [(c, b) for c, b in self.posted if c > go]
        start = go
        while sum(b for _, b in self.posted) + entry > self.p["pw"]:
            start = max(start, self.posted.pop(0)[0])
        self.retries += start > go
        self.cpu_free = start + self.transaction(nbytes)
        ready = self.cpu_free + self.p["bridge"]
        arrival, notice = bus.carry(ready, nbytes)
        self.posted.append((notice, entry))
        return ready, arrival

    def held(self, at: int) -> int:
        """Buffer bytes still taken at `at`."""
        return sum(b for c, b in self.posted if c > at)

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
