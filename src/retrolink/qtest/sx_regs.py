"""The SX register map for tests, read from include/retrolink/regs/sx-regs.h (the one definition)."""
import re

from retrolink import paths

_DEFINE = re.compile(r"^#define\s+(SX_[A-Z0-9_]+)\s+(.+?)\s*(/\*.*)?$")


def load() -> dict[str, int]:
    values: dict[str, int] = {}
    for line in (paths.INCLUDE / "regs" / "sx-regs.h").read_text().splitlines():
        m = _DEFINE.match(line)
        if not m or "(" in m.group(1):
            continue
        expr = m.group(2).replace("u <<", " <<").replace("u)", ")")
        if re.fullmatch(r"[0-9A-Za-z_ ()<>*+x]+", expr):
            try:
                values[m.group(1)] = eval(expr, {}, dict(values))  # trusted header, plain ints
            except (NameError, SyntaxError):
                pass
    return values


R = type("SxRegs", (), load())
