"""What the Ethernet topologies share: 802.3 framing on the wire (fabric/eth_framing.c;
docs/fabric.md, "Ethernet"). Every key, default and limit is the fabric's (a test
compares them with the C code's)."""
from pydantic import Field

from .base import NetworkBase

# the fabric's bound on every topology parameter and every time derived from them
# (TOPO_PARAM_MAX in fabric/link_stats.h): sums of a few never wrap 64 bits
TOPO_PARAM_MAX = 10**12
Param = Field(ge=0, le=TOPO_PARAM_MAX)


def bits_ns(bits: int, rate: int) -> int:
    """`bits` at `rate` bytes/s, rounded up to a whole ns (eth_bits_ns)."""
    return -(-bits * 10**9 // (8 * rate))


class EthernetNetwork(NetworkBase):
    # the largest frame without FCS: 6 + 6 + 2 header bytes + 1500 of payload
    mtu: int = Field(default=1514, ge=0, le=65536)
    prop_ns: int = Param                    # each kind gives its own default
    preamble_bytes: int = Field(default=8, ge=0, le=TOPO_PARAM_MAX)    # 7 + the SFD
    fcs_bytes: int = Field(default=4, ge=0, le=TOPO_PARAM_MAX)         # CRC-32
    min_frame_bytes: int = Field(default=64, ge=0, le=TOPO_PARAM_MAX)  # FCS included
    ifg_bits: int = Field(default=96, ge=0, le=TOPO_PARAM_MAX)

    def wire_ns(self, length: int) -> int:
        """The time a frame of `length` bytes (no FCS) holds the wire (eth_wire_ns)."""
        padded = self.preamble_bytes + max(length + self.fcs_bytes, self.min_frame_bytes)
        return -(-padded * 10**9 // self.rate)

    def derived_bits(self) -> dict[str, int]:
        """The times in bits that the fabric derives, each within TOPO_PARAM_MAX ns."""
        return {"the largest frame": 8 * (self.preamble_bytes + max(self.mtu + self.fcs_bytes,
                                                                    self.min_frame_bytes)),
                "the inter-frame gap": self.ifg_bits}

    def check(self, stations: int) -> list[str]:
        return [f"{what} lasts more than 10^12 ns at rate={self.rate}"
                for what, bits in self.derived_bits().items()
                if bits_ns(bits, self.rate) > TOPO_PARAM_MAX]
