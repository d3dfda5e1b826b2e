"""The sparc32 nodes' userland (docs/sparc.md): klibc's shell and tools, and ours.

klibc comes from Debian's source package (pinned in guest/sparc/klibc.toml), built
statically for SPARC V8 with the sparc64 cross compiler (-m32 -mcpu=v8) against the
sparc32 kernel's UAPI headers. Our rltools (guest/sparc/tools/: the busybox commands the
init script needs and klibc lacks, ping, and a busybox shim for its first line) is
compiled and linked against that klibc. The build is keyed on its inputs: the pin, our
sources, the compiler and the headers' kernel.
"""
import hashlib
import os
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from retrolink import paths
from retrolink.build.debian_src import fetch_verified
from retrolink.build.sparc_kernel import CROSS, SparcKernel, compiler_version, sparc_dir
from retrolink.progress import StepFailed, run_logged, step

PIN_FILE = paths.REPO / "guest" / "sparc" / "klibc.toml"
TOOLS_DIR = paths.REPO / "guest" / "sparc" / "tools"
TOOLS = sorted(TOOLS_DIR.glob("*.c"))      # rltools.c and its commands' files
TOOL_NAMES = ("devmem", "modprobe", "rmmod", "head", "hostname", "usleep", "ip", "ping", "busybox")
# SPARC V8, the sun4m CPUs' instruction set, for klibc and our tools; klibc's own sparc
# flags (its MCONFIG) plus -mcpu=v8: the cross compiler's 32-bit default is V8+
CFLAGS = ["-Os", "-m32", "-mptr32", "-mcpu=v8"]
# klibc's static programs the image carries (usr/<dir>/static/<name>)
KLIBC_PROGRAMS = {"sh": "dash/static/sh", **{n: f"utils/static/{n}" for n in (
    "cat", "dd", "dmesg", "ln", "ls", "mkdir", "mknod", "mount", "umount", "sleep", "true",
    "false", "uname", "poweroff", "halt", "kill", "sync", "readlink", "mv", "insmod")}}


@dataclass(frozen=True)
class SparcUserland:
    programs: dict        # name in /bin -> built file
    tools: Path           # rltools, linked in /bin under each of TOOL_NAMES
    klibc: Path           # klibc's built tree, for our programs (sparc_programs.py)


def build_key(kernel: SparcKernel) -> str:
    h = hashlib.sha256()
    sources = [f.read_bytes() for f in sorted(TOOLS_DIR.iterdir())]
    for part in (PIN_FILE.read_bytes(), *sources, compiler_version().encode(),
                 kernel.release.encode(), " ".join(CFLAGS).encode()):
        h.update(part + b"\0")
    return h.hexdigest()[:16]


def klibc_make_args(kernel: SparcKernel) -> list[str]:
    return ["ARCH=sparc", "KLIBCARCH=sparc", f"CROSS_COMPILE={CROSS}",
            f"LD={CROSS}ld -m elf32_sparc", f"KLIBCKERNELSRC={kernel.headers.parent}",
            f"KLIBCOPTFLAGS={' '.join(CFLAGS)}"]


def klibc_cc_args(tree: Path, kernel: SparcKernel) -> list[str]:
    """The compiler and its flags for a file of a static program against klibc."""
    inc = tree / "usr" / "include"
    return [CROSS + "gcc", *CFLAGS, "-Wall", "-Werror", "-nostdinc", "-iwithprefix",
            "include", f"-I{inc}/arch/sparc", f"-I{inc}/bits32", f"-I{inc}",
            f"-I{kernel.headers}", "-D__KLIBC__=2", "-D__KLIBC_MINOR__=0",
            "-D_BITSIZE=32", "-D__sparc32__"]


def klibc_link(tree: Path, objects: list[Path], out: Path, log: Path) -> None:
    """Link objects into a static program as klibc links its own, and strip it."""
    run_logged([CROSS + "ld", "-m", "elf32_sparc", "-static", "-o", out,
                tree / "usr" / "klibc" / "arch" / "sparc" / "crt0.o", *objects,
                tree / "usr" / "klibc" / "libc.a"], log)
    run_logged([CROSS + "strip", out], log)


def build_tools(tree: Path, kernel: SparcKernel, out: Path, log: Path) -> None:
    """rltools, compiled and linked as klibc links its own static programs."""
    objects = []
    for source in TOOLS:
        objects.append(out.parent / f"{source.stem}.o")
        run_logged([*klibc_cc_args(tree, kernel), "-c", source, "-o", objects[-1]], log)
    klibc_link(tree, objects, out, log)


def ensure_userland(kernel: SparcKernel, log: Path) -> SparcUserland:
    pin = tomllib.loads(PIN_FILE.read_text())
    root = sparc_dir() / f"userland-{build_key(kernel)}"
    tree = root / "klibc"
    tools = root / "rltools"
    if not tools.exists():
        dsc = fetch_verified(pin["source"], sparc_dir() / "downloads", PIN_FILE,
                             f"Pick an available version with 'apt-cache showsrc klibc' and "
                             f"update {PIN_FILE}.", log)
        with step("building the sparc32 userland (klibc, rltools; first time: about 15 s of CPU)"):
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            run_logged(["dpkg-source", "--no-check", "-x", dsc, tree], log)
            run_logged(["make", f"-j{os.cpu_count() or 2}", *klibc_make_args(kernel)], log,
                       cwd=tree)
            build_tools(tree, kernel, tools.with_suffix(".tmp"), log)
            tools.with_suffix(".tmp").rename(tools)
    programs = {name: tree / "usr" / rel for name, rel in KLIBC_PROGRAMS.items()}
    missing = [str(p) for p in programs.values() if not p.is_file()]
    if missing:
        raise StepFailed(f"klibc built no {', '.join(missing)}; delete {root} to build it again")
    return SparcUserland(programs=programs, tools=tools, klibc=tree)
