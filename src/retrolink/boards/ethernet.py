"""QEMU's own Ethernet NICs with their stock Linux drivers, each joined to a fabric network by
the retrolink netdev (qemu/net/retrolink-net.c; docs/boards/ethernet.md).

The NIC models registers, rings and interrupts; the netdev adds what it costs in time: a
fixed latency per frame each way and the DMA of the frame across the NIC's bus. The
guests get IPv4 addresses and names on the network (addresses below; node_command.py
passes them in, the init script applies them).
"""
from pathlib import Path
from typing import ClassVar, Literal, NamedTuple

from retrolink.boards.base import BoardBase
from retrolink.model.schema import Ns, Rate, param

# model: (QEMU device, the Debian driver module that binds it)
class Nic(NamedTuple):
    device: str         # QEMU's -device
    driver: str         # the Linux module
    shows_link: bool    # QEMU's model tells the driver its link state (link_status_changed)
    # the fastest Ethernet the chip runs, in bytes/s (0: not checked); QEMU's models
    # send at any speed, the fabric's network gives it, so a faster one is refused
    line_rate: int = 0


NICS = {
    "e1000": Nic("e1000", "e1000", True),      # Intel 82540EM, PCI
    # Intel 82557 B-step, PCI: the e100 driver loads microcode only for 82559 and later
    # (e100_request_firmware), so this one binds without firmware, and without warnings.
    # It DMAs each frame from the driver's buffer. Its PHY's status (MII register 1)
    # shows the link, which the driver polls every 2 s (qemu/patches/0009)
    "e100": Nic("i82557b", "e100", True),
    "tulip": Nic("tulip", "tulip", False),     # DEC 21143, PCI
    # AMD Am79C970A PCnet-PCI II, 10 Mb/s only: the PCI sibling of the Lance (Am7990), the
    # on-board Ethernet of a SPARCstation 2. QEMU's model shows its link in BCR4, which
    # the driver reads when the interface comes up and every 2 s after
    "pcnet": Nic("pcnet", "pcnet32", True, 10_000_000 // 8),
    # RealTek 8139, PCI, 10/100: sends from four fixed transmit buffers, into which the
    # 8139too driver copies every frame; QEMU's model shows its link in its PHY's status
    # (link_status_changed). Revision 0x10: 8139too refuses the 8139C+ (0x20, QEMU's
    # default) for 8139cp, which drives the C+ descriptor rings (qemu/patches/0010)
    "rtl8139": Nic("rtl8139,revision=16", "8139too", True),
}

# retrolink's MAC scheme: 52:54:00 is QEMU's OUI, then 0x52 ('R'), the network, the station
MAC_PREFIX = "52:54:00:52"
# IPv4: the benchmarking range 198.18.0.0/15 (RFC 2544), one /24 per network
IP_PREFIX_LEN = 24


def mac_address(network_index: int, station: int) -> str:
    return f"{MAC_PREFIX}:{network_index:02x}:{station:02x}"


def ip_address(network_index: int, node: int) -> str:
    return f"198.18.{network_index}.{node + 1}"


class EthernetBoard(BoardBase):
    model: Literal["e1000", "e100", "tulip", "pcnet", "rtl8139"]
    # The NIC's fixed cost per frame besides moving its bytes. Sending: the descriptor
    # fetch, a PCI read of 16 bytes (bus arbitration, at most 16 clocks of target initial
    # latency by PCI 2.2, 4 data phases: about 25 clocks, 0.75 us at 33 MHz) and the MAC's
    # FIFO; receiving: the descriptor write-back and status. The same for the three NICs.
    tx_latency_ns: Ns = param(1000, unit="ns", qemu="tx-latency-ns",
                              source="our choice: descriptor fetch over PCI (~25 clocks at "
                                     "33 MHz) and the MAC's FIFO")
    rx_latency_ns: Ns = param(1000, unit="ns", qemu="rx-latency-ns",
                              source="our choice: descriptor write-back and status")
    dma_rate: Rate = param(133_000_000, unit="bytes/s", qemu="dma-rate",
                           source="PCI 2.2: 32-bit bus master at 33 MHz, 4 B x 33.3 MHz, "
                                  "shared by both directions")
    # Until then the NIC cannot send, so the nodes boot with long grants (docs/boards/
    # ethernet.md, "The link"); a NIC that cannot show it to its driver is waited for.
    link_up_ns: Ns = param(1_000_000_000, unit="ns", qemu="link-up-ns",
                           source="our choice: auto-negotiation, the order of IEEE 802.3's "
                                  "link_fail_inhibit_timer (750-1000 ms); 0: up at power on")

    IP_NETWORKING: ClassVar[bool] = True
    PROTOCOL: ClassVar[str] = "ethernet"
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ("hub", "ethernet_switch", "p2p")
    TOPOLOGIES_WHY: ClassVar[str] = ("an IEEE 802.3 station: a CSMA/CD hub, a switch, or a "
                                     "full-duplex link; docs/boards/ethernet.md")
    NEEDS_BROADCAST: ClassVar[str] = "ARP and every Ethernet broadcast and multicast"
    # the largest frame the guest sends at its default MTU: 1500 bytes of IP behind the
    # 14-byte Ethernet header (the fabric carries frames without their FCS)
    MAX_FRAME_BYTES: ClassVar[int] = 1500 + 14
    MAX_FRAME_WHAT: ClassVar[str] = "an IP MTU of 1500 and the Ethernet header"

    def guest_modules(self) -> tuple[str, ...]:
        return (NICS[self.model].driver,)

    def check(self, network) -> list[str]:
        problems = super().check(network)
        line_rate = NICS[self.model].line_rate
        if line_rate and network.rate > line_rate:
            problems.append(f"rate = {network.rate} bytes/s: the {self.model} board's chip "
                            f"runs Ethernet at {line_rate * 8 // 10**6} Mb/s at most; lower "
                            f"the network's rate to \"{line_rate * 8 // 10**6}Mb/s\" or less")
        return problems

    def link_wait_s(self) -> float:
        """How long the guest waits after bringing the interface up: 0 for a NIC that shows
        its link (the init script waits for its carrier); otherwise link-up-ns, which is
        at least what is left of it (the driver started the NIC before)."""
        return 0.0 if NICS[self.model].shows_link else self.link_up_ns / 1e9

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        netdev = f"rlnet{network_index}"
        props = {"fabric": str(fabric_socket), "node": station, "network": network_index,
                 **self.qemu_props()}
        # romfile= : no option ROM (no network boot; SeaBIOS skips it)
        return ["-netdev", f"retrolink,id={netdev}," + ",".join(f"{k}={v}" for k, v in props.items()),
                "-device", f"{NICS[self.model].device},netdev={netdev},"
                           f"mac={mac_address(network_index, station)},romfile="]


MODELS = {nic: EthernetBoard for nic in NICS}
BENCH = "net"
