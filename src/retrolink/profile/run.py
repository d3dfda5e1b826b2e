"""`retrolink run --insn-profile N`: the profiled node's command also prints the symbols
the report needs; after the run, the report for each profiled node."""
import json
from pathlib import Path

from retrolink.profile import report, symbols

# the line between the command's output and the symbol lines; the command may print it
# too, so the output ends at its last occurrence
SYMBOLS_FOLLOW = "@@retrolink kallsyms"


def wrap_script(script: str) -> str:
    """The command, then (whatever its status, which stays the node's) the symbol lines."""
    return (f"(\n{script}\n)\nrl_status=$?\necho '{SYMBOLS_FOLLOW}'\n"
            f"{symbols.dump_script()}\nexit $rl_status")


def split_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    """A profiled node's output: (the command's lines, the symbol lines). A node whose
    output has no marker (it stopped before the dump) has no symbol lines."""
    if SYMBOLS_FOLLOW not in lines:
        return lines, []
    last = len(lines) - 1 - lines[::-1].index(SYMBOLS_FOLLOW)
    return lines[:last], lines[last + 1:]


def node_report(run_dir: Path, node: int, sym_lines: list[str], per: int, mips: float,
                top: int = 25) -> str:
    """The report's text; its data goes to nodeN-insns.json beside the plugin's counts."""
    prof = report.read(run_dir / f"node{node}-insns.txt")
    syms = symbols.load(sym_lines)
    s = report.summary(prof, syms, per, top)
    (run_dir / f"node{node}-insns.json").write_text(json.dumps(s, indent=1) + "\n")
    return report.format_table(s, mips)
