"""The boards, from the one list every layer reads: include/retrolink/boards.def
(docs/architecture.md, "Adding a board")."""
import re
from dataclasses import dataclass
from functools import cache

from retrolink import paths

BOARDS_DEF = paths.INCLUDE / "boards.def"
_ENTRY = re.compile(r"^RL_BOARD\(\s*([a-z][a-z0-9_]*)\s*,\s*([A-Z][A-Z0-9_]*)\s*,\s*(\d+)\s*\)")


@dataclass(frozen=True)
class BoardEntry:
    name: str        # its folder in each layer, and its protocol's name
    proto: str       # RL_PROTO_<proto>
    number: int      # the protocol's value on the wire


@cache
def board_entries() -> tuple[BoardEntry, ...]:
    entries = []
    for line in BOARDS_DEF.read_text().splitlines():
        if line.startswith("RL_BOARD("):
            m = _ENTRY.match(line)
            if not m:
                raise ValueError(f"{BOARDS_DEF}: not of the form RL_BOARD(name, PROTO, number): "
                                 f"{line!r}")
            entries.append(BoardEntry(m[1], m[2], int(m[3])))
    return tuple(entries)


def board_names() -> tuple[str, ...]:
    return tuple(e.name for e in board_entries())
