"""The SBus cards' FCode PROMs (docs/sparc.md, "The SBus card"): each card's Forth source
(guest/sparc/fcode/<board>.fth), its @NAME@ values filled in from the board's register
header, tokenized with toke (Debian's fcode-utils) into the image QEMU maps at offset 0
of the card's slot (its `prom` property). Made on every build of a sun4m machine: a
fraction of a second, and the image is the same bytes every time."""
import re
from pathlib import Path

from retrolink import paths
from retrolink.headers import defines, string_defines
from retrolink.progress import StepFailed, run_logged

SOURCES = paths.REPO / "guest" / "sparc" / "fcode"

# The sun4m's processor interrupt level (PIL) of each SBus level (the SBus-to-PIL wiring
# of its interrupt controller: QEMU's hw/intc/slavio_intctl.c intbit_to_level, Linux's
# arch/sparc/kernel/sun4m_irq.c).
SUN4M_SBUS_PIL = {1: 2, 2: 3, 3: 5, 4: 7, 5: 9, 6: 11, 7: 13}
# The "intr" property's interrupt number of an SBus device: 0x30 (OBP's SBus class) | PIL,
# what sparc32 Linux's sun4m_build_device_irq decodes.
OBP_INT_LEVEL_SBUS = 0x30


def sbus_intr(level: int) -> int:
    """The first word of an SBus card's "intr" property for its SBus level. A real card's
    FCode gets it from OBP's `intr` word, which OpenBIOS does not implement; QEMU's own
    SBus framebuffers (OpenBIOS's drivers/tcx.fs) write the property themselves."""
    if level not in SUN4M_SBUS_PIL:
        raise StepFailed(f"SBus interrupt level {level}: an SBus card has levels 1 to 7")
    return OBP_INT_LEVEL_SBUS | SUN4M_SBUS_PIL[level]


def fc_values() -> dict[str, str]:
    """The PUMA-III card's values (regs/fc-regs.h), as its PROM source names them: numbers
    in hex (the source is tokenized in hex), strings as they are."""
    d = defines("regs/fc-regs.h")
    numbers = {n: d[n] for n in ("FC_SBUS_CTRL_OFFSET", "FC_SBUS_CHAN_OFFSET", "FC_SBUS_LEVEL",
                                 "FC_CTRL_PAGE_SIZE")}
    numbers["FC_CHAN_PAGES_SIZE"] = d["FC_CHANNELS"] * d["FC_CHAN_PAGE_SIZE"]
    numbers["FC_SBUS_INTR"] = sbus_intr(d["FC_SBUS_LEVEL"])
    return {**{n: f"{v:x}" for n, v in numbers.items()},
            "FC_SBUS_NAME": string_defines("regs/fc-regs.h")["FC_SBUS_NAME"]}


def fill(source: str, values: dict[str, str]) -> str:
    """The source with each @NAME@ replaced; a name without a value is an error."""
    def value(m: re.Match) -> str:
        if m.group(1) not in values:
            raise StepFailed(f"FCode source: no value for @{m.group(1)}@")
        return values[m.group(1)]
    return re.sub(r"@([A-Z0-9_]+)@", value, source)


def build_prom(board: str, values: dict[str, str], out_dir: Path, log: Path) -> Path:
    """guest/sparc/fcode/<board>.fth, filled and tokenized: out_dir/<board>.fcode."""
    out_dir.mkdir(parents=True, exist_ok=True)
    filled = out_dir / f"{board}.fth"
    filled.write_text(fill((SOURCES / f"{board}.fth").read_text(), values))
    out = out_dir / f"{board}.fcode"
    out.unlink(missing_ok=True)
    run_logged(["toke", "-o", str(out), str(filled)], log)
    if not out.exists() or out.read_bytes()[:1] not in (b"\xf1", b"\xfd"):
        raise StepFailed(f"toke made no FCode image of {filled} (its log: {log})")
    return out


def prom_dir() -> Path:
    return paths.build_dir() / "sparc" / "fcode"


def prom_path(name: str) -> Path:
    """Where the build puts the PROM image of that name (BoardBase.SBUS_PROM)."""
    return prom_dir() / f"{name}.fcode"


def build_proms(log: Path) -> dict[str, Path]:
    """Every SBus card's PROM, by name."""
    return {"fc": build_prom("fc", fc_values(), prom_dir(), log)}
