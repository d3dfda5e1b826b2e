"""Components describe themselves: each board's and topology's parameters are declared once
(schema.param); the docs tables come from those declarations, and the defaults QEMU's
device and netdev use must be the declared ones."""
import re

import pytest
from helpers import device_defaults

from retrolink import paths
from retrolink.boards import BOARDS
from retrolink.model.describe import components, docs_tables
from retrolink.model.schema import params


def test_the_docs_tables_are_the_declared_ones():
    doc = (paths.REPO / "docs" / "machines.md").read_text()
    assert docs_tables() in doc, "run `retrolink params --write-docs`"


@pytest.mark.parametrize("title,cls", components(), ids=[t for t, _ in components()])
def test_every_parameter_has_a_unit_and_a_source(title, cls):
    for p in params(cls):
        assert p.unit and p.source, f"{title}: {p.name} declares no unit or no source"


def test_the_sx_device_defaults_are_the_declared_ones(artifacts):
    qemu_props = device_defaults(artifacts.qemu, "retrolink-sx")
    sx = [p for p in params(BOARDS["sx"]) if p.qemu]
    assert sx
    for p in sx:
        assert p.qemu in qemu_props, f"retrolink-sx has no property {p.qemu} ({p.name})"
        if qemu_props[p.qemu] is not None:
            assert qemu_props[p.qemu] == p.default_text(), p.name
    # the one string property (a float) takes its default in realize
    assert 's->sxm_mips_str = g_strdup("1.9")' in (paths.REPO / "qemu/sx/sx.c").read_text()


def test_the_netdev_defaults_are_the_declared_ones():
    source = (paths.REPO / "qemu/net/retrolink-net.c").read_text()
    defaults = {m.group(1).replace("_", "-"): m.group(2) for m in
                re.finditer(r"o->has_(\w+) \? o->\w+ : (\d+)", source)}
    for p in params(BOARDS["e1000"]):
        assert p.qemu in defaults, f"retrolink-net.c sets no default for {p.qemu}"
        assert defaults[p.qemu] == p.default_text(), p.name


def test_a_board_sets_exactly_its_declared_properties():
    from retrolink.model.machine import load_machine
    m = load_machine("sure-sx")
    args = m.boards["sx"].qemu_args(0, 3, paths.REPO / "f.sock", 0)
    props = dict(kv.split("=", 1) for kv in args[1].split(",")[1:])
    assert props.pop("node") == "0" and props.pop("fabric") and props.pop("network") == "0"
    assert props == {p.qemu: str(p.default if not isinstance(p.default, float)
                                 else repr(p.default)) for p in params(BOARDS["sx"])}
