"""Machine files (machines/*.toml): the schema, loading, validation and --set overrides.

Every table and field is declared here; an unknown one is an error naming the file, the
field and what is allowed. docs/machines.md describes the schema for users.
"""
import copy
import re
import tomllib
import typing
from pathlib import Path
from typing import Annotated, ClassVar, Literal, Optional, Union

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from . import paths, units


class MachineError(Exception):
    """A machine file is missing, unreadable or invalid; str() says where and why."""


class Strict(BaseModel):
    # allow_inf_nan: a float field never takes inf or nan (QEMU and the fabric refuse them)
    model_config = ConfigDict(extra="forbid", strict=False, frozen=True, allow_inf_nan=False)


Rate = Annotated[int, Field(gt=0, le=units.MAX_RATE)]
# Limits shared by every field of a kind: a time in ns is at most an hour of virtual time
# (sums of a few never overflow 64 bits in the fabric); a size in bytes fits one frame.
MAX_NS = 3600 * 10**9
Ns = Annotated[int, Field(ge=0, le=MAX_NS)]
PositiveNs = Annotated[int, Field(ge=1, le=MAX_NS)]
FrameBytes = Annotated[int, Field(ge=0, le=65536)]


def _check_name(v: str) -> str:
    """A name goes into run directory, socket and fabric names (RL_NAME_LEN: 32)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}", v):
        raise ValueError(f"{v!r} is not a name: use 1 to 32 letters, digits, '.', '_' or '-', "
                         "starting with a letter or digit (no spaces, commas or '/')")
    return v


Name = Annotated[str, AfterValidator(_check_name)]


def _rate(v):
    return units.parse_rate(v)


class Cluster(Strict):
    name: Name = ""          # default: not validated; runs are then named "cluster"
    description: str = ""
    nodes: int = Field(ge=1, le=64, description="VM nodes, ids 0..nodes-1")
    memory_mib: int = Field(default=256)
    cpu_mips: float = Field(default=125.0, description="guest CPU speed -> icount shift")
    # optional: one speed per node (nodes may differ; the fabric handles each one's
    # granularity); overrides cpu_mips
    cpu_mips_per_node: Optional[list[float]] = None
    boot_timeout_s: float = Field(default=300.0, gt=0, le=86400)
    run_timeout_s: float = Field(default=900.0, gt=0, le=86400)
    # our choice: a cluster whose lock-step has not moved for this long (wall clock) has
    # a node that stopped (docs/reliability.md); the run ends naming it
    stall_timeout_s: float = Field(default=60.0, gt=0, le=86400)
    kernel_cmdline: str = ""

    @field_validator("memory_mib", mode="before")
    @classmethod
    def _mem(cls, v):
        return units.parse_mib(v)

    @field_validator("cpu_mips")
    @classmethod
    def _mips(cls, v):
        units.icount_shift(v)
        return v

    @field_validator("cpu_mips_per_node")
    @classmethod
    def _mips_each(cls, v):
        for m in v or []:
            units.icount_shift(m)
        return v

    @model_validator(mode="after")
    def _one_speed_per_node(self):
        if self.cpu_mips_per_node is not None and len(self.cpu_mips_per_node) != self.nodes:
            raise ValueError(f"cluster.cpu_mips_per_node has {len(self.cpu_mips_per_node)} "
                             f"entries for {self.nodes} nodes: give one per node")
        return self

    @property
    def icount_shift(self) -> int:
        return units.icount_shift(self.cpu_mips)

    def node_cpu_mips(self, node: int) -> float:
        return self.cpu_mips_per_node[node] if self.cpu_mips_per_node else self.cpu_mips

    def node_icount_shift(self, node: int) -> int:
        return units.icount_shift(self.node_cpu_mips(node))


# ---- devices -------------------------------------------------------------------------

class NoDevice(Strict):
    """No interconnect board: plain nodes (used by platform tests)."""
    model: Literal["none"]


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

    @field_validator("channel_rate", mode="before")
    @classmethod
    def _r(cls, v):
        return _rate(v)


class SxDevice(Strict):
    model: Literal["sx"]
    # the largest frame the board puts on the link: a 4096-byte message behind its
    # 16-byte header (SX_WIRE_HDR_SIZE in qemu-devices/sx-regs.h)
    MAX_FRAME_BYTES: ClassVar[int] = 16 + 4096
    sxm: SxmParams = SxmParams()
    pm_bus: PmBusParams = PmBusParams()

    def qemu_device(self, node: int, nodes: int, fabric_socket: Path) -> str:
        props = {
            "node": node, "fabric": str(fabric_socket),
            "sxm-mips": repr(float(self.sxm.mips)),
            "fw-send-insns": self.sxm.send_insns, "fw-recv-insns": self.sxm.recv_insns,
            "fw-confirm-insns": self.sxm.confirm_insns, "confirm-bytes": self.sxm.confirm_bytes,
            "confirm-timeout-us": self.sxm.confirm_timeout_us, "start-us": self.sxm.start_us,
            "bus-channels": self.pm_bus.channels, "bus-channel-rate": self.pm_bus.channel_rate,
        }
        return "retrolink-sx," + ",".join(f"{k}={v}" for k, v in props.items())


Device = Annotated[Union[NoDevice, SxDevice], Field(discriminator="model")]

# ---- fabric topologies ---------------------------------------------------------------


class _LinkBase(Strict):
    rate: Rate
    mtu: int = Field(default=4500, ge=1, le=65536)
    overhead_bytes: int = Field(default=0, ge=0, le=4096)

    @field_validator("rate", mode="before")
    @classmethod
    def _r(cls, v):
        return _rate(v)

    def fabric_params(self) -> dict:
        return {k: v for k, v in self.model_dump().items() if k != "topology"}


class P2PLink(_LinkBase):
    topology: Literal["p2p"]
    prop_ns: Ns = 0


class TokenRingLink(_LinkBase):
    topology: Literal["token_ring"]
    station_delay_ns: PositiveNs
    token_bytes: int = Field(default=11, ge=1, le=4096)
    thtt_ns: Ns = 0


class SwitchLink(_LinkBase):
    """Fibre Channel style switch (fabric/topo_switch.c)."""
    topology: Literal["switch"]
    mtu: int = Field(default=2112, ge=1, le=65536)     # FC's largest frame payload
    prop_ns: Ns = 0
    switch_delay_ns: Ns = 0
    bb_credit: int = Field(default=1, ge=1, le=1024)
    rrdy_bytes: int = Field(default=4, ge=0, le=64)     # R_RDY is one ordered set


class MinLink(_LinkBase):
    """Multistage network of k x k switches, Omega wiring (fabric/topo_min.c)."""
    topology: Literal["min"]
    mtu: int = Field(default=508, ge=1, le=65536)      # Cenju-3's largest packet
    k: int = Field(default=4, ge=2, le=16)
    stages: int = Field(default=4, ge=1, le=8)
    stage_delay_ns: Ns
    prop_ns: Ns = 0


Link = Annotated[Union[P2PLink, TokenRingLink, SwitchLink, MinLink],
                 Field(discriminator="topology")]


class Synthetic(Strict):
    """A traffic generator inside the fabric (no VM)."""
    name: Name
    dst: int = Field(ge=0)
    size: FrameBytes
    interval_ns: PositiveNs
    start_ns: Ns = 0
    count: int = Field(ge=1, le=10**9)


class Machine(Strict):
    cluster: Cluster
    device: Device = NoDevice(model="none")
    link: Optional[Link] = None
    synthetic: list[Synthetic] = []

    @property
    def uses_fabric(self) -> bool:
        return self.device.model != "none"

    def total_nodes(self) -> int:
        return self.cluster.nodes + len(self.synthetic)


# ---- loading -------------------------------------------------------------------------

# discriminator values that pydantic puts in an error's location (device.sx.sxm.mips)
_TAGS = {"device": "model", "link": "topology"}


def _error_path(loc: tuple) -> list[str]:
    """An error location as the user writes the field: device.sxm.mips, not device.sx.sxm.mips."""
    parts = [str(p) for p in loc if not str(p).startswith(("function-", "tagged-"))]
    if len(parts) > 1 and parts[0] in _TAGS:
        del parts[1]
    return parts


def _describe(err: dict) -> str:
    loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith(("function-", "tagged-")))
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown field (check the spelling; docs/machines.md lists the fields)"
        suggestions = [".".join(p) for p in schema_paths() if p[-1] == err["loc"][-1]]
        if suggestions:
            msg += "; did you mean " + " or ".join(suggestions) + "?"
    elif err["type"] == "missing":
        msg = "required field is missing"
    return f"{loc or '(top level)'}: {msg}"


def _models_in(annotation) -> list[type]:
    """The Strict models a field's type may hold (through Optional, Union, Annotated, list)."""
    if isinstance(annotation, type) and issubclass(annotation, Strict):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def schema_paths(model: type = None, prefix: tuple = ()) -> list[tuple]:
    """Every settable field of the machine schema as a path: ('cluster', 'nodes'), ..."""
    out = []
    for name, field in (model or Machine).model_fields.items():
        if name in ("model", "topology") and prefix:
            continue
        inner = _models_in(field.annotation)
        if not inner:
            out.append((*prefix, name))
        for m in inner:
            out += [p for p in schema_paths(m, (*prefix, name)) if p not in out]
    return out


