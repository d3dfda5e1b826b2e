"""The sparc32 guest kernel for the SPARCstation 5 nodes (docs/sparc.md).

Debian ships no sparc32 kernel: it is built from Debian's linux-source-6.1 (the x86
guests' version) with Debian's sparc64 cross compiler, which builds 32-bit kernels
(ARCH=sparc: -m32 -mcpu=v8, the kernel's own libgcc routines), with our patches
(guest/sparc/patches/: fixes of sparc32 code our drivers use) applied. The configuration
is Linux's sparc32_defconfig with guest/sparc/kernel.config merged on top.

The unpacked, patched source is kept per package version and patch set; the build
directory is keyed on everything it is made from (the package version, the patches, the
fragment, the compiler's version),
so an edit of the fragment builds a new kernel and going back finds the old one.
"""
import hashlib
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from retrolink import paths
from retrolink.progress import StepFailed, run_logged, step

SOURCE_PACKAGE = "linux-source-6.1"
SOURCE_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
CROSS = "sparc64-linux-gnu-"
FRAGMENT = paths.REPO / "guest" / "sparc" / "kernel.config"
PATCHES = paths.REPO / "guest" / "sparc" / "patches"
MAKE_ENV = {"ARCH": "sparc", "CROSS_COMPILE": CROSS}
# the modules a node loads (guest/rootfs/init): fw_cfg, for its command
MODULES = ["drivers/firmware/qemu_fw_cfg.ko"]


@dataclass(frozen=True)
class SparcKernel:
    release: str          # uname -r, where the modules go (/lib/modules/<release>)
    image: Path           # stripped vmlinux: QEMU's sun4m loads the ELF (-kernel)
    modules: dict         # path under lib/modules/<release>/kernel -> built file
    headers: Path         # the UAPI headers (usr/include), for the userland


def package_version(pkg: str) -> str:
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg], capture_output=True,
                         text=True).stdout.strip()
    if not out:
        raise StepFailed(f"the Debian package {pkg} is not installed (deps/apt-sparc.txt)")
    return out


def compiler_version() -> str:
    return subprocess.run([CROSS + "gcc", "--version"], capture_output=True,
                          text=True).stdout.splitlines()[0]


def patches() -> list[Path]:
    return sorted(PATCHES.glob("*.patch"))


def patches_key() -> str:
    h = hashlib.sha256()
    for p in patches():
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def build_key() -> str:
    h = hashlib.sha256()
    for part in (package_version(SOURCE_PACKAGE), patches_key(), compiler_version(),
                 FRAGMENT.read_bytes(), "\0".join(MODULES)):
        h.update(part.encode() if isinstance(part, str) else part)
        h.update(b"\0")
    return h.hexdigest()[:16]


def sparc_dir() -> Path:
    return paths.cache_dir() / "sparc"


def unpack_source(log: Path) -> Path:
    """Debian's tarball unpacked and patched once per package version and patch set: its
    tree."""
    version = package_version(SOURCE_PACKAGE)
    root = sparc_dir() / f"linux-source-{version}-{patches_key()}"
    tree = root / "linux-source-6.1"
    if not (tree / "Makefile").exists():
        with step(f"unpacking {SOURCE_PACKAGE} {version} and applying guest/sparc/patches"):
            tmp = root.with_name(root.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            run_logged(["tar", "-xf", SOURCE_TARBALL, "-C", tmp], log)
            for p in patches():
                run_logged(["patch", "-p1", "--forward", "--batch", "-i", p], log,
                           cwd=tmp / "linux-source-6.1")
            shutil.rmtree(root, ignore_errors=True)
            tmp.rename(root)
    return tree


def configure(tree: Path, build: Path, log: Path) -> None:
    """sparc32_defconfig with the fragment merged; a setting the fragment asks for that
    the result does not have (a missing dependency, a misspelt name) is an error."""
    run_logged(["make", "-s", f"O={build}", "sparc32_defconfig"], log, cwd=tree, env=MAKE_ENV)
    run_logged([tree / "scripts" / "kconfig" / "merge_config.sh", "-m", "-O", build,
                build / ".config", FRAGMENT], log, cwd=tree, env=MAKE_ENV)
    run_logged(["make", "-s", f"O={build}", "olddefconfig"], log, cwd=tree, env=MAKE_ENV)
    have = set((build / ".config").read_text().splitlines())
    for line in FRAGMENT.read_text().splitlines():
        line = line.strip()
        if not line.startswith("CONFIG_"):
            continue
        name, value = line.split("=", 1)
        want = f"# {name} is not set" if value == "n" else line
        if want not in have and not (value == "n" and not any(
                h.startswith(name + "=") for h in have)):
            raise StepFailed(f"{FRAGMENT}: {line} is not in the configured kernel "
                             f"({build / '.config'}): a dependency is missing or the name is wrong")


def ensure_sparc_kernel(log: Path) -> SparcKernel:
    tree = unpack_source(log)
    build = sparc_dir() / f"kernel-{build_key()}"
    image = build / "vmlinux.stripped"
    if not image.exists():
        jobs = str(os.cpu_count() or 2)
        with step("building the sparc32 guest kernel (first time: about 5 min on 2 cores, docs/sparc.md)"):
            build.mkdir(parents=True, exist_ok=True)
            if not (build / ".config").exists():
                configure(tree, build, log)
            run_logged(["make", "-s", f"-j{jobs}", f"O={build}", "vmlinux", "modules",
                        "headers"], log, cwd=tree, env=MAKE_ENV)
            run_logged([CROSS + "strip", "-o", image.with_suffix(".tmp"), build / "vmlinux"], log)
            image.with_suffix(".tmp").rename(image)
    elif not (build / "usr" / "include" / "linux").is_dir():
        run_logged(["make", "-s", f"O={build}", "headers"], log, cwd=tree, env=MAKE_ENV)
    release = (build / "include" / "config" / "kernel.release").read_text().strip()
    modules = {}
    for m in MODULES:
        f = build / m
        if not f.exists():
            raise StepFailed(f"the sparc32 kernel built no {m}: check {FRAGMENT}")
        modules[m] = f
    return SparcKernel(release=release, image=image, modules=modules,
                       headers=build / "usr" / "include")
