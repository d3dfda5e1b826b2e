"""Guest code addresses to function names, from the text symbols of the kernel and its
loaded modules as the guest's /proc/kallsyms lists them."""
import bisect
import re
from dataclasses import dataclass

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


def load(guest_lines: list[str]) -> Symbols:
    """The guest's text symbols, kernel and modules, from the kallsyms lines its node
    printed (dump_script). Debian's System.map is a stub (the real one is in the -dbg
    package), so the kernel's own come from the running guest too, where they already
    carry the boot's KASLR offset."""
    symbols = [Symbol(a, name, mod) for a, t, name, mod in parse_lines(guest_lines)
               if t in TEXT_TYPES]
    if not any(s.name == "_text" and not s.module for s in symbols):
        raise SymbolError("the guest printed no `_text` line of /proc/kallsyms: its kernel "
                          "symbols are missing (was /proc/kallsyms readable?)")
    return Symbols(symbols)


def dump_script() -> str:
    """A shell line that prints the kallsyms lines load() needs: every text symbol of the
    kernel and its modules (a few MB through the result port, once)."""
    return "awk '$2 ~ /^[tTwW]$/' /proc/kallsyms"
