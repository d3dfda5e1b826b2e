"""The boards `retrolink fuzz` knows: for each board of the one list
(include/retrolink/boards.def), its module here, retrolink.fuzz.boards.<name>, if it has
one. The module's BOARD (a BoardSpec) says the name the board is fuzzed under
(`retrolink fuzz NAME`, reproducers): ethernet.py fuzzes QEMU's e1000, as `e1000`."""
import importlib
import importlib.util

from retrolink.fuzz.spec import BoardSpec
from retrolink.registry import board_names


def specs() -> dict[str, BoardSpec]:
    """Every fuzzable board's description, by the name it is fuzzed under."""
    out: dict[str, BoardSpec] = {}
    for name in board_names():
        module = f"{__name__}.{name}"
        if importlib.util.find_spec(module) is None:
            continue                    # a board with no fuzzer description
        spec = importlib.import_module(module).BOARD
        if spec.name in out:
            raise ImportError(f"{module}: the fuzzer already has a board {spec.name!r}")
        out[spec.name] = spec
    return out


def names() -> list[str]:
    return sorted(specs())


def load(name: str) -> BoardSpec:
    """The BoardSpec of a fuzzable board (KeyError if there is none)."""
    return specs()[name]
