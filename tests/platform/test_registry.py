"""include/retrolink/boards.def is the one list of boards (docs/architecture.md, "Adding a
board"): the wire protocols, the board models, the fuzzer's boards, the benchmarks and the
command's choices all come from it. A board added there, with its modules, appears in each
of them and nothing else has to be edited; and every command of the docs checks its
arguments before it builds anything."""
import importlib
import signal
import sys
import textwrap

import pytest

import retrolink.bench
import retrolink.boards
import retrolink.fuzz.boards
from retrolink import cli, registry, wire

FAKE_MODULES = {
    "boards": '''
        from typing import ClassVar, Literal
        from retrolink.boards.base import BoardBase

        class FakeBoard(BoardBase):
            model: Literal["fakeboard", "fakeboard2"]
            PROTOCOL: ClassVar[str] = "fakeboard"

        MODELS = {"fakeboard": FakeBoard, "fakeboard2": FakeBoard}
        BENCH = "fakebench"
    ''',
    "bench": '''
        HELP = "the fake board's benchmark"
        calls = []

        def main(args, overrides, sweeps):
            calls.append((args.which, overrides, sweeps))
            return 42
    ''',
    "fuzz": '''
        from retrolink.fuzz.spec import BoardSpec

        BOARD = BoardSpec(name="fakefuzz", device="fake-device", pci_id=(0x1234, 0x5678),
                          registers=(), properties=lambda rng: {})
    ''',
}
PACKAGES = {"boards": retrolink.boards, "bench": retrolink.bench, "fuzz": retrolink.fuzz.boards}
MODULE_NAMES = {"boards": "fakeboard", "bench": "fakebench", "fuzz": "fakeboard"}


def _reload_wire():
    registry.board_entries.cache_clear()
    importlib.reload(wire)


@pytest.fixture
def fake_board(tmp_path, monkeypatch):
    """boards.def with one more line, and the new board's module, benchmark harness and
    fuzzer description where the registries look for them."""
    boards_def = tmp_path / "boards.def"
    boards_def.write_text(registry.BOARDS_DEF.read_text()
                          + "RL_BOARD(fakeboard, FAKEBOARD, 99)   /* a test's */\n")
    monkeypatch.setattr(registry, "BOARDS_DEF", boards_def)
    for layer, package in PACKAGES.items():
        folder = tmp_path / layer
        folder.mkdir()
        (folder / f"{MODULE_NAMES[layer]}.py").write_text(textwrap.dedent(FAKE_MODULES[layer]))
        monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
    _reload_wire()
    yield
    monkeypatch.undo()
    for layer, package in PACKAGES.items():
        sys.modules.pop(f"{package.__name__}.{MODULE_NAMES[layer]}", None)
    _reload_wire()


@pytest.fixture
def cli_main():
    """cli.main, with the signal handlers it installs put back afterwards."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    yield cli.main
    for s, h in saved.items():
        signal.signal(s, h)


def test_a_board_in_boards_def_is_a_board_everywhere(fake_board, cli_main):
    assert registry.board_names()[-1] == "fakeboard"
    assert wire.PROTOCOLS["fakeboard"] == 99
    models = retrolink.boards.models()
    assert models["fakeboard"] is models["fakeboard2"]
    assert models["fakeboard"].__module__ == "retrolink.boards.fakeboard"
    assert retrolink.fuzz.boards.load("fakefuzz").device == "fake-device"
    assert retrolink.bench.names()[-4:] == ["fakebench", "fabric", "boot", "mpi"]
    parser = cli.make_parser()
    assert parser.parse_args(["fuzz", "fakefuzz"]).board == "fakefuzz"
    assert parser.parse_args(["bench", "fakebench"]).which == "fakebench"
    harness = retrolink.bench.harnesses()["fakebench"]
    assert cli_main(["bench", "fakebench", "--set", "x.y=3", "--sweep", "a=1,2"]) == 42
    assert harness.calls == [("fakebench", {"x.y": 3}, [("a", [1, 2])])]


def test_without_the_line_there_is_no_such_board():
    assert "fakeboard" not in wire.PROTOCOLS and "fakeboard" not in retrolink.boards.BOARDS
    with pytest.raises(SystemExit):
        cli.make_parser().parse_args(["bench", "fakebench"])


def test_the_registries_agree_with_boards_def():
    names = registry.board_names()
    assert set(wire.PROTOCOLS) == {"any", *names}
    assert list(retrolink.boards.modules()) == list(names)
    for name, module in retrolink.boards.modules().items():
        for model, cls in module.MODELS.items():
            assert cls.PROTOCOL == name, f"board model {model}: PROTOCOL {cls.PROTOCOL!r}"
            assert retrolink.boards.BOARDS[model] is cls
    assert retrolink.fuzz.boards.names() == ["cenju3", "cpci", "e1000", "fc", "puma2", "sx",
                                             "via"]
    assert retrolink.bench.names() == ["sx", "net", "puma3", "cenju3", "puma2", "via",
                                       "interconnects", "fabric", "boot", "mpi"]


@pytest.fixture
def no_build(monkeypatch):
    """Building (QEMU, the ASan QEMU) fails the test: arguments are checked before it."""
    def refuse(*a, **k):
        raise AssertionError("built before the arguments were checked")
    monkeypatch.setattr("retrolink.build.pipeline.build_all", refuse)
    monkeypatch.setattr("retrolink.fuzz.cli.asan_qemu", refuse)


@pytest.mark.parametrize("name", retrolink.bench.names())
def test_every_benchmark_checks_its_settings_before_building(name, no_build, cli_main, capsys):
    assert cli_main(["bench", name, "--quick", "--set", "nonsense=1"]) == 2
    assert "nonsense: unknown field" in capsys.readouterr().err
    assert cli_main(["bench", name, "--set", "cluster.nodes=0"]) == 2
    assert "cluster.nodes" in capsys.readouterr().err
    # only sx and puma2 sweep; a sweep value is checked as a --set is
    assert cli_main(["bench", name, "--sweep", "cluster.nodes=3,0"]) == 2
    err = capsys.readouterr().err
    assert ("cluster.nodes" if name in ("sx", "puma2")
            else f"bench {name} takes no --sweep") in err, err


def test_demo_checks_its_settings_before_building(no_build, cli_main, capsys):
    assert cli_main(["demo", "--set", "sxm.mips=0"]) == 2
    assert "sxm.mips" in capsys.readouterr().err


@pytest.mark.parametrize("name", retrolink.fuzz.boards.names())
def test_every_fuzzed_board_checks_its_arguments_before_building(name, no_build, cli_main,
                                                                  tmp_path, capsys):
    assert cli_main(["fuzz", name, "--seed", "x"]) == 2
    assert "--seed takes N" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert cli_main(["fuzz", name, "--replay", str(bad)]) == 2
    assert "is not a reproducer" in capsys.readouterr().err
