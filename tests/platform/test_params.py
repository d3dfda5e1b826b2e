"""Components describe themselves: each board's and topology's parameters are declared once
(schema.param); the docs tables come from those declarations. Every board's declared
parameters (qemu=...) against the QEMU that is built: the property's default is the
declared one, QEMU takes each declared limit, and refuses just past it where it has a
limit of its own (the others are listed below, with what QEMU does instead). Each board is
started as a run starts it (its qemu_args), on a fake fabric, under qtest. For every
board of include/retrolink/boards.def. (The topologies: tests/fabric/test_topology_params.py.)"""
import re

import pytest

from retrolink import paths, registry, wire
from retrolink.boards import BOARDS, modules
from retrolink.model.describe import components, docs_tables
from retrolink.model.schema import Param, params
from retrolink.qtest.client import Qtest, QtestError
from retrolink.qtest.fake_fabric import FakeFabric


def test_the_docs_tables_are_the_declared_ones():
    doc = (paths.REPO / "docs" / "machines.md").read_text()
    assert docs_tables() in doc, "run `retrolink params --write-docs`"


@pytest.mark.parametrize("title,cls", components(), ids=[t for t, _ in components()])
def test_every_parameter_has_a_unit_and_a_source(title, cls):
    for p in params(cls):
        assert p.unit and p.source, f"{title}: {p.name} declares no unit or no source"


def test_a_board_sets_exactly_its_declared_properties():
    from retrolink.model.machine import load_machine
    m = load_machine("sure-sx")
    args = m.boards["sx"].qemu_args(0, 3, paths.REPO / "f.sock", 0)
    props = dict(kv.split("=", 1) for kv in args[1].split(",")[1:])
    assert props.pop("node") == "0" and props.pop("fabric") and props.pop("network") == "0"
    assert props == {p.qemu: str(p.default if not isinstance(p.default, float)
                                 else repr(p.default)) for p in params(BOARDS["sx"])}


# (board, parameter, "low" or "high"): QEMU has no limit of its own there
QEMU_TAKES_MORE = {
    ("sx", "sxm.mips", "low"): "QEMU takes any speed above 0",
    ("sx", "sxm.mips", "high"): "QEMU takes up to 10^6 MIPS",
    ("sx", "sxm.send_insns", "high"): "any count (it is only multiplied by the time of one)",
    ("sx", "sxm.recv_insns", "high"): "any count",
    ("sx", "sxm.confirm_insns", "high"): "any count",
    ("sx", "sxm.confirm_timeout_us", "high"): "any timeout above 0",
    ("sx", "pm_bus.channel_rate", "high"): "any rate above 0",
}


def board_model(board: str):
    """The board's first model, as a machine file would have it."""
    model, cls = next(iter(modules()[board].MODELS.items()))
    return cls(model=model, network="net")


def qemu_argv(board: str, sock, props: dict[str, str] | None = None,
              drop: tuple = (), device_id: str | None = None) -> list[str]:
    """The board's QEMU arguments as a run gives them, with some of its declared properties
    set to other values, some left out (QEMU's default then), and an id on its -device."""
    argv = board_model(board).qemu_args(0, 2, sock, 0)
    props = props or {}
    assert all(any(f",{k}=" in a for a in argv) for k in props), (props, argv)
    out = []
    for option, arg in zip(["", *argv], argv):
        if option in ("-device", "-netdev"):
            parts = [p for p in arg.split(",") if p.split("=", 1)[0] not in drop]
            arg = ",".join(f"{k}={props[k]}" if (k := p.split("=", 1)[0]) in props else p
                           for p in parts)
            if option == "-device" and device_id:
                arg += f",id={device_id}"
        out.append(arg)
    return out


class Started:
    """QEMU with the board on a fake fabric; ok: QEMU took its arguments."""

    def __init__(self, qemu, tmp_path, argv_of_sock, qmp=False):
        sock = tmp_path / "fabric.sock"
        sock.unlink(missing_ok=True)
        self.log = tmp_path / "qemu.log"
        self.fabric = FakeFabric(sock, 2, 1_000_000, lambda m: [wire.grant(0, wire.NEVER)])
        self.q = None
        try:
            self.q = Qtest(qemu, argv_of_sock(sock), self.log, timeout=30, qmp=qmp)
            self.q.clock_step(1000)         # past machine-init-done: realize is over
            self.ok = True
        except QtestError:
            self.ok = False

    def close(self) -> str:
        if self.q is not None and self.ok:
            self.q.close()
        self.fabric.stop()
        return self.log.read_text(errors="replace")


