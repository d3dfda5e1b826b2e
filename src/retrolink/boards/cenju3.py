"""The NEC Cenju-3 network interface, one per processing element (docs/boards/cenju3.md,
../shared/specs/cenju-3.md): the QEMU device retrolink-cenju3 on a multistage network
(`min`), with message communication, remote DMA and explicit cache control."""
from pathlib import Path
from typing import ClassVar, Literal

from retrolink.boards.base import BoardBase
from retrolink.headers import defines
from retrolink.model.schema import Rate, Strict, param

C3 = defines("regs/cenju3-regs.h", "proto/cenju3.h")


class PeBusParams(Strict):
    """The processing element as the interface's driver sees it: the VR4400's uncached
    accesses to the interface, and its CACHE instructions (docs/boards/cenju3.md)."""
    reg_access_ns: int = param(200, ge=0, le=10**9, unit="ns", qemu="reg-access-ns",
                               source="our choice: an uncached load or store across the "
                                      "VR4400's system bus to the interface, 15 CPU clocks "
                                      "at 75 MHz")
    cache_op_ns: int = param(200, ge=0, le=10**9, unit="ns", qemu="cache-op-ns",
                             source="our choice: entering a cache operation over a range "
                                    "(loop set-up and the final sync), 15 clocks at 75 MHz")
    cache_line_ns: int = param(40, ge=0, le=10**6, unit="ns", qemu="cache-line-ns",
                               source="our choice: one CACHE instruction per 32-byte line, "
                                      "3 clocks at 75 MHz")


class InterfaceParams(Strict):
    """The network interface itself: its DMA and its fixed costs (cenju-3.md gives none:
    each is our documented choice)."""
    dma_rate: Rate = param(100_000_000, unit="bytes/s", qemu="dma-rate",
                           source="our choice: the interface's DMA from and to PE memory, "
                                  "faster than the 40 MB/s link so that the network bounds "
                                  "a long transfer")
    req_setup_ns: int = param(1000, ge=0, le=10**9, unit="ns", qemu="req-setup-ns",
                              source="our choice: taking a queued request (reading its "
                                     "32-byte descriptor by DMA and checking it)")
    packet_setup_ns: int = param(400, ge=0, le=10**9, unit="ns", qemu="packet-setup-ns",
                                 source="our choice: building or checking a packet's routing "
                                        "tag and header words, each way")
    # until the interface is on the network it cannot send, so the nodes boot in lock-step
    # with grants this long (the driver enables it)
    start_us: int = param(10000, ge=0, le=60_000_000, unit="us", qemu="start-us",
                          source="our choice: the interface's start until it is on the "
                                 "network, of the order of 10 ms")


class Cenju3Board(BoardBase):
    model: Literal["cenju3"]
    # the largest packet the interface puts on the network: 508 bytes behind its header
    MAX_FRAME_BYTES: ClassVar[int] = C3["C3_WIRE_HDR_SIZE"] + C3["C3_PACKET_MAX"]
    MAX_FRAME_WHAT: ClassVar[str] = "a 508-byte packet and its 24-byte header"
    # the NIC driver, then NORMA IPC/DE over it (guest/kernel/cenju3/, guest/kernel/norma/)
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ("cenju3", "norma")
    PROTOCOL: ClassVar[str] = "cenju3"
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ("min",)
    TOPOLOGIES_WHY: ClassVar[str] = ("the interface to the Cenju-3's multistage network of "
                                     "crossbar switches (cenju-3.md), for which it builds its "
                                     "packets' routing tags; docs/boards/cenju3.md")
    pe: PeBusParams = PeBusParams()
    interface: InterfaceParams = InterfaceParams()

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        return self.device_args("retrolink-cenju3", station, fabric_socket, network_index)


MODELS = {"cenju3": Cenju3Board}
BENCH = "cenju3"
