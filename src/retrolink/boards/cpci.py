"""The CompactPCI backplane board of the interconnect study (docs/boards/cpci.md,
interconnects.md): a non-transparent bridge (Intel 21554 style) between each Pentium III
PC's PCI bus and the backplane they share, the QEMU device retrolink-cpci on the fabric's
`cpci_bus`. CPU stores into a window onto a peer's exported memory are backplane
transactions, one each; doorbells interrupt a peer."""
from pathlib import Path
from typing import ClassVar, Literal

from retrolink.boards.base import BoardBase
from retrolink.boards.ethernet import mac_address
from retrolink.headers import defines
from retrolink.model.schema import Strict, param

CPCI = defines("regs/cpci-regs.h", "proto/cpci.h")


class PciParams(Strict):
    """The node's own 32-bit 33 MHz PCI bus, between the CPU (its host bridge) and the
    board: every access of the CPU to the board, and every transaction of the board into
    the node's memory, is one PCI transaction on it."""
    cycle_ns: int = param(30, ge=1, le=10**6, unit="ns", qemu="pci-cycle-ns",
                          source="interconnects.md: PCI at 33 MHz (PCI 2.x: a 30 ns clock)")
    width_bytes: int = param(4, ge=1, le=64, unit="bytes", qemu="pci-width-bytes",
                             source="interconnects.md: 32 bits, one word a data phase")
    arb_cycles: int = param(2, ge=0, le=1000, unit="cycles", qemu="pci-arb-cycles",
                            source="PCI 2.x: GNT# the clock after REQ#, FRAME# the clock "
                                   "after GNT# (each store a transaction of its own)")
    addr_cycles: int = param(1, ge=0, le=1000, unit="cycles", qemu="pci-addr-cycles",
                             source="PCI 2.x: one address phase (32-bit addresses)")
    turnaround_cycles: int = param(1, ge=0, le=1000, unit="cycles",
                                   qemu="pci-turnaround-cycles",
                                   source="PCI 2.x: the idle clock between two transactions")


class BridgeParams(Strict):
    """The bridge itself and what it reaches behind the node's PCI."""
    bridge_ns: int = param(240, ge=0, le=10**9, unit="ns", qemu="bridge-ns",
                           source="our choice: a transaction through the bridge's posted-"
                                  "write queue to the backplane, 8 clocks at 33 MHz")
    mem_read_ns: int = param(150, ge=0, le=10**9, unit="ns", qemu="mem-read-ns",
                             source="our choice: the host bridge's SDRAM read for a PCI "
                                    "master, 5 clocks of wait states at 33 MHz")
    posted_write_bytes: int = param(
        256, ge=CPCI["CPCI_PW_MIN_BYTES"], le=CPCI["CPCI_PW_MAX_BYTES"], unit="bytes",
        qemu="posted-write-bytes",
        source="our choice, from Intel's 21554 data sheet: 256 bytes of posted-write "
               "buffer in each direction; a data phase takes an entry of the bus's width "
               "(a 4-byte store 4 bytes, so 64 stores) until the backplane has carried it")
    start_us: int = param(0, ge=0, le=60_000_000, unit="us", qemu="start-us",
                          source="our choice: a bridge is on the backplane at power-on "
                                 "(no link to train)")


class CpciBoard(BoardBase):
    model: Literal["cpci"]
    MAX_FRAME_BYTES: ClassVar[int] = CPCI["CPCI_WIRE_HDR_SIZE"] + CPCI["CPCI_MAX_ACCESS"]
    MAX_FRAME_WHAT: ClassVar[str] = "an 8-byte access and the 16-byte header"
    # the driver (guest/kernel/cpci/): /dev/cpci0 and the netdev bp0
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ("cpci",)
    PROTOCOL: ClassVar[str] = "cpci"
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ("cpci_bus",)
    TOPOLOGIES_WHY: ClassVar[str] = ("bridges on one shared CompactPCI backplane "
                                     "(interconnects.md); docs/boards/cpci.md")
    # the driver's netdev gives the guest an interface on this network
    IP_NETWORKING: ClassVar[bool] = True
    pci: PciParams = PciParams()
    bridge: BridgeParams = BridgeParams()

    def check(self, network) -> list[str]:
        problems = super().check(network)
        pw, width = self.bridge.posted_write_bytes, self.pci.width_bytes
        access = -(-CPCI["CPCI_MAX_ACCESS"] // width) * width
        if pw // width > CPCI["CPCI_PW_MAX_ENTRIES"]:
            problems.append(f"bridge.posted_write_bytes = {pw}: {pw // width} entries of "
                            f"pci.width_bytes, the bridge holds at most "
                            f"{CPCI['CPCI_PW_MAX_ENTRIES']} (proto/cpci.h); lower it")
        if pw < access:
            problems.append(f"bridge.posted_write_bytes = {pw}: an 8-byte store takes {access} "
                            "bytes of it (entries of pci.width_bytes); raise it")
        return problems

    def link_wait_s(self) -> float:
        """The backplane is up when the cluster starts: no link to wait for."""
        return 0.0

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        return self.device_args("retrolink-cpci", station, fabric_socket, network_index,
                                mac=mac_address(network_index, station))


MODELS = {"cpci": CpciBoard}
# the interconnect study: the backplane beside the hub and cLAN (docs/interconnects.md)
BENCH = "interconnects"
