"""The SX message processor (SXM) of the SURE SYSTEM2000 (docs/sx.md, sure-sx.md)."""
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from ..schema import MAX_NS, Rate, Strict
from .base import BoardBase


class SxmParams(Strict):
    """The SXM's control processor and its firmware (sure-sx.md)."""
    mips: float = Field(default=1.9, ge=0.01, le=100000)       # GMICRO/100, 1.9 VAX MIPS
    send_insns: int = Field(default=595, ge=0, le=10**9)       # 313 us x 1.9 MIPS
    recv_insns: int = Field(default=701, ge=0, le=10**9)       # 369 us x 1.9 MIPS
    confirm_insns: int = Field(default=0, ge=0, le=10**9)      # our choice: hardware
    # our choice; at least the 16-byte SX frame header (SX_WIRE_HDR_SIZE), at most a message
    confirm_bytes: int = Field(default=16, ge=16, le=4096)
    confirm_timeout_us: int = Field(default=100000, ge=1, le=MAX_NS // 1000)   # our choice
    # our choice: firmware start and ring insertion after the driver enables the board,
    # of the order of an FDDI station joining the ring; until then the board cannot
    # send, so the nodes boot in lock-step with grants this long
    start_us: int = Field(default=25000, ge=0, le=60_000_000)


class PmBusParams(Strict):
    """The PM-SXM bus: 4 channels x 10 MB/s (sure-sx.md); one channel per DMA (our choice)."""
    channels: int = Field(default=4, ge=1, le=16)
    channel_rate: Rate = 10_000_000


class SxBoard(BoardBase):
    model: Literal["sx"]
    # the largest frame the board puts on the link: a 4096-byte message behind its
    # 16-byte header (SX_WIRE_HDR_SIZE in qemu-devices/sx-regs.h)
    MAX_FRAME_BYTES: ClassVar[int] = 16 + 4096
    MAX_FRAME_WHAT: ClassVar[str] = "a 4 KB message and its header"
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ("sx",)
    PROTOCOL: ClassVar[str] = "sx"
    sxm: SxmParams = SxmParams()
    pm_bus: PmBusParams = PmBusParams()

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        props = {
            "node": station, "network": network_index, "fabric": str(fabric_socket),
            "sxm-mips": repr(float(self.sxm.mips)),
            "fw-send-insns": self.sxm.send_insns, "fw-recv-insns": self.sxm.recv_insns,
            "fw-confirm-insns": self.sxm.confirm_insns, "confirm-bytes": self.sxm.confirm_bytes,
            "confirm-timeout-us": self.sxm.confirm_timeout_us, "start-us": self.sxm.start_us,
            "bus-channels": self.pm_bus.channels, "bus-channel-rate": self.pm_bus.channel_rate,
        }
        return ["-device", "retrolink-sx," + ",".join(f"{k}={v}" for k, v in props.items())]
