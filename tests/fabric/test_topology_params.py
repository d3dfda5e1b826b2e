"""The Python topology classes (src/retrolink/topologies/) declare the fabric's keys with
the fabric's defaults and limits, for every topology: a machine file is refused by the
schema when the fabric would refuse its network, and the fabric takes every declared
limit and refuses just past it, where it has a limit of its own (FABRIC_TAKES_MORE lists
where it has none, with what it does instead). The keys and defaults are read from the
C code of each topology (fabric/topo/<file>.c, the one that names it, and
eth_framing.c for the Ethernet ones); the limits from `retrolink-fabric --check`."""
import re

import pytest
from fakenode import check_config
from pydantic import ValidationError

from retrolink import paths
from retrolink.headers import defines
from retrolink.model.schema import params
from retrolink.topologies import TOPOLOGIES
from retrolink.topologies.ethernet import TOPO_PARAM_MAX

TOPO = paths.REPO / "fabric" / "topo"
# the value each required key takes when another key is probed
REQUIRED = {"rate": 12_500_000, "station_delay_ns": 100, "stage_delay_ns": 250}
RATES = {"ethernet_switch": 125_000_000}
# (kind, key, "low" or "high"): the fabric has no limit of its own there; the schema's
# keeps a machine file within what the model means
FABRIC_TAKES_MORE = {
    **{(kind, "mtu", side): "any frame length (frames longer than the mtu are dropped)"
       for kind in ("p2p", "token_ring", "switch", "min") for side in ("low", "high")},
    **{(kind, "overhead_bytes", "high"): "up to 10^12 bytes of framing"
       for kind in ("p2p", "token_ring", "switch", "min")},
    ("token_ring", "token_bytes", "low"): "a token of 0 bytes",
    ("token_ring", "token_bytes", "high"): "up to 10^12",
    ("switch", "bb_credit", "high"): "up to 10^12 credits",
    ("switch", "rrdy_bytes", "high"): "up to 10^12",
}


def sources(kind: str) -> list[str]:
    """The C files of a topology: the one whose ops name it, and what it configures with."""
    (main,) = [f for f in sorted(TOPO.glob("*.c")) if f'.name = "{kind}"' in f.read_text()]
    text = main.read_text()
    return ([(TOPO / "eth_framing.c").read_text()] if "eth_framing_configure(" in text
            else []) + [text]


def c_keys(kind: str) -> dict[str, int | None]:
    """Each key the fabric's topology reads, with its default (None: required), from the
    sources: topo_param(..., "key", required, &lvalue, ...) and `lvalue = VALUE;`, where
    VALUE is a number or a sum of the shared headers' constants."""
    text = "\n".join(sources(kind))
    constants = defines(*re.findall(r'#include "retrolink/([\w/.-]+\.h)"', text))
    out = {}
    for key, required, lvalue in re.findall(
            r'topo_param\(keys, vals, n, used, "(\w+)", (true|false), &([\w>.-]+),', text):
        if required == "true":
            out[key] = None
            continue
        field = lvalue.split("->")[-1]
        m = re.search(rf"\w+->{re.escape(field)} = ([0-9A-Z_ +]+);", text)
        out[key] = eval(m.group(1), {}, dict(constants)) if m else 0   # calloc'd: 0 unless set
    # the Ethernet topologies' default propagation time is eth_framing_configure's argument
    prop = re.search(r"eth_framing_configure\(&\w+->eth, (\d+),", text)
    if prop:
        out["prop_ns"] = int(prop.group(1))
    return out


@pytest.mark.parametrize("kind", sorted(TOPOLOGIES))
def test_keys_and_defaults_are_the_fabric_s(kind):
    cls = TOPOLOGIES[kind]
    py = {name: (None if f.is_required() else f.default) for name, f in cls.model_fields.items()
          if name not in ("topology", "synthetic")}
    assert py == c_keys(kind)


def stations(kind: str) -> int:
    return 2 if kind == "p2p" else 4


