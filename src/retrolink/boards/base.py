"""What every board has: the network its port joins and the nodes that carry it."""
from pathlib import Path
from typing import ClassVar, Literal, Union

from pydantic import Field

from retrolink.model.schema import Strict, params, value


class BoardBase(Strict):
    network: str = Field(description="the [networks.NAME] its port joins")
    nodes: Union[Literal["all"], list[int]] = "all"

    # the guest kernel modules the board needs, loaded with modprobe at boot (the
    # module's own dependencies come with it)
    GUEST_MODULES: ClassVar[tuple[str, ...]] = ()
    # the guest has an IP interface on this board's network (docs/boards/ethernet.md)
    IP_NETWORKING: ClassVar[bool] = False
    # the largest frame the board puts on its network, and what it is (0: no bound)
    MAX_FRAME_BYTES: ClassVar[int] = 0
    MAX_FRAME_WHAT: ClassVar[str] = ""
    # what its frames are (enum rl_protocol in include/retrolink/wire.h): the fabric
    # refuses a port of another protocol on its network
    PROTOCOL: ClassVar[str] = "any"
    # it sends frames to every other station (RL_NODE_BROADCAST), and why
    NEEDS_BROADCAST: ClassVar[str] = ""
    # its driver, once loaded, holds the node in microsecond lock-step (the board may send
    # after any guest instruction): its modules load after every other at boot
    LOADS_LAST: ClassVar[bool] = False
    # the topologies (src/retrolink/topologies/) whose networks it can join, and why
    # those: a board on any other is refused by name before anything boots
    TOPOLOGIES: ClassVar[tuple[str, ...]] = ()
    TOPOLOGIES_WHY: ClassVar[str] = ""
    # its QEMU device as an SBus card, on SPARCstation 5 nodes (docs/sparc.md), and its
    # FCode PROM (guest/sparc/fcode/<name>.fth): a board without one has no SBus card
    SBUS_DEVICE: ClassVar[str] = ""
    SBUS_PROM: ClassVar[str] = ""

    def node_ids(self, cluster_nodes: int) -> list[int]:
        return list(range(cluster_nodes)) if self.nodes == "all" else list(self.nodes)

    def guest_modules(self) -> tuple[str, ...]:
        return self.GUEST_MODULES

    def qemu_props(self) -> dict[str, str]:
        """The QEMU properties its parameters declare (schema.param(qemu=...)), as text."""
        return {p.qemu: repr(float(v)) if isinstance(v := value(self, p.name), float) else str(v)
                for p in params(type(self)) if p.qemu}

    def device_args(self, device: str, station: int, fabric_socket: Path, network_index: int,
                    **extra) -> list[str]:
        """-device for a board that is itself a fabric port: its node, network and socket,
        extra properties, then its declared ones."""
        props = {"node": station, "network": network_index, "fabric": str(fabric_socket),
                 **extra, **self.qemu_props()}
        return ["-device", f"{device}," + ",".join(f"{k}={v}" for k, v in props.items())]

    def qemu_args(self, station: int, stations: int, fabric_socket: Path,
                  network_index: int) -> list[str]:
        """The QEMU arguments that add this board to a node, as station `station` of the
        `stations` on its network, the `network_index`-th of the machine's networks."""
        raise NotImplementedError

    def sbus_args(self, station: int, stations: int, fabric_socket: Path, network_index: int,
                  slot: int, prom: Path) -> list[str]:
        """The QEMU arguments that add this board to a SPARCstation 5 node as its SBus card
        in `slot`, with its FCode PROM image: qemu_args' properties, on SBUS_DEVICE."""
        args = self.qemu_args(station, stations, fabric_socket, network_index)
        assert args[0] == "-device" and len(args) == 2, args
        props = args[1].split(",", 1)[1]
        return ["-device", f"{self.SBUS_DEVICE},slot={slot},prom={prom},{props}"]

    def check(self, network) -> list[str]:
        """What this board cannot work with on that network (empty: nothing)."""
        problems = []
        if network.topology not in self.TOPOLOGIES:
            allowed = " or ".join(f'"{t}"' for t in self.TOPOLOGIES) or "none (it declares none)"
            problems.append(f"topology = \"{network.topology}\": the {self.model} board cannot "
                            f"work on this kind of network; it joins {allowed} "
                            f"({self.TOPOLOGIES_WHY})")
        if network.mtu < self.MAX_FRAME_BYTES:
            problems.append(f"mtu = {network.mtu}: the {self.model} board sends frames of up "
                            f"to {self.MAX_FRAME_BYTES} bytes ({self.MAX_FRAME_WHAT}), which "
                            "the fabric would drop; raise the network's mtu to at least that")
        if self.NEEDS_BROADCAST and not network.BROADCAST:
            problems.append(f"topology = \"{network.topology}\" carries no broadcast, which the "
                            f"{self.model} board needs ({self.NEEDS_BROADCAST}); use a topology "
                            "with broadcast (docs/fabric.md, \"Broadcast\")")
        return problems
