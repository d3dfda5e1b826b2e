"""Machine files (machines/*.toml): the schema, loading, validation and --set overrides.

Every table and field is declared here; an unknown one is an error naming the file, the
field and what is allowed. docs/machines.md describes the schema for users.
"""
import copy
import os
import re
import tomllib
import typing
from pathlib import Path
from typing import Annotated, Optional

from pydantic import Field, StringConstraints, ValidationError, field_validator, model_validator

from retrolink import paths
from retrolink.boards import Board, BoardBase
from retrolink.disks import MAX_DISKS, Disk
from retrolink.model import units
from retrolink.model.schema import Name, Strict
from retrolink.topologies import Network, NetworkBase
from retrolink.wire import lib as _wire

RL_MAX_NETWORKS = _wire.RL_MAX_NETWORKS


class MachineError(Exception):
    """A machine file is missing, unreadable or invalid; str() says where and why."""


# the wall-clock caps of a machine without a fabric, when its file sets none, for each
# node a host core runs (nodes_per_core)
PLAIN_BOOT_TIMEOUT_S, PLAIN_RUN_TIMEOUT_S = 300.0, 900.0


def nodes_per_core(nodes: int) -> int:
    """How many nodes share each of the cores this process may run on (1 at least), as
    the rest of retrolink counts them (os.sched_getaffinity, not every core the host has)."""
    return max(1, -(-nodes // len(os.sched_getaffinity(0))))


class ClusterSettings(Strict):
    name: Name = ""          # default: not validated; runs are then named "cluster"
    description: str = ""
    nodes: int = Field(ge=1, le=64, description="VM nodes, ids 0..nodes-1")
    memory_mib: int = Field(default=256)
    # QEMU's translation cache per node in MiB (-accel tcg,tb-size=); unset: QEMU's own
    # default (1 GiB, filled as code is translated). A cap for clusters of many nodes
    # (docs/machines.md, "Many nodes on one host"); how guest code is translated never
    # changes what it does or its instruction counts, so no figure depends on it
    tb_size_mib: Optional[int] = Field(default=None, ge=8, le=1024)
    # guest CPU speed, any number of MIPS within units.MIN_CPU_MIPS..MAX_CPU_MIPS
    # (QEMU's -icount: units.icount_option)
    cpu_mips: float = Field(default=125.0, description="guest CPU speed in MIPS")
    # optional: one speed per node (nodes may differ; the fabric handles each one's
    # granularity); overrides cpu_mips
    cpu_mips_per_node: Optional[list[float]] = None
    # wall-clock caps, only where a person asked for one (this field, or run's --timeout):
    # a slow host makes a run slower, never failed. A run with a fabric ends on the
    # virtual-time cap below and on a stall; one without (plain), whose clocks retrolink
    # cannot read, keeps PLAIN_BOOT_TIMEOUT_S and PLAIN_RUN_TIMEOUT_S (docs/reliability.md)
    boot_timeout_s: Optional[float] = Field(default=None, gt=0, le=86400)
    run_timeout_s: Optional[float] = Field(default=None, gt=0, le=86400)
    # our choice: a run ends when a node's virtual clock (since power on) passes this;
    # far above the longest run we know (a benchmark's boot and measurement, at 40 MIPS
    # a boot alone is ~150 s), low enough that a runaway command ends
    run_limit_virtual_s: float = Field(default=3600.0, gt=0, le=86400)
    # our choice: a cluster whose lock-step has not moved for this long (wall clock, its
    # waited-for QEMU getting no CPU time; or this much CPU time) has a node that stopped
    # (docs/reliability.md); the run ends naming it
    stall_timeout_s: float = Field(default=60.0, gt=0, le=86400)
    kernel_cmdline: str = ""
    # the nodes' computer (docs/sparc.md): "x86_64", a PC (QEMU's q35); "sparc32", a
    # SPARCstation 5 (QEMU's sun4m) with OpenBIOS and a sparc32 kernel, whose build
    # (src/retrolink/build/sparc_pipeline.py) only a machine of these nodes makes
    arch: typing.Literal["x86_64", "sparc32"] = Field(
        default="x86_64", description="the nodes' computer: x86_64 (PC) or sparc32 (SS-5)")
    # the guest kernel's speculative-execution mitigations (docs/machines.md, "Guest kernel
    # mitigations"): "auto" is the kernel's own choice for the CPU QEMU presents, "off"
    # adds mitigations=off (a period machine had none of them)
    mitigations: typing.Literal["auto", "off"] = "auto"
    # where the root's files are (docs/machines.md, "Many nodes on one host"): the
    # initramfs unpacked into the kernel's default, a tmpfs capped at half the RAM, or into
    # a ramfs (rootfstype=ramfs), capped by the RAM alone, which lets a node have less
    # (units.MIN_NODE_MIB_RAMFS); or "pmem", a read-only image every node maps from one
    # host file, read in place (build/pmem_root.py), under a tmpfs for what it writes
    root_fs: typing.Literal["tmpfs", "ramfs", "pmem"] = "tmpfs"
    # Debian image modules every node loads at boot, before its boards' (a module a
    # command would load anyway, loaded while its node still boots with long grants)
    boot_modules: list[Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]+$")]] = Field(
        default=[], description="kernel modules loaded at boot, before the boards'")

    @field_validator("memory_mib", mode="before")
    @classmethod
    def _mem(cls, v):
        return units.parse_mib(v)

    @model_validator(mode="after")
    def _room_for_root(self):
        units.check_root_room(self.memory_mib, self.root_fs)
        return self

    @field_validator("cpu_mips")
    @classmethod
    def _mips(cls, v):
        return units.check_cpu_mips(v)

    @field_validator("cpu_mips_per_node")
    @classmethod
    def _mips_each(cls, v):
        return None if v is None else [units.check_cpu_mips(m) for m in v]

    @model_validator(mode="after")
    def _one_speed_per_node(self):
        if self.cpu_mips_per_node is not None and len(self.cpu_mips_per_node) != self.nodes:
            raise ValueError(f"cluster.cpu_mips_per_node has {len(self.cpu_mips_per_node)} "
                             f"entries for {self.nodes} nodes: give one per node")
        return self

    def node_cpu_mips(self, node: int) -> float:
        return self.cpu_mips_per_node[node] if self.cpu_mips_per_node else self.cpu_mips

    def node_icount_option(self, node: int) -> str:
        """The node's -icount speed: shift=N or mips=X (units.icount_option)."""
        return units.icount_option(self.node_cpu_mips(node))

    def node_granularity_ns(self, node: int) -> int:
        """How late the node's timers may fire, plus one (units.granularity_ns)."""
        return units.granularity_ns(self.node_cpu_mips(node))


# A SPARCstation 5's most memory: QEMU's SS-5 refuses more (max_mem of its hwdef in
# hw/sparc/sun4m.c; docs/sparc.md)
# the SS-5's SBus slots for cards (qemu/core/rl-sun4m.c, RL_SUN4M_SBUS_CARD_SLOTS)
SS5_SBUS_SLOTS = 3
SS5_MAX_MIB = 256
# The least guest RAM of a machine with each image layer. Our choice for "mpi": the base
# initramfs and the layer unpack into the root tmpfs, which the kernel sizes to half the
# RAM: 80 MB unpacked do not fit at 256 MiB (77 MB), and the ranks' buffers need room
# besides (osu_alltoall at 1 MiB per peer); 384 MiB boots and runs every MPI program.
LAYER_MIN_MIB = {"mpi": 384}
# The layers that need a board of a protocol: "rdma" puts soft-RoCE (rdma_rxe) on the
# nodes' Ethernet interfaces (docs/rdma.md)
LAYER_PROTOCOL = {"rdma": "ethernet"}


class GuestSettings(Strict):
    """What the guests boot besides the base image every machine boots."""
    # image layers on top of the base initramfs (src/retrolink/build/layers.py): "mpi",
    # Open MPI with its remote shell and our MPI programs (docs/mpi.md); "rdma", RDMA verbs
    # over soft-RoCE with perftest (docs/rdma.md). One at a time: a build stacks each on
    # the base alone
    packages: list[typing.Literal["mpi", "rdma"]] = Field(
        default=[], description="image layers on top of the base initramfs")

    @field_validator("packages")
    @classmethod
    def _once(cls, v):
        if len(set(v)) != len(v):
            raise ValueError(f"{v}: name each layer once")
        if len(v) > 1:
            raise ValueError(f"{v}: one layer at a time (each is built on the base alone)")
        return v


# ---- the graph ------------------------------------------------------------------------

class Machine(Strict):
    """A cluster as a graph: nodes carry boards, each board's port joins a network; and
    disks, which join none."""
    cluster: ClusterSettings
    guest: GuestSettings = GuestSettings()
    networks: dict[Name, Network] = {}
    boards: dict[Name, Board] = {}
    disks: dict[Name, Disk] = {}

    @property
    def uses_fabric(self) -> bool:
        return bool(self.networks)

    def wall_caps(self, timeout_s: float | None = None) -> tuple[float | None, float | None]:
        """The wall-clock caps of a run (None: none): booting, then the commands.
        timeout_s: run's --timeout. Only a machine without a fabric has them by default:
        a fabric's lock-step file shows the nodes' clocks (the virtual cap and the stall
        watch), a lone QEMU's does not."""
        c = self.cluster
        boot, run = c.boot_timeout_s, timeout_s or c.run_timeout_s
        if self.uses_fabric:
            return boot, run
        # the host's cores are shared out among the nodes: 64 plain nodes boot cold on 2
        # cores in about 7 minutes, each as slowly as 32 times one alone
        share = nodes_per_core(c.nodes)
        return boot or share * PLAIN_BOOT_TIMEOUT_S, run or share * PLAIN_RUN_TIMEOUT_S

    @model_validator(mode="after")
    def _what_sparc32_nodes_have(self):
        """A SPARCstation 5 node has its OpenBIOS, kernel, initramfs, the boot barrier and
        the boards that come as SBus cards (docs/sparc.md): nothing of the x86 image's
        layers, disks or other boards."""
        c = self.cluster
        if c.arch != "sparc32":
            return self
        extra = [what for what, has in (
            ("disks", self.disks), ("guest.packages", self.guest.packages),
            ("cluster.boot_modules", c.boot_modules),
            ('cluster.root_fs = "pmem"', c.root_fs == "pmem")) if has]
        extra += [f"boards.{name} (the {b.model} board has no SBus card)"
                  for name, b in self.boards.items() if not b.SBUS_DEVICE]
        if any(len(self.boards_on(n)) > SS5_SBUS_SLOTS for n in range(c.nodes)):
            extra.append(f"more than {SS5_SBUS_SLOTS} boards on a node (the SS-5's SBus slots)")
        if extra:
            raise ValueError(f"cluster.arch is \"sparc32\": its nodes have no {', '.join(extra)} "
                             "(the sparc32 image carries klibc and fw_cfg, and the SBus cards; "
                             "docs/sparc.md)")
        if c.memory_mib > SS5_MAX_MIB:
            raise ValueError(f"cluster.arch is \"sparc32\": a SPARCstation 5 holds at most "
                             f"{SS5_MAX_MIB} MiB (cluster.memory_mib is {c.memory_mib})")
        return self

    @model_validator(mode="after")
    def _room_for_layers(self):
        for layer in self.guest.packages:
            if self.cluster.memory_mib < LAYER_MIN_MIB.get(layer, 0):
                raise ValueError(f"guest.packages has \"{layer}\": it needs cluster.memory_mib "
                                 f"of at least {LAYER_MIN_MIB[layer]} MiB (this machine has "
                                 f"{self.cluster.memory_mib}; docs/mpi.md)")
            protocol = LAYER_PROTOCOL.get(layer)
            if protocol and not any(b.PROTOCOL == protocol for b in self.boards.values()):
                models = ", ".join(sorted({b.model for b in self.boards.values()})) or "none"
                raise ValueError(f"guest.packages has \"{layer}\": it needs a board of the "
                                 f"{protocol} protocol, whose interface it runs on (this "
                                 f"machine has {models}; docs/rdma.md)")
        return self

    def boards_on(self, node: int) -> list[BoardBase]:
        return [b for b in self.boards.values() if node in b.node_ids(self.cluster.nodes)]

    def disks_on(self, node: int) -> list[Disk]:
        return [d for d in self.disks.values() if node in d.node_ids(self.cluster.nodes)]

    def stations(self, network: str) -> list[int]:
        """The VM nodes with a board on that network, in id order (its station ids)."""
        return sorted({n for b in self.boards.values() if b.network == network
                       for n in b.node_ids(self.cluster.nodes)})

    def board_of_model(self, model: str) -> BoardBase:
        """The one board of that model (benchmarks of a board need exactly one)."""
        found = [b for b in self.boards.values() if b.model == model]
        if len(found) != 1:
            raise MachineError(f"machine '{self.cluster.name}' has {len(found)} boards of "
                               f"model \"{model}\"; this needs exactly one")
        return found[0]

    def network_of(self, board: BoardBase) -> NetworkBase:
        return self.networks[board.network]

    def network_index(self, network: str) -> int:
        """The network's place among the machine's networks, in the file's order: its
        number in MAC and IP addresses (docs/boards/ethernet.md)."""
        return list(self.networks).index(network)

    def total_nodes(self) -> int:
        """Fabric node ids: the VM nodes, then each network's synthetic stations."""
        return self.cluster.nodes + sum(len(n.synthetic) for n in self.networks.values())

    def graph_problems(self) -> list[str]:
        """What the schema alone cannot see: references, and what the fabric can run."""
        problems = []
        for name, b in self.boards.items():
            where = f"boards.{name}"
            if b.network not in self.networks:
                problems.append(f"{where}.network = \"{b.network}\": no such network "
                                f"(networks: {', '.join(self.networks) or 'none'})")
                continue
            ids = b.node_ids(self.cluster.nodes)
            bad = [n for n in ids if not 0 <= n < self.cluster.nodes]
            if bad or len(set(ids)) != len(ids):
                problems.append(f"{where}.nodes = {b.nodes}: give distinct node ids "
                                f"0..{self.cluster.nodes - 1}, or \"all\"")
            problems += [f"{where} on networks.{b.network}: {p}"
                         for p in b.check(self.networks[b.network])]
        for net_name, net in self.networks.items():
            on_it = [name for name, b in self.boards.items() if b.network == net_name]
            if not on_it:
                problems.append(f"networks.{net_name}: no board joins it")
            if len(on_it) > 1:
                problems.append(f"networks.{net_name}: boards {', '.join(on_it)} both join it; "
                                "a network carries one board model")
            stations = self.stations(net_name)
            problems += [f"networks.{net_name}: {p}"
                         for p in net.check(len(stations) + len(net.synthetic))]
            for s in net.synthetic:
                if s.dst not in stations:
                    problems.append(f"networks.{net_name}.synthetic {s.name}: dst = {s.dst} is "
                                    f"not a VM node on this network ({stations})")
        for name, d in self.disks.items():
            ids = d.node_ids(self.cluster.nodes)
            if any(not 0 <= n < self.cluster.nodes for n in ids) or len(set(ids)) != len(ids):
                problems.append(f"disks.{name}.nodes = {d.nodes}: give distinct node ids "
                                f"0..{self.cluster.nodes - 1}, or \"all\"")
            problems += [f"disks.{name}: {p}" for p in d.problems()]
        for node in range(self.cluster.nodes):
            if len(on := self.disks_on(node)) > MAX_DISKS:
                problems.append(f"node {node} has {len(on)} disks: its SCSI adapter takes "
                                f"{MAX_DISKS} (SCSI ids 0-6)")
        if len(self.networks) > RL_MAX_NETWORKS:
            problems.append(f"{len(self.networks)} networks: the fabric serves at most "
                            f"{RL_MAX_NETWORKS}")
        return problems


# ---- loading -------------------------------------------------------------------------

# tables whose entries are named by the user and tagged by a kind (boards.sx.sx.sxm.mips
# in pydantic's error locations: the second 'sx' is the model)
_NAMED_TABLES = ("boards", "networks")


def _error_path(loc: tuple) -> list[str]:
    """An error location as the user writes the field: boards.sx.sxm.mips."""
    # (pydantic names the branches of a union and its validators: 'literal['all']',
    # 'list[int]', 'function-after[...]'; a user's name never has brackets)
    parts = [str(p) for p in loc if not str(p).startswith(("function-", "tagged-"))
             and not re.fullmatch(r"[a-z-]+\[.*\]", str(p))]
    if len(parts) > 2 and parts[0] in _NAMED_TABLES:
        del parts[2]
    return parts


# what a field of each kind takes: the schema is strict (schema.Strict), so a value of
# another TOML type is refused, not converted (true is not 1, "1000" not a time)
_EXPECTED = {"int_type": "a whole number", "float_type": "a number",
             "string_type": "a string", "bool_type": "true or false",
             "list_type": "a list", "model_type": "a table", "dict_type": "a table"}


def _given(v) -> str:
    """A value as the user wrote it in TOML, with its type."""
    if isinstance(v, bool):
        return f"{str(v).lower()} (a boolean)"
    if isinstance(v, str):
        return f"\"{v}\" (a string)"
    if isinstance(v, float):
        return f"{v!r} (a number with a fraction)" if v != int(v) else \
            f"{v!r} (a float; write a whole number without the '.0')"
    if isinstance(v, int):
        return f"{v} (a whole number)"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a table"
    return repr(v)


def _describe(err: dict) -> str:
    loc = ".".join(_error_path(err["loc"]))
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown field (check the spelling; docs/machines.md lists the fields)"
        suggestions = [".".join(p) for p in schema_paths() if p[-1] == err["loc"][-1]]
        if suggestions:
            msg += "; did you mean " + " or ".join(suggestions) + "?"
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] in _EXPECTED:
        msg = f"expected {_EXPECTED[err['type']]}, got {_given(err['input'])}"
        if isinstance(err["input"], str) and err["type"] in ("int_type", "float_type"):
            msg += "; write a number without quotes"
    return f"{loc or '(top level)'}: {msg}"


