"""The Python topology classes (src/retrolink/topologies/) declare the fabric's keys with
the fabric's defaults and limits: a machine file is refused by the schema exactly when the
fabric would refuse its network. Checked for the Ethernet topologies, whose keys the C code
defines (fabric/topo/eth_framing.c, hub.c, ethernet_switch.c)."""
import re

import pytest
from fakenode import check_config
from pydantic import ValidationError

from retrolink import paths
from retrolink.topologies import TOPOLOGIES
from retrolink.topologies.ethernet import TOPO_PARAM_MAX

SOURCES = {"hub": ["eth_framing.c", "hub.c"],
           "ethernet_switch": ["eth_framing.c", "ethernet_switch.c"]}
RATES = {"hub": 12_500_000, "ethernet_switch": 125_000_000}


def c_keys(kind: str) -> dict[str, int | None]:
    """Each key the fabric's topology reads, with its default (None: required), from the
    sources: topo_param(..., "key", required, &lvalue, ...) and `lvalue = N;`."""
    text = "\n".join((paths.REPO / "fabric" / "topo" / f).read_text() for f in SOURCES[kind])
    out = {}
    for key, required, lvalue in re.findall(
            r'topo_param\(keys, vals, n, used, "(\w+)", (true|false), &([\w>.-]+),', text):
        if required == "true":
            out[key] = None
            continue
        field = lvalue.split("->")[-1]
        m = re.search(rf"\w+->{re.escape(field)} = (\d+);", text)
        out[key] = int(m.group(1)) if m else 0      # calloc'd: 0 unless set
    # the default propagation time is eth_framing_configure's argument
    out["prop_ns"] = int(re.search(r"eth_framing_configure\(&\w+->eth, (\d+),", text).group(1))
    return out


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_keys_and_defaults_are_the_fabric_s(kind):
    cls = TOPOLOGIES[kind]
    py = {name: (None if f.is_required() else f.default) for name, f in cls.model_fields.items()
          if name not in ("topology", "synthetic")}
    assert py == c_keys(kind)


def python_accepts(kind: str, params: dict) -> bool:
    try:
        net = TOPOLOGIES[kind](topology=kind, **params)
    except ValidationError:
        return False
    return not net.check(4)


def candidates(kind: str) -> list[tuple[str, int]]:
    """Values around each key's limits, the fabric's and ours."""
    out = []
    for key in c_keys(kind):
        for v in {0, 1, 2, 16, 17, 64, 4096, 4097, 65536, 65537, TOPO_PARAM_MAX,
                  TOPO_PARAM_MAX + 1, 2880, 2881, 10**9, 10**11}:
            out.append((key, v))
    return out


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_schema_refuses_exactly_what_the_fabric_refuses(kind, fabric_binary, tmp_path):
    disagree = []
    for key, value in candidates(kind):
        params = {"rate": RATES[kind], key: value}
        line = " ".join(f"{k}={v}" for k, v in params.items())
        r = check_config(fabric_binary, tmp_path, f"nodes 4\ntopology {kind} {line}\n")
        fabric_ok = r.returncode == 0
        if fabric_ok != python_accepts(kind, params):
            disagree.append(f"{key}={value}: fabric {'accepts' if fabric_ok else 'refuses'} "
                            f"({r.stderr.strip()[-120:]})")
    assert not disagree, "\n".join(disagree)
