"""The VIA NIC, a Giganet cLAN-like Virtual Interface Architecture adapter on the PCI bus
of a Pentium III PC (docs/boards/via.md, interconnects.md): the QEMU device retrolink-via
on cLAN's switch (the fabric's credit-based `switch`)."""
from pathlib import Path
from typing import ClassVar, Literal

from retrolink.boards.base import BoardBase
from retrolink.boards.ethernet import mac_address
from retrolink.headers import defines
from retrolink.model.schema import Rate, Strict, param

VIA = defines("regs/via-regs.h", "proto/via.h")


class PciParams(Strict):
    """The PC's 32-bit 33 MHz PCI bus as the NIC and the CPU see it."""
    pio_write_ns: int = param(150, ge=0, le=10**9, unit="ns", qemu="pio-write-ns",
                              source="our choice: a posted 32- or 64-bit write, 5 PCI clocks "
                                     "at 33 MHz (address, data, turnaround, the host bridge's "
                                     "posting)")
    pio_read_ns: int = param(600, ge=0, le=10**9, unit="ns", qemu="pio-read-ns",
                             source="our choice: a non-posted read through the host bridge, "
                                    "20 PCI clocks (request, target, data back to the CPU)")
    dma_rate: Rate = param(133_000_000, unit="bytes/s", qemu="dma-rate",
                           source="interconnects.md: PCI at 33 MHz, 32 bits, 133 MB/s")
    dma_setup_ns: int = param(500, ge=0, le=10**9, unit="ns", qemu="dma-setup-ns",
                              source="our choice: one DMA burst's arbitration and the host "
                                     "bridge's latency to memory, about 16 PCI clocks")


class NicParams(Strict):
    """The NIC's own engine: what it spends on a descriptor and on a frame."""
    desc_ns: int = param(1000, ge=0, le=10**9, unit="ns", qemu="desc-ns",
                         source="our choice: checking a descriptor (segments, handles, tags "
                                "against the TPT) in the NIC's ASIC, about 33 of its 33 MHz "
                                "clocks")
    frame_ns: int = param(200, ge=0, le=10**9, unit="ns", qemu="frame-ns",
                          source="our choice: building or checking a frame's header, about "
                                 "7 clocks at 33 MHz, each way")
    start_us: int = param(1000, ge=0, le=60_000_000, unit="us", qemu="start-us",
                          source="our choice: link training and the switch's port setup "
                                 "after the agent enables the NIC, about 1 ms")


class ViaBoard(BoardBase):
    model: Literal["via"]
    MAX_FRAME_BYTES: ClassVar[int] = VIA["VIA_WIRE_HDR_SIZE"] + VIA["VIA_FRAME_PAYLOAD"]
    MAX_FRAME_WHAT: ClassVar[str] = "a 2048-byte piece of a message and the 32-byte header"
    # the kernel agent, then the LAN emulation's netdev over it
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ("via",)
    PROTOCOL: ClassVar[str] = "via"
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ("switch",)
    TOPOLOGIES_WHY: ClassVar[str] = ("a cLAN NIC on cLAN's switch, whose links have "
                                     "credit-based flow control (interconnects.md); "
                                     "docs/boards/via.md")
    # the LAN emulation: the guest gets an interface on this network
    IP_NETWORKING: ClassVar[bool] = True
    pci: PciParams = PciParams()
    nic: NicParams = NicParams()

    def link_wait_s(self) -> float:
        """The agent shows the NIC's link as the interface's carrier."""
        return 0.0

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        return self.device_args("retrolink-via", station, fabric_socket, network_index,
                                mac=mac_address(network_index, station))


MODELS = {"via": ViaBoard}
BENCH = "via"