def resolve_machine_path(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml" or "/" in name_or_path:
        return p
    return paths.MACHINES / f"{name_or_path}.toml"


def _override_path(data: dict, key: str) -> list[str]:
    """Where --set KEY lands: 'sxm.mips' is short for 'device.sxm.mips'."""
    parts = key.split(".")
    if parts[0] not in ("cluster", "device", "link", "synthetic") and \
            isinstance(data.get("device"), dict):
        parts = ["device", *parts]
    return parts


def apply_overrides(data: dict, overrides: dict[str, object]) -> dict:
    """--set a.b.c=value: set a field; 'sxm.mips' is short for 'device.sxm.mips'."""
    data = copy.deepcopy(data)
    for key, value in overrides.items():
        parts = _override_path(data, key)
        node = data
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise MachineError(f"--set {key}: {p} is not a table")
        node[parts[-1]] = value
    return data


def parse_value(text: str):
    """A --set value: TOML syntax if it parses (numbers, booleans, "strings"), else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_overrides(pairs) -> dict:
    """--set NAME=VALUE arguments as a dict of overrides."""
    out = {}
    for p in pairs or []:
        if "=" not in p:
            raise MachineError(f"--set {p}: expected NAME=VALUE, e.g. --set sxm.mips=20")
        k, v = p.split("=", 1)
        if not re.fullmatch(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*", k.strip()):
            raise MachineError(f"--set {p}: {k.strip()!r} is not a field name such as "
                               "cluster.nodes or sxm.mips")
        out[k.strip()] = parse_value(v.strip())
    return out


def _read_machine_file(path: Path) -> dict:
    if not path.exists():
        known = ", ".join(sorted(p.stem for p in paths.MACHINES.glob("*.toml")))
        raise MachineError(f"{path}: no such machine file (machines: {known})")
    if not path.is_file():
        raise MachineError(f"{path}: is not a file; give a machine name (e.g. sure-sx) "
                           "or the path of a .toml file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise MachineError(f"{path}: not a text file in UTF-8 (byte {e.start}); "
                           "machine files are TOML") from None
    except OSError as e:
        raise MachineError(f"{path}: cannot read it: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise MachineError(f"{path}: not valid TOML: {e}") from None


def _validation_message(path: Path, data: dict, overrides: dict, err: ValidationError) -> str:
    """Errors in a field that a --set gave name that --set; the others name the file."""
    by_set = {tuple(_override_path(data, k)): f"--set {k}={v}" for k, v in overrides.items()}
    from_file, from_set = [], []
    for e in err.errors():
        where = tuple(_error_path(e["loc"]))
        origin = next((s for p, s in by_set.items() if where[:len(p)] == p), None)
        (from_set if origin else from_file).append(
            f"{origin}: {_describe(e)}" if origin else _describe(e))
    parts = []
    if from_set:
        parts.append("invalid --set:\n  " + "\n  ".join(from_set))
    if from_file:
        parts.append(f"{path}: invalid machine file:\n  " + "\n  ".join(from_file))
    return "\n".join(parts)


def load_machine(name_or_path: str, overrides: Optional[dict] = None) -> Machine:
    path = resolve_machine_path(name_or_path)
    data = _read_machine_file(path)
    overrides = overrides or {}
    if overrides:
        data = apply_overrides(data, overrides)
    try:
        machine = Machine.model_validate(data)
    except ValidationError as e:
        raise MachineError(_validation_message(path, data, overrides, e)) from None
    except ValueError as e:
        raise MachineError(f"{path}: {e}") from None
    problems = []
    link = machine.link
    if isinstance(link, MinLink) and link.k ** link.stages < machine.total_nodes():
        problems.append(f"link: {link.k}x{link.k} switches in {link.stages} stages give "
                        f"{link.k ** link.stages} ports, this machine has "
                        f"{machine.total_nodes()} nodes; raise link.stages or link.k")
    if isinstance(machine.device, SxDevice) and link is not None \
            and link.mtu < SxDevice.MAX_FRAME_BYTES:
        problems.append(f"link.mtu = {link.mtu}: the sx board sends frames of up to "
                        f"{SxDevice.MAX_FRAME_BYTES} bytes (a 4 KB message and its header), "
                        "which the fabric would drop; raise link.mtu to at least that")
    if machine.uses_fabric and machine.link is None:
        problems.append(f"device.model = \"{machine.device.model}\" needs a [link] table "
                        "(the fabric topology)")
    if isinstance(machine.link, P2PLink) and machine.total_nodes() != 2:
        problems.append(f"link.topology = \"p2p\" joins exactly 2 nodes, this machine has "
                        f"{machine.total_nodes()}")
    for s in machine.synthetic:
        if s.dst >= machine.cluster.nodes:
            problems.append(f"synthetic {s.name}: dst = {s.dst} is not a VM node "
                            f"(0..{machine.cluster.nodes - 1})")
    if machine.synthetic and not machine.uses_fabric:
        problems.append("synthetic nodes need a device and a [link]")
    if problems:
        sets = "".join(f" --set {k}={v}" for k, v in overrides.items())
        raise MachineError(f"{path}{' with' + sets if sets else ''}: invalid machine file:\n  "
                           + "\n  ".join(problems))
    return machine
