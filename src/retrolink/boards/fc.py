"""The PUMA-III Fibre Channel adapter on the SBus of a SPARCstation (docs/boards/fc.md,
puma-iii.md): the QEMU device retrolink-fc (a PCI card, on PCs) or retrolink-fc-sbus (the
SBus card, on SPARCstation 5 nodes) on an FC network (`switch` or `p2p`)."""
from pathlib import Path
from typing import ClassVar, Literal

from retrolink.boards.base import BoardBase
from retrolink.boards.ethernet import mac_address
from retrolink.headers import defines
from retrolink.model.schema import Rate, Strict, param

FC = defines("regs/fc-regs.h", "proto/fc.h")


class SbusParams(Strict):
    """The SBus at 20 MHz as the adapter and the CPU see it (puma-iii.md)."""
    dma_rate: Rate = param(61_000_000, unit="bytes/s", qemu="dma-rate",
                           source="puma-iii.md: SBus at 20 MHz, about 61 MB/s with DMA")
    pio_rate: Rate = param(20_000_000, unit="bytes/s", qemu="pio-rate",
                           source="puma-iii.md: about 20 MB/s with programmed I/O")


class AdapterParams(Strict):
    """The FC adapter itself: its own rate, its fixed costs, its transmit buffer."""
    rate: Rate = param(58_000_000, unit="bytes/s", qemu="adapter-rate",
                       source="puma-iii.md: the SBus FC adapter has about 58 MB/s")
    send_setup_ns: int = param(500, ge=0, le=10**9, unit="ns", qemu="send-setup-ns",
                               source="our choice: 10 SBus clocks (20 MHz) to take a DMA "
                                      "command and arbitrate for the bus")
    frame_setup_ns: int = param(200, ge=0, le=10**9, unit="ns", qemu="frame-setup-ns",
                                source="our choice: 4 SBus clocks per frame to build or "
                                       "check its FC header (each way)")
    tx_queue_frames: int = param(2, ge=1, le=16, unit="frames", qemu="tx-queue-frames",
                                 source="our choice: double buffering, the least that lets "
                                        "the DMA of a frame overlap the sending of the last")
    # until the adapter is on the link it cannot send, so the nodes boot in lock-step with
    # grants this long (the driver enables it)
    start_us: int = param(10000, ge=0, le=60_000_000, unit="us", qemu="start-us",
                          source="our choice: FC link initialization and fabric login "
                                 "(FLOGI, PLOGI), of the order of 10 ms")


class FcBoard(BoardBase):
    model: Literal["fc"]
    # the largest frame the adapter puts on the link: FC's largest payload behind its header
    MAX_FRAME_BYTES: ClassVar[int] = FC["FC_WIRE_HDR_SIZE"] + FC["FC_MAX_PAYLOAD"]
    MAX_FRAME_WHAT: ClassVar[str] = "FC's 2112-byte payload and the 24-byte frame header"
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ("fc",)
    PROTOCOL: ClassVar[str] = "fc"
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ("switch", "p2p")
    TOPOLOGIES_WHY: ClassVar[str] = ("a Fibre Channel N_Port (puma-iii.md): an FC switch with "
                                     "buffer-to-buffer credits, or a point-to-point FC link; "
                                     "docs/boards/fc.md")
    # IP over FC (RFC 2625) on channel 0: the guest gets an interface on this network
    IP_NETWORKING: ClassVar[bool] = True
    SBUS_DEVICE: ClassVar[str] = "retrolink-fc-sbus"
    SBUS_PROM: ClassVar[str] = "fc"
    sbus: SbusParams = SbusParams()
    adapter: AdapterParams = AdapterParams()

    def link_wait_s(self) -> float:
        """The guest waits for the interface's carrier: the driver shows the adapter's link."""
        return 0.0

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        return self.device_args("retrolink-fc", station, fabric_socket, network_index,
                                mac=mac_address(network_index, station))


MODELS = {"fc": FcBoard}
BENCH = "puma3"
