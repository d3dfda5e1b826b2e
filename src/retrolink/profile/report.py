"""The instruction profile's report: the plugin's counts per block (nodeN-insns.txt)
summed per function and per category, per unit of work (--per: e.g. round trips)."""
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from retrolink.profile import steps as step_names
from retrolink.profile.categories import category
from retrolink.profile.symbols import Symbols

HEADER = "# rl-insn-profile 2"


class ProfileError(Exception):
    """The plugin's output is missing or malformed; str() says which file and why."""


@dataclass(frozen=True)
class Profile:
    windows: int
    blocks: list[tuple[int, int]]          # (vaddr, instructions counted in the block)
    # with step marks (docs/profile.md "Steps"): (from, to) -> (instructions, passes)
    segments: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    # (vaddr, step, instructions): the blocks' instructions per step
    step_blocks: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(n for _, n in self.blocks)


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
    blocks, segments, step_blocks = [], {}, []
    for n, line in enumerate(lines[3:], start=4):
        w = line.split()
        try:
            if line.startswith("#"):
                continue
            if w[0] == "step":
                segments[(int(w[1]), int(w[2]))] = (int(w[3]), int(w[4]))
            elif w[0] == "stepblock":
                a, step, i = w[1:]
                step_blocks.append((int(a, 16), int(step), int(i)))
            else:
                a, i = w
                blocks.append((int(a, 16), int(i)))
        except (ValueError, IndexError):
            raise ProfileError(f"{path} line {n}: {line!r} is not 'vaddr instructions', "
                               "'step from to instructions passes' or "
                               "'stepblock vaddr step instructions'") from None
    return Profile(windows, blocks, segments, step_blocks)


def by_function(profile: Profile, symbols: Symbols) -> dict[tuple[str, str], int]:
    """(function, module) -> instructions."""
    out: dict[tuple[str, str], int] = defaultdict(int)
    for vaddr, insns in profile.blocks:
        s = symbols.lookup(vaddr)
        out[(s.name, s.module)] += insns
    return dict(out)


def by_category(functions: dict[tuple[str, str], int]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for (name, module), n in functions.items():
        out[category(name, module)] += n
    return dict(out)


def by_step(profile: Profile, symbols: Symbols, per: int) -> dict:
    """With step marks: each pair of consecutive marks (from -> to) with its instructions
    and passes per unit of work (by the marks' numbers); and per step (the
    instructions after its mark, whatever mark ends them) the categories and the top
    functions."""
    segs = [{"from": step_names.name(a), "to": step_names.name(b),
             "instructions": n / per, "passes": p / per}
            for (a, b), (n, p) in sorted(profile.segments.items())]
    per_step: dict[int, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    for vaddr, step, insns in profile.step_blocks:
        s = symbols.lookup(vaddr)
        per_step[step][(s.name, s.module)] += insns
    steps = {}
    for step, functions in sorted(per_step.items()):
        ranked = sorted(functions.items(), key=lambda kv: (-kv[1], kv[0]))
        steps[step_names.name(step)] = {
            "instructions": sum(functions.values()) / per,
            "categories": {k: v / per for k, v in sorted(by_category(functions).items(),
                                                          key=lambda kv: (-kv[1], kv[0]))},
            "functions": [{"function": name, "module": module, "instructions": n / per}
                          for (name, module), n in ranked[:5]]}
    return {"segments": segs, "steps": steps}


def summary(profile: Profile, symbols: Symbols, per: int, top: int) -> dict:
    """The report as data (--json): totals, categories and the top functions, each in
    instructions per unit of work; with step marks, the same per step."""
    functions = by_function(profile, symbols)
    cats = by_category(functions)
    ranked = sorted(functions.items(), key=lambda kv: (-kv[1], kv[0]))
    extra = by_step(profile, symbols, per) if profile.segments else {}
    return extra | {
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
    if "segments" in s:
        lines += ["", "by step: instructions from each mark to the next (passes)"]
        for g in s["segments"]:
            lines.append(f"  {g['from'] + ' -> ' + g['to']:<40} {g['instructions']:>10,.0f}  "
                         f"({g['passes']:g})")
        lines += ["", "by step: the top categories after each mark"]
        for name, st in s["steps"].items():
            top3 = ", ".join(f"{c} {n:,.0f}" for c, n in list(st["categories"].items())[:3])
            lines.append(f"  {name:<16} {st['instructions']:>10,.0f}  {top3}")
    return "\n".join(lines)
