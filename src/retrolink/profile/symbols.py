"""Guest code addresses to function names: the kernel's System.map moved by the boot's
KASLR offset (the guest's own `_text`), and the loaded modules' symbols as the guest's
/proc/kallsyms lists them."""
import bisect
import re
from dataclasses import dataclass
from pathlib import Path

# the first address of the kernel's half of the x86-64 address space
KERNEL_SPACE = 0xFFFF800000000000
USER_SPACE = "[user space]"

# a line of /proc/kallsyms or System.map: address, type, name, optional [module]
SYMBOL_LINE = re.compile(r"^([0-9a-f]{8,16}) ([A-Za-z]) (\S+)(?:\s+\[(\S+)\])?$")
TEXT_TYPES = set("tTwW")


@dataclass(frozen=True)
class Symbol:
    address: int
    name: str
    module: str         # "" for the kernel itself


class SymbolError(Exception):
    """The guest's symbols could not be read; str() says what is missing."""


class Symbols:
    """Sorted text symbols; lookup gives the function an address falls in."""

    def __init__(self, symbols: list[Symbol]):
        self.symbols = sorted(symbols, key=lambda s: s.address)
        self.addresses = [s.address for s in self.symbols]

    def lookup(self, address: int) -> Symbol:
        if address < KERNEL_SPACE:
            return Symbol(0, USER_SPACE, "")
        i = bisect.bisect_right(self.addresses, address) - 1
        if i < 0:
            return Symbol(0, f"[kernel {address:#x}]", "")
        return self.symbols[i]


def parse_lines(lines) -> list[tuple[int, str, str, str]]:
    out = []
    for line in lines:
        m = SYMBOL_LINE.match(line.strip())
        if m:
            out.append((int(m[1], 16), m[2], m[3], m[4] or ""))
    return out


def load(system_map: Path, guest_lines: list[str]) -> Symbols:
    """system_map: the guest kernel's; guest_lines: the guest's kallsyms lines for `_text`
    and for every module's text (what profile_dump_script prints)."""
    guest = parse_lines(guest_lines)
    text = [a for a, _, name, mod in guest if name == "_text" and not mod]
    if not text:
        raise SymbolError("the guest printed no `_text` line of /proc/kallsyms: its kernel "
                          "symbols cannot be placed")
    try:
        kernel = parse_lines(system_map.read_text().splitlines())
    except OSError as e:
        raise SymbolError(f"cannot read the guest kernel's System.map ({system_map}): "
                          f"{e.strerror}") from None
    linked = [a for a, _, name, _ in kernel if name == "_text"]
    if not linked:
        raise SymbolError(f"{system_map} has no `_text`")
    slide = text[0] - linked[0]
    symbols = [Symbol(a + slide, name, "") for a, t, name, _ in kernel if t in TEXT_TYPES]
    symbols += [Symbol(a, name, mod) for a, t, name, mod in guest if mod and t in TEXT_TYPES]
    return Symbols(symbols)


def dump_script() -> str:
    """Shell lines that print, prefixed KSYM, the kallsyms lines load() needs: the kernel's
    `_text` and the modules' text symbols (the kernel's own come from System.map)."""
    return ("awk '($3 == \"_text\" && NF == 3) || (NF == 4 && $2 ~ /^[tTwW]$/)' "
            "/proc/kallsyms | sed 's/^/KSYM /'")
