"""What the Ethernet topologies share: 802.3 framing on the wire (fabric/topo/eth_framing.c;
docs/fabric.md, "Ethernet"). Every key, default and limit is the fabric's (a test
compares them with the C code's)."""
from retrolink.model.schema import param
from retrolink.topologies.base import TOPO_PARAM_MAX, NetworkBase


def bits_ns(bits: int, rate: int) -> int:
    """`bits` at `rate` bytes/s, rounded up to a whole ns (eth_bits_ns)."""
    return -(-bits * 10**9 // (8 * rate))


class EthernetNetwork(NetworkBase):
    mtu: int = param(1514, ge=0, le=65536, unit="bytes",
                     source="IEEE 802.3: the largest frame without FCS, 6 + 6 + 2 header "
                            "bytes and 1500 of payload")
    preamble_bytes: int = param(8, ge=0, le=TOPO_PARAM_MAX, unit="bytes",
                                source="IEEE 802.3: 7 bytes of preamble and the SFD")
    fcs_bytes: int = param(4, ge=0, le=TOPO_PARAM_MAX, unit="bytes",
                           source="IEEE 802.3: the CRC-32 frame check sequence")
    min_frame_bytes: int = param(64, ge=0, le=TOPO_PARAM_MAX, unit="bytes",
                                 source="IEEE 802.3: minFrameSize, FCS included")
    ifg_bits: int = param(96, ge=0, le=TOPO_PARAM_MAX, unit="bit times",
                          source="IEEE 802.3: interFrameGap")

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
