"""What a board description gives the fuzzer (boards/<name>.py defines one BoardSpec), and
the value pools both sides draw from."""
from dataclasses import dataclass, field
from random import Random
from typing import Callable

NEVER = (1 << 64) - 1

# plausible and garbage values: edges of every width, powers of two and their neighbours
INTERESTING = sorted({0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 4095,
                      4096, 4097, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
                      0xFFFFFFFE, 0xFFFFFFFF, 1 << 32, (1 << 63) - 1, 1 << 63, NEVER - 1, NEVER})


def value(rng: Random, size: int, hints=()) -> int:
    """A value for a size-byte access: a hint, an interesting edge, small, or random bits."""
    r = rng.random()
    if hints and r < 0.35:
        v = rng.choice(list(hints))
    elif r < 0.6:
        v = rng.choice(INTERESTING)
    elif r < 0.75:
        v = rng.randrange(16)
    else:
        v = rng.getrandbits(8 * size)
    return v & ((1 << (8 * size)) - 1)


@dataclass
class FabricView:
    """What the fake fabric knows when it makes up a frame or checks one: the cluster, the
    board's device properties, and the traffic so far (payloads as bytes)."""
    rng: Random
    node: int
    nodes: int
    props: dict
    sent: list = field(default_factory=list)        # (dst, payload) the board sent
    delivered: list = field(default_factory=list)   # (src, payload) delivered to the board

    def peer(self) -> int:
        """Another node of the cluster (the board's own id when it is alone)."""
        others = [n for n in range(min(self.nodes, 64)) if n != self.node]
        return self.rng.choice(others) if others else self.node


@dataclass(frozen=True)
class Reg:
    bar: int
    offset: int
    name: str
    values: tuple = ()          # plausible values to write (besides the generic pools)


@dataclass(frozen=True)
class BoardSpec:
    name: str
    device: str                                 # the QEMU -device type
    pci_id: tuple                               # (vendor, device)
    registers: tuple                            # of Reg: where the interesting offsets are
    # extra -device properties for one execution, as {name: value}
    properties: Callable[[Random], dict]
    # board-specific command sequences: fn(gen) drives the board through gen's methods
    sequences: tuple = ()
    # a DELIVER payload from the fabric: fn(view) -> (src or None for any peer, payload)
    frame: Callable[[FabricView], tuple] | None = None
    # the board's rules for the frames it sends: fn(view, frame dict) -> problem or None
    check_frame: Callable[[FabricView, dict], str | None] | None = None
    # QEMU's arguments for the board: fn(node, fabric socket, props) -> argv; by default
    # -device DEVICE,node=N,fabric=SOCK,PROPS (a board that is itself a fabric port)
    qemu_args: Callable[[int, str, dict], list] | None = None
