"""The building blocks of the machine schema, shared by the cluster, every board and every
topology: strict tables, and the limits that hold for every field of a kind (so QEMU and
the fabric never see a value they would refuse or overflow on; docs/machines.md)."""
import re
from dataclasses import dataclass
from typing import Annotated, Any, Iterator

import annotated_types
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticUndefined

from retrolink.model import units


class Strict(BaseModel):
    # allow_inf_nan: a float field never takes inf or nan (QEMU and the fabric refuse them)
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


# a rate in bytes/s, written as a number, "12.5MB/s" or "100Mb/s"
Rate = Annotated[int, BeforeValidator(units.parse_rate), Field(gt=0, le=units.MAX_RATE)]
# a time in ns is at most an hour of virtual time (sums of a few never overflow 64 bits)
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


def param(default=PydanticUndefined, *, unit: str, source: str, qemu: str | None = None,
          **limits):
    """A board's or a topology's parameter, declared once: default, limits (ge, le, gt),
    unit and source. The docs tables (`retrolink params`) and the QEMU properties a board
    sets (`qemu`: the property name) come from this declaration (`params` below; the
    tables: model/describe.py)."""
    extra = {"unit": unit, "source": source}
    if qemu:
        extra["qemu"] = qemu
    return Field(default, json_schema_extra=extra, **limits)


# fields that place a component rather than parametrise it
STRUCTURAL = {"model", "topology", "network", "nodes", "synthetic"}


@dataclass(frozen=True)
class Param:
    name: str            # dotted: sxm.mips
    type: str
    default: Any         # PydanticUndefined: required
    low: str             # "" when unbounded
    high: str
    unit: str
    source: str
    qemu: str | None

    @property
    def required(self) -> bool:
        return self.default is PydanticUndefined

    def default_text(self) -> str:
        return "required" if self.required else _number(self.default)


def _number(x) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


def _bounds(metadata) -> tuple[str, str]:
    low = high = ""
    for m in metadata:
        if isinstance(m, annotated_types.Ge):
            low = f">= {_number(m.ge)}"
        elif isinstance(m, annotated_types.Gt):
            low = f"> {_number(m.gt)}"
        elif isinstance(m, annotated_types.Le):
            high = f"<= {_number(m.le)}"
    return low, high


def params(model: type[BaseModel], prefix: str = "") -> Iterator[Param]:
    """Every parameter of a board or topology class, sub-tables flattened (sxm.mips)."""
    for name, f in model.model_fields.items():
        if not prefix and name in STRUCTURAL:
            continue
        if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
            yield from params(f.annotation, f"{prefix}{name}.")
            continue
        extra = f.json_schema_extra or {}
        low, high = _bounds(f.metadata)
        yield Param(f"{prefix}{name}", getattr(f.annotation, "__name__", str(f.annotation)),
                    f.default, low, high, extra.get("unit", ""), extra.get("source", ""),
                    extra.get("qemu"))


def value(obj: BaseModel, dotted: str):
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj
