"""Boards: the interconnect hardware a node carries. Each board of the one list
(include/retrolink/boards.def, read by retrolink.registry) is a module here named after
it, which says which board models it provides: MODELS = {"model name": its class} (the
ethernet module: e1000, e100, tulip), and optionally BENCH, the name of its benchmark
(`retrolink bench NAME`, the harness retrolink.bench.NAME). Nothing else lists them."""
import importlib
from types import ModuleType
from typing import Annotated, Union

from pydantic import Field

from retrolink.boards.base import BoardBase
from retrolink.registry import board_names


def modules() -> dict[str, ModuleType]:
    """Each board's module (retrolink.boards.<name>), by its name in boards.def."""
    return {name: importlib.import_module(f"{__name__}.{name}") for name in board_names()}


def models() -> dict[str, type[BoardBase]]:
    """Every board model name (a machine file's `model = "..."`) and its class."""
    out: dict[str, type[BoardBase]] = {}
    for name, module in modules().items():
        provided = getattr(module, "MODELS", None)
        if not provided:
            raise ImportError(f"{module.__name__} (board {name} of boards.def) declares no "
                              "MODELS = {\"model name\": its board class}")
        for model, cls in provided.items():
            if model in out:
                raise ImportError(f"board model {model!r} is provided twice ({module.__name__})")
            out[model] = cls
    return out


BOARDS: dict[str, type[BoardBase]] = models()

Board = Annotated[Union[tuple(dict.fromkeys(BOARDS.values()))], Field(discriminator="model")]