def base(kind: str) -> dict:
    """The required keys, at values every topology takes."""
    return {k: RATES.get(kind, v) if k == "rate" else v for k, v in REQUIRED.items()
            if k in c_keys(kind) and c_keys(kind)[k] is None}


def python_accepts(kind: str, values: dict) -> bool:
    try:
        net = TOPOLOGIES[kind](topology=kind, **values)
    except ValidationError:
        return False
    return not net.check(stations(kind))


def declared_limits(kind: str) -> dict[str, list[tuple[str, int, int]]]:
    """Each key's declared limits: (side, the limit's value, the value just past it)."""
    out = {}
    for p in params(TOPOLOGIES[kind]):
        for side, bound in (("low", p.low), ("high", p.high)):
            if bound:
                op, number = bound.split()
                lim = int(float(number))
                at, past = {">=": (lim, lim - 1), ">": (lim + 1, lim), "<=": (lim, lim + 1)}[op]
                out.setdefault(p.name, []).append((side, at, past))
    return out


def candidates(kind: str) -> list[tuple[str, int]]:
    """Values around each key's limits, the fabric's and ours."""
    limits = declared_limits(kind)
    out = []
    for key in c_keys(kind):
        near = {v for _, at, past in limits.get(key, []) for v in (at, past) if v >= 0}
        for v in sorted({0, 1, 2, 16, 17, 64, 4096, 4097, 65536, 65537, TOPO_PARAM_MAX,
                         TOPO_PARAM_MAX + 1, 2880, 2881, 10**9, 10**11} | near):
            out.append((key, v))
    return out


def fabric_accepts(fabric_binary, tmp_path, kind: str, values: dict) -> tuple[bool, str]:
    line = " ".join(f"{k}={v}" for k, v in values.items())
    r = check_config(fabric_binary, tmp_path,
                     f"nodes {stations(kind)}\ntopology {kind} {line}\n")
    return r.returncode == 0, r.stderr.strip()[-160:]


def side_refused(kind: str, key: str, value: int) -> str | None:
    """The declared limit that refuses the value ("low" or "high"), if one does."""
    for side, at, past in declared_limits(kind).get(key, []):
        if (side == "low" and value < at) or (side == "high" and value > at):
            return side
    return None


@pytest.mark.parametrize("kind", sorted(TOPOLOGIES))
def test_schema_refuses_exactly_what_the_fabric_refuses(kind, fabric_binary, tmp_path):
    disagree = []
    listed_used = set()
    for key, value in candidates(kind):
        values = {**base(kind), key: value}
        fabric_ok, why = fabric_accepts(fabric_binary, tmp_path, kind, values)
        if fabric_ok == python_accepts(kind, values):
            continue
        side = side_refused(kind, key, value)
        if fabric_ok and (kind, key, side) in FABRIC_TAKES_MORE:
            listed_used.add((kind, key, side))
            continue
        disagree.append(f"{key}={value}: fabric {'accepts' if fabric_ok else 'refuses'} "
                        f"({why}), the schema {'refuses' if fabric_ok else 'accepts'}")
    stale = [k for k in FABRIC_TAKES_MORE if k[0] == kind and k not in listed_used]
    disagree += [f"FABRIC_TAKES_MORE lists {k}, but the fabric refuses past it" for k in stale]
    assert not disagree, "\n".join(disagree)


@pytest.mark.parametrize("kind", sorted(TOPOLOGIES))
def test_the_fabric_takes_every_declared_limit(kind, fabric_binary, tmp_path):
    refused = []
    for key, limits in declared_limits(kind).items():
        for side, at, _ in limits:
            ok, why = fabric_accepts(fabric_binary, tmp_path, kind, {**base(kind), key: at})
            if not ok and python_accepts(kind, {**base(kind), key: at}):
                refused.append(f"{key}={at} (its {side} limit): {why}")
    assert not refused, "\n".join(refused)
