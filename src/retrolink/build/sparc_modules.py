"""Our kernel modules for the SPARCstation 5 nodes (docs/sparc.md): the drivers of the
boards that come as SBus cards, built from the same sources as the PCs' (guest/kernel/
<module>/, whose Kbuild picks each card's probe by the bus the kernel has) against the
sparc32 kernel's build tree, with the cross compiler, by the same script (guest/kernel/
kbuild.sh: warnings are errors). Kbuild's own make is the incremental check."""
from pathlib import Path

from retrolink import paths
from retrolink.build.sparc_kernel import MAKE_ENV, SparcKernel
from retrolink.progress import run_logged, step

# the modules of the boards with an SBus card (BoardBase.SBUS_DEVICE)
MODULES = ("fc",)
KBUILD = paths.REPO / "guest" / "kernel" / "kbuild.sh"


def build_modules(kernel: SparcKernel, log: Path) -> dict[str, Path]:
    """Each module's .ko, by name."""
    out_dir = paths.build_dir() / "sparc" / "modules"
    out_dir.mkdir(parents=True, exist_ok=True)
    built = {}
    with step("building our sparc32 kernel modules"):
        for name in MODULES:
            src = paths.REPO / "guest" / "kernel" / name
            files = sorted(str(f) for f in src.iterdir()
                           if f.suffix in (".c", ".h") or f.name == "Kbuild")
            ko = out_dir / f"{name}.ko"
            run_logged(["sh", str(KBUILD), str(kernel.image.parent), str(paths.INCLUDE.parent),
                        str(out_dir / f"{name}-kbuild"), str(ko), *files], log, env=MAKE_ENV)
            built[name] = ko
    return built
