"""Benchmarks: definitions in bench/*.toml, programs in guest/, harnesses and reports here.

The benchmarks `retrolink bench NAME` runs come from one place: each board of
include/retrolink/boards.def names its benchmark in its module (BENCH in
src/retrolink/boards/<board>.py), and PLATFORM names the platform's own. The harness of
benchmark NAME is the module retrolink.bench.NAME, with HELP (a line for the command's
help) and main(args, overrides, sweeps) -> int, which checks its options and machines
before it builds or boots anything (bench/harness.py has what the harnesses share). A
board whose harness is not written yet (its module is missing) has no benchmark."""
import importlib
from types import ModuleType

PLATFORM = ("fabric", "boot", "mpi")


def names() -> list[str]:
    """The boards' benchmarks in the registry's order, then the platform's."""
    from retrolink import boards
    return [m.BENCH for m in boards.modules().values() if getattr(m, "BENCH", None)] + \
        list(PLATFORM)


def harnesses() -> dict[str, ModuleType]:
    """Each benchmark's harness module, by its name."""
    return {name: importlib.import_module(f"{__name__}.{name}") for name in names()}
