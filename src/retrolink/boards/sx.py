"""The SX message processor (SXM) of the SURE SYSTEM2000 (docs/boards/sx.md, sure-sx.md)."""
from pathlib import Path
from typing import ClassVar, Literal

from retrolink.boards.base import BoardBase
from retrolink.headers import defines
from retrolink.model.schema import MAX_NS, Rate, Strict, param

SX = defines("regs/sx-regs.h", "proto/sx.h")


class SxmParams(Strict):
    """The SXM's control processor and its firmware (sure-sx.md)."""
    mips: float = param(1.9, ge=0.01, le=100000, unit="MIPS", qemu="sxm-mips",
                        source="sure-sx.md: GMICRO/100, 1.9 VAX MIPS")
    send_insns: int = param(595, ge=0, le=10**9, unit="instructions", qemu="fw-send-insns",
                            source="sure-sx.md: 313 us send time x 1.9 MIPS")
    recv_insns: int = param(701, ge=0, le=10**9, unit="instructions", qemu="fw-recv-insns",
                            source="sure-sx.md: 369 us receive time x 1.9 MIPS")
    confirm_insns: int = param(0, ge=0, le=10**9, unit="instructions", qemu="fw-confirm-insns",
                               source="our choice: the confirmation is sent by hardware")
    confirm_bytes: int = param(SX["SX_WIRE_HDR_SIZE"], ge=SX["SX_WIRE_HDR_SIZE"],
                               le=SX["SX_MAX_MSG"], unit="bytes", qemu="confirm-bytes",
                               source="our choice: the 16-byte SX frame header "
                                      "(SX_WIRE_HDR_SIZE) and nothing more")
    confirm_timeout_us: int = param(100000, ge=1, le=MAX_NS // 1000, unit="us",
                                    qemu="confirm-timeout-us",
                                    source="our choice: far above any healthy round trip")
    # until the board has started it cannot send, so the nodes boot in lock-step with
    # grants this long
    start_us: int = param(25000, ge=0, le=60_000_000, unit="us", qemu="start-us",
                          source="our choice: firmware start and ring insertion, of the "
                                 "order of an FDDI station joining the ring")


class PmBusParams(Strict):
    """The PM-SXM bus: 4 channels x 10 MB/s (sure-sx.md); one channel per DMA (our choice)."""
    channels: int = param(4, ge=1, le=16, unit="channels", qemu="bus-channels",
                          source="sure-sx.md: 4 channels")
    channel_rate: Rate = param(10_000_000, unit="bytes/s", qemu="bus-channel-rate",
                               source="sure-sx.md: 10 MB/s per channel")


class SxBoard(BoardBase):
    model: Literal["sx"]
    # the largest frame the board puts on the link: a message behind its header
    MAX_FRAME_BYTES: ClassVar[int] = SX["SX_WIRE_HDR_SIZE"] + SX["SX_MAX_MSG"]
    MAX_FRAME_WHAT: ClassVar[str] = "a 4 KB message and its header"
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ("sx",)
    PROTOCOL: ClassVar[str] = "sx"
    # its own network is FDDI (sure-sx.md); a frame is a whole message, never split
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ("token_ring", "p2p", "switch")
    TOPOLOGIES_WHY: ClassVar[str] = ("an FDDI station (sure-sx.md): the timed-token ring, or a "
                                     "link or switch that carries its whole-message frames as "
                                     "they are (machines/sx-pair.toml, sx-switch.toml); not "
                                     "802.3 Ethernet, nor a network of 508-byte packets")
    sxm: SxmParams = SxmParams()
    pm_bus: PmBusParams = PmBusParams()

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        return self.device_args("retrolink-sx", station, fabric_socket, network_index)


MODELS = {"sx": SxBoard}
BENCH = "sx"
