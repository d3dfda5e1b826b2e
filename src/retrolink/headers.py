"""Plain #define constants of the shared C headers (include/retrolink/), read from the
headers themselves so that Python never restates a C value."""
import functools
import re

from retrolink import paths

_DEFINE = re.compile(r"^#define\s+([A-Z][A-Z0-9_]+)\s+(.+?)\s*(/\*.*)?$")


@functools.cache
def defines(*headers: str) -> dict[str, int]:
    """The integer #defines of the given headers (paths under include/retrolink/), in
    order; a define may use earlier ones. Function-like macros are skipped."""
    return _integers("\n".join((paths.INCLUDE / h).read_text() for h in headers))


@functools.cache
def string_defines(*headers: str) -> dict[str, str]:
    """The string #defines (#define NAME "text") of the given headers."""
    text = "\n".join((paths.INCLUDE / h).read_text() for h in headers)
    return dict(re.findall(r'^#define\s+([A-Z][A-Z0-9_]+)\s+"([^"\\]*)"', text, re.M))


@functools.cache
def guest_defines(header: str) -> dict[str, int]:
    """The same of a header of the guest's own code (a path under guest/, e.g. a
    module's header that is no contract with the host)."""
    return _integers((paths.REPO / "guest" / header).read_text())


def _integers(text: str) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in text.splitlines():
        m = _DEFINE.match(line)
        if not m or "(" in m.group(1):
            continue
        # integer suffixes (1u, 1ull) are C's, not Python's
        expr = re.sub(r"\b(0x[0-9A-Fa-f]+|[0-9]+)[uUlL]+\b", r"\1", m.group(2))
        if re.fullmatch(r"[0-9A-Za-z_ ()<>*+x|]+", expr):
            try:
                values[m.group(1)] = eval(expr, {}, dict(values))  # trusted header, plain ints
            except (NameError, SyntaxError):
                pass
    return values