def _models_in(annotation) -> list[type]:
    """The Strict models a field's type may hold (through Optional, Union, Annotated, list)."""
    if isinstance(annotation, type) and issubclass(annotation, Strict):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def schema_paths(model: type = None, prefix: tuple = ()) -> list[tuple]:
    """Every settable field of the machine schema as a path: ('cluster', 'nodes'),
    ('boards', '<name>', 'sxm', 'mips'), ..."""
    out = []
    for name, field in (model or Machine).model_fields.items():
        if name in ("model", "topology") and prefix:
            continue
        here = (*prefix, name)
        if typing.get_origin(field.annotation) is dict:
            here = (*here, "<name>")
        inner = _models_in(field.annotation)
        if not inner:
            out.append(here)
        for m in inner:
            out += [p for p in schema_paths(m, here) if p not in out]
    return out


def resolve_machine_path(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml" or "/" in name_or_path:
        return p
    return paths.MACHINES / f"{name_or_path}.toml"


def _unique(names: list[str]) -> str | None:
    return names[0] if len(names) == 1 else None


def _override_path(data: dict, key: str) -> list[str]:
    """Where --set KEY lands. Full paths (cluster.nodes, boards.sx.sxm.mips,
    networks.ring.rate) stand as they are; short ones are resolved in the machine:
    a board's or network's name (sx.sxm.mips), 'device.' or 'link.' for the only board
    or network, and a board's field (sxm.mips) when one board has it."""
    parts = key.split(".")
    if parts[0] in ("cluster", "guest", "disks", *_NAMED_TABLES):
        return parts
    boards = data.get("boards") if isinstance(data.get("boards"), dict) else {}
    networks = data.get("networks") if isinstance(data.get("networks"), dict) else {}
    if parts[0] in boards:
        return ["boards", *parts]
    if parts[0] in networks:
        return ["networks", *parts]
    if parts[0] == "device" and _unique(list(boards)):
        return ["boards", _unique(list(boards)), *parts[1:]]
    if parts[0] == "link" and _unique(list(networks)):
        return ["networks", _unique(list(networks)), *parts[1:]]
    having = [name for name, b in boards.items() if isinstance(b, dict) and
              parts[0] in _fields_of("boards", b.get("model"))]
    if _unique(having):
        return ["boards", having[0], *parts]
    return parts


def _fields_of(table: str, kind) -> set[str]:
    """A board model's or topology's own fields (not those every board or network has:
    'nodes' alone is cluster.nodes, not a board's nodes)."""
    from retrolink.boards import BOARDS
    from retrolink.topologies import TOPOLOGIES
    registry, base = (BOARDS, BoardBase) if table == "boards" else (TOPOLOGIES, NetworkBase)
    cls = registry.get(kind)
    return set(cls.model_fields) - set(base.model_fields) if cls else set()


def apply_overrides(data: dict, overrides: dict[str, object]) -> dict:
    """--set a.b.c=value: set a field (short names: _override_path)."""
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
        if not re.fullmatch(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", k.strip()):
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


OLD_FORM_HELP = """this machine file is in the old form ([device], [link], [[synthetic]]).
  A machine is now a graph of named networks and boards (docs/machines.md):
    [link]            ->  [networks.NET]   (same fields, e.g. topology, rate)
    [[synthetic]]     ->  [[networks.NET.synthetic]]
    [device]          ->  [boards.NAME] with network = "NET"
    [device.sxm] ...  ->  [boards.NAME.sxm] ...
  (a [device] with model = "none" is simply left out)"""


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
    if any(k in data for k in ("device", "link", "synthetic")):
        raise MachineError(f"{path}: {OLD_FORM_HELP}")
    overrides = overrides or {}
    if overrides:
        data = apply_overrides(data, overrides)
    try:
        machine = Machine.model_validate(data)
    except ValidationError as e:
        raise MachineError(_validation_message(path, data, overrides, e)) from None
    except ValueError as e:
        raise MachineError(f"{path}: {e}") from None
    problems = machine.graph_problems()
    if problems:
        sets = "".join(f" --set {k}={v}" for k, v in overrides.items())
        raise MachineError(f"{path}{' with' + sets if sets else ''}: invalid machine file:\n  "
                           + "\n  ".join(problems))
    return machine