def qemu_takes(qemu, tmp_path, board: str, prop: str, value: str) -> tuple[bool, str]:
    s = Started(qemu, tmp_path, lambda sock: qemu_argv(board, sock, {prop: value}))
    log = s.close()
    return s.ok, log


def text(p: Param, v) -> str:
    """A value as qemu_props writes it."""
    return repr(float(v)) if p.type == "float" else str(int(v))


def limits(p: Param):
    """(side, at the limit, just past it) for each declared limit; just past is None when
    no value is there (below 0 for an unsigned property)."""
    out = []
    for side, bound in (("low", p.low), ("high", p.high)):
        if not bound:
            continue
        op, number = bound.split()
        lim = float(number)
        if p.type == "float":
            at = lim if op != ">" else lim * 1.5
            past = {">=": lim / 2, ">": lim, "<=": lim * 1.5}[op]
        else:
            lim = int(lim)
            at, past = {">=": (lim, lim - 1), ">": (lim + 1, lim), "<=": (lim, lim + 1)}[op]
            past = None if past < 0 else past
        out.append((side, at, past))
    return out


def declared(board: str) -> list[Param]:
    cls = next(iter(modules()[board].MODELS.values()))
    return [p for p in params(cls) if p.qemu]


BOARD_NAMES = registry.board_names()


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_qemu_defaults_are_the_declared_ones(artifacts, tmp_path, board):
    ps = declared(board)
    assert ps, f"{board} declares no QEMU property"
    if board == "ethernet":
        # the netdev's options have no QOM object to read: their defaults are in
        # net_init_retrolink, `o->has_x ? o->x : DEFAULT`
        source = (paths.REPO / "qemu/net/retrolink-net.c").read_text()
        qemu = {m.group(1).replace("_", "-"): m.group(2) for m in
                re.finditer(r"o->has_(\w+) \? o->\w+ : (\d+)", source)}
    else:
        # the device started without the declared properties, its values read back
        s = Started(artifacts.qemu, tmp_path,
                    lambda sock: qemu_argv(board, sock, drop=tuple(p.qemu for p in ps),
                                           device_id="dut"), qmp=True)
        try:
            assert s.ok, s.log.read_text()
            qemu = {}
            for p in ps:
                r = s.q.qmp("qom-get", path="/machine/peripheral/dut", property=p.qemu)
                assert "return" in r, (p.qemu, r)
                qemu[p.qemu] = r["return"]
        finally:
            s.close()
    wrong = [f"{p.name}: declared {p.default_text()}, {p.qemu} defaults to {qemu.get(p.qemu)}"
             for p in ps if p.qemu not in qemu or float(qemu[p.qemu]) != float(p.default)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("board", BOARD_NAMES)
def test_qemu_takes_the_declared_limits_and_refuses_past_them(artifacts, tmp_path, board):
    problems = []
    listed = {k for k in QEMU_TAKES_MORE if k[0] == board}
    for p in declared(board):
        for side, at, past in limits(p):
            ok, log = qemu_takes(artifacts.qemu, tmp_path, board, p.qemu, text(p, at))
            if not ok:
                problems.append(f"{p.name} = {text(p, at)} (its {side} limit): QEMU refuses: "
                                + log.strip()[-200:])
            if past is None:
                continue
            ok, log = qemu_takes(artifacts.qemu, tmp_path, board, p.qemu, text(p, past))
            key = (board, p.name, side)
            listed.discard(key)
            if ok and key not in QEMU_TAKES_MORE:
                problems.append(f"{p.name} = {text(p, past)} (past its {side} limit): QEMU "
                                "takes it; give QEMU that limit or list it in QEMU_TAKES_MORE")
            if not ok and key in QEMU_TAKES_MORE:
                problems.append(f"{p.name} = {text(p, past)}: QEMU refuses it now; take it "
                                f"out of QEMU_TAKES_MORE ({log.strip()[-200:]})")
    problems += [f"QEMU_TAKES_MORE lists {k}, which is no declared limit" for k in listed]
    assert not problems, "\n".join(problems)
