"""The instruction profile's report: the plugin's counts per block (nodeN-insns.txt)
summed per function and per category, per unit of work (--per: e.g. round trips)."""
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from retrolink.profile.categories import category
from retrolink.profile.symbols import Symbols

HEADER = "# rl-insn-profile 1"


class ProfileError(Exception):
    """The plugin's output is missing or malformed; str() says which file and why."""


@dataclass(frozen=True)
class Profile:
    windows: int
    blocks: list[tuple[int, int, int]]     # (vaddr, instructions, executions)

    @property
    def total(self) -> int:
        return sum(n * e for _, n, e in self.blocks)


def read(path: Path) -> Profile:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        raise ProfileError(f"{path} was not written: the node's QEMU did not exit normally "
                           "(its log beside it says why)") from None
    if not lines or lines[0] != HEADER:
        raise ProfileError(f"{path}: not the instruction profile's output (first line "
                           f"{lines[0] if lines else '(empty)'!r})")
    try:
        windows = int(lines[1].split()[2])
    except (IndexError, ValueError):
        raise ProfileError(f"{path} line 2: {lines[1] if len(lines) > 1 else '(missing)'!r} "
                           "is not '# windows N marks M'") from None
    blocks = []
    for n, line in enumerate(lines[3:], start=4):
        try:
            a, i, e = line.split()
            blocks.append((int(a, 16), int(i), int(e)))
        except ValueError:
            raise ProfileError(f"{path} line {n}: {line!r} is not 'vaddr insns executions'") from None
    return Profile(windows, blocks)


def by_function(profile: Profile, symbols: Symbols) -> dict[tuple[str, str], int]:
    """(function, module) -> instructions."""
    out: dict[tuple[str, str], int] = defaultdict(int)
    for vaddr, insns, execs in profile.blocks:
        s = symbols.lookup(vaddr)
        out[(s.name, s.module)] += insns * execs
    return dict(out)


def by_category(functions: dict[tuple[str, str], int]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for (name, module), n in functions.items():
        out[category(name, module)] += n
    return dict(out)


def summary(profile: Profile, symbols: Symbols, per: int, top: int) -> dict:
    """The report as data (--json): totals, categories and the top functions, each in
    instructions per unit of work."""
    functions = by_function(profile, symbols)
    cats = by_category(functions)
    ranked = sorted(functions.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "windows": profile.windows, "per": per,
        "instructions": profile.total / per,
        "categories": {k: v / per for k, v in sorted(cats.items(), key=lambda kv: -kv[1])},
        "functions": [{"function": name, "module": module, "instructions": n / per,
                       "category": category(name, module)}
                      for (name, module), n in ranked[:top]],
    }


def format_table(s: dict, mips: float) -> str:
    per = s["per"]
    total = s["instructions"]
    unit = "unit of work" if per == 1 else f"1/{per} of the windows"
    lines = [f"instructions per {unit}: {total:,.0f} ({total / mips:.1f} us at {mips:g} MIPS), "
             f"{s['windows']} window(s)", "", "by category"]
    for name, n in s["categories"].items():
        lines.append(f"  {name:<34} {n:>10,.0f}  {100 * n / total:5.1f} %")
    lines += ["", f"top {len(s['functions'])} functions"]
    for f in s["functions"]:
        where = f" [{f['module']}]" if f["module"] else ""
        lines.append(f"  {f['function'] + where:<44} {f['instructions']:>10,.0f}  "
                     f"{f['category']}")
    return "\n".join(lines)
