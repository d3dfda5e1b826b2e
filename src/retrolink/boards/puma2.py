"""The PUMA-II distributed shared memory board on the VME bus of a SPARCstation 2
(docs/boards/puma2.md, puma-ii.md): the QEMU device retrolink-puma2 on a 100 Mb/s
`token_ring`."""
from pathlib import Path
from typing import ClassVar, Literal

from retrolink.boards.base import BoardBase
from retrolink.headers import defines
from retrolink.model.schema import Rate, Strict, param

PUMA2 = defines("regs/puma2-regs.h", "proto/puma2.h")


class VmeParams(Strict):
    """The VME bus as the SPARCstation 2's programmed I/O sees it, through an SBus-VME
    bridge: every 32-bit transaction pays the bridge and the VME handshake, then its data
    phase (puma-ii.md gives neither: docs/boards/puma2.md, "Timing")."""
    overhead_ns: int = param(500, ge=0, le=10**9, unit="ns", qemu="vme-overhead-ns",
                             source="our choice: an SBus-VME bridge's single cycle, 10 SBus "
                                    "clocks at 20 MHz (request, VME arbitration and address "
                                    "phase, DTACK back across the bridge)")
    rate: Rate = param(20_000_000, unit="bytes/s", qemu="vme-rate",
                       source="our choice: a VME D32 data phase of 200 ns (a typical DRAM "
                              "slave's DTACK), 4 bytes each")


class BoardParams(Strict):
    """The board itself: its memory (the shared space), its controller, its copy engine."""
    memory_mib: int = param(16, ge=1, le=64, unit="MiB", qemu="memory-mib",
                            source="our choice: 16 MiB of board memory (a 1990 VME memory "
                                   "board held 4-32 MiB); a power of two, the BAR's size")
    request_ns: int = param(2000, ge=1, le=10**9, unit="ns", qemu="request-ns",
                            source="our choice: the board's controller, a ~10 MIPS "
                                   "microprocessor of the period, ~20 instructions for a "
                                   "command or a protocol message")
    copy_rate: Rate = param(40_000_000, unit="bytes/s", qemu="copy-rate",
                            source="our choice: the page-copy engine moves a 32-bit word "
                                   "between board DRAM and the ring buffer each 100 ns (a "
                                   "1990 DRAM cycle)")
    start_us: int = param(1000, ge=0, le=60_000_000, unit="us", qemu="start-us",
                          source="our choice: the board's self-test after the driver "
                                 "enables it, ~1 ms")


class Puma2Board(BoardBase):
    model: Literal["puma2"]
    # a page behind the protocol header
    MAX_FRAME_BYTES: ClassVar[int] = PUMA2["PUMA2_WIRE_HDR_SIZE"] + PUMA2["PUMA2_PAGE"]
    MAX_FRAME_WHAT: ClassVar[str] = "a 4 KiB page and the 16-byte protocol header"
    # ext2 (the ext4 module, which needs crc32c) for the shared disk, then the driver: last,
    # because once it enables the board the node keeps microsecond lock-step (any guest
    # instruction may be a command), and loading ext4 takes some 10^8 instructions
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ("crc32c_generic", "ext4", "puma2")
    LOADS_LAST: ClassVar[bool] = True
    PROTOCOL: ClassVar[str] = "puma2"
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ("token_ring",)
    TOPOLOGIES_WHY: ClassVar[str] = ("the boards are joined by a 100 Mb/s token ring "
                                     "(puma-ii.md); docs/boards/puma2.md")
    vme: VmeParams = VmeParams()
    board: BoardParams = BoardParams()

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        return self.device_args("retrolink-puma2", station, fabric_socket, network_index)


MODELS = {"puma2": Puma2Board}
BENCH = "puma2"
