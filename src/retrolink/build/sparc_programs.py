"""Our guest programs for the SPARCstation 5 nodes (docs/sparc.md): those of the boards
that come as SBus cards (guest/bin/<board>/) with the libraries they use, the same
sources as the PCs', cross-built statically against klibc as rltools is (warnings are
errors), klibc's gaps filled by guest/sparc/compat/ (included first in every file).
Keyed on every file they are made from, the compiler and klibc's tree."""
import hashlib
from pathlib import Path

from retrolink import paths
from retrolink.build.sparc_kernel import SparcKernel, compiler_version
from retrolink.build.sparc_userland import SparcUserland, klibc_cc_args, klibc_link
from retrolink.progress import run_logged, step

GUEST = paths.REPO / "guest"
COMPAT = GUEST / "sparc" / "compat"
# each program's own sources and the libraries (guest/lib/<name>/) it links
PROGRAMS = {
    "fc_test": (["bin/fc/fc_test.c"], ["fc", "cli"]),
    "fc_bench": (["bin/fc/fc_bench.c"], ["fc", "cli"]),
    "fc_driver_test": (["bin/fc/fc_driver_test.c"], ["cli"]),
}


def _sources(name: str) -> list[Path]:
    own, libs = PROGRAMS[name]
    return ([GUEST / s for s in own] + [c for lib in libs
                                        for c in sorted((GUEST / "lib" / lib).glob("*.c"))]
            + [COMPAT / "klibc-compat.c"])


def build_key(userland: SparcUserland) -> str:
    h = hashlib.sha256()
    inputs = sorted({*(f for name in PROGRAMS for f in _sources(name)),
                     *(GUEST / "lib").rglob("*.h"), *paths.INCLUDE.rglob("*.h"),
                     *COMPAT.glob("*.h")})
    for f in inputs:
        h.update(str(f.relative_to(paths.REPO)).encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(compiler_version().encode() + b"\0" + str(userland.klibc).encode())
    return h.hexdigest()[:16]


def build_programs(kernel: SparcKernel, userland: SparcUserland, log: Path) -> dict[str, Path]:
    """Each program, by name: its file in the build directory."""
    out = paths.build_dir() / "sparc" / f"programs-{build_key(userland)}"
    built = {name: out / name for name in PROGRAMS}
    if all(p.exists() for p in built.values()):
        return built
    includes = [f"-I{paths.INCLUDE.parent}", f"-I{GUEST / 'lib'}", f"-I{COMPAT}",
                f"-I{userland.klibc / 'usr' / 'klibc' / 'stdio'}",     # for compat's setvbuf
                "-include", "klibc-compat.h"]
    with step("building our sparc32 programs (klibc)"):
        (out / "obj").mkdir(parents=True, exist_ok=True)
        for name in PROGRAMS:
            objects = []
            for src in _sources(name):
                obj = out / "obj" / f"{src.parent.name}-{src.stem}.o"
                if not obj.exists():
                    run_logged([*klibc_cc_args(userland.klibc, kernel), *includes,
                                f"-I{src.parent}", "-c", src, "-o", obj], log)
                objects.append(obj)
            tmp = built[name].with_suffix(".tmp")
            klibc_link(userland.klibc, objects, tmp, log)
            tmp.rename(built[name])
    return built
