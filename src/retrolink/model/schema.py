"""The building blocks of the machine schema, shared by the cluster, every board and every
topology: strict tables, and the limits that hold for every field of a kind (so QEMU and
the fabric never see a value they would refuse or overflow on; docs/machines.md)."""
import re
from typing import Annotated

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
    sets (`qemu`: the property name) come from this declaration (src/retrolink/describe.py)."""
    extra = {"unit": unit, "source": source}
    if qemu:
        extra["qemu"] = qemu
    return Field(default, json_schema_extra=extra, **limits)
