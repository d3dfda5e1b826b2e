"""Build QEMU from the pinned Debian source package with qemu/ overlaid.

The source tree and build live in the cache (one per pinned version, shared by every
checkout); hw/retrolink in that tree is a symlink to this checkout's qemu/, so
editing a device file only recompiles that file and relinks QEMU.

Variants (VARIANTS) are further builds of the same tree with the same configure arguments
plus their own, each in its own build directory: 'asan' (AddressSanitizer + UBSan, for
`retrolink fuzz` and the device tests) is built only when something asks for it.
"""
import hashlib
import json
import os
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

from retrolink import paths
from retrolink.build.debian_src import fetch_verified, version_dir_name
from retrolink.build.jobs import Background
from retrolink.progress import StepFailed, run_logged, say, step

PIN_FILE = paths.QEMU_OVERLAY / "upstream.toml"


def load_pin() -> dict:
    return tomllib.loads(PIN_FILE.read_text())


def qemu_root(pin=None) -> Path:
    pin = pin or load_pin()
    return paths.cache_dir() / "qemu" / version_dir_name(pin["source"]["version"])


@dataclass(frozen=True)
class Variant:
    build_dir: str          # under qemu_root()
    configure: tuple        # added to the pin's configure arguments
    what: str               # for progress lines
    first_build: str        # how long a first build takes, for progress lines
    targets: tuple = ()     # built beside the binary (paths in the build dir)
    binary: str = "qemu-system-x86_64"


INSN_PROFILE_PLUGIN = "hw/retrolink/librl-insn-profile.so"   # qemu/plugins/insn-profile.c
VARIANTS = {
    # TCG plugins: the instruction profile (qemu/plugins/, docs/profile.md); no cost
    # while none is loaded
    "release": Variant("build", ("--enable-plugins",), "QEMU", "about 2 min on 2 cores",
                       (INSN_PROFILE_PLUGIN,)),
    # the pin's --disable-debug-info undone: sanitizer reports name file and line
    "asan": Variant("build-asan", ("--enable-asan", "--enable-ubsan", "--enable-debug-info"),
                    "QEMU with ASan/UBSan", "about 7 min on 2 cores"),
    # the SPARCstation 5 (sun4m) nodes' QEMU: the same tree and patches, the sparc target
    # with its own device set (retrolink-devices-sparc.mak), built only for a machine
    # with sun4m nodes (docs/sparc.md)
    "sparc": Variant("build-sparc", ("--target-list=sparc-softmmu",
                                     "--with-devices-sparc=retrolink"),
                     "QEMU for sun4m", "about 3 min on 2 cores, docs/sparc.md",
                     binary="qemu-system-sparc"),
}

# each target's device set, linked into QEMU's configs/devices/ as retrolink.mak
DEVICE_SETS = {"x86_64-softmmu": "retrolink-devices.mak",
               "sparc-softmmu": "retrolink-devices-sparc.mak"}


def qemu_build_dir(pin=None, variant: str = "release") -> Path:
    return qemu_root(pin) / VARIANTS[variant].build_dir


def qemu_binary(pin=None, variant: str = "release") -> Path:
    return qemu_build_dir(pin, variant) / VARIANTS[variant].binary


def fetch_and_verify(pin: dict, log: Path) -> Path:
    """Download the pinned source package (once) and check every file's sha256."""
    hint = (f"The pinned version may have been superseded; pick an available 10.0.x with\n"
            f"  'apt-cache showsrc qemu' and update {PIN_FILE}.")
    return fetch_verified(pin["source"], paths.cache_dir() / "qemu" / "downloads", PIN_FILE,
                          hint, log)


PATCHES = paths.QEMU_OVERLAY / "patches"
PATCH_STAMP = "retrolink-patches.sha256"


def our_patches() -> list[Path]:
    return sorted(PATCHES.glob("*.patch"))


def patches_digest() -> str:
    """One hash over our patches' names and contents: the tree must match it."""
    h = hashlib.sha256()
    for p in our_patches():
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def extract(dsc: Path, tree: Path, log: Path) -> None:
    """dpkg-source -x applies Debian's patch series (hashes were checked above), then
    ours from qemu/patches/ (fixes to QEMU itself, each explaining why)."""
    tmp = tree.with_name(tree.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    with step("unpacking QEMU source and Debian's patches"):
        run_logged(["dpkg-source", "--no-check", "-x", dsc, tmp], log)
    for p in our_patches():
        try:
            run_logged(["patch", "-p1", "--batch", "--forward", "-d", tmp, "-i", p], log)
        except StepFailed as e:
            raise StepFailed(f"{p.name} does not apply to QEMU {tree.parent.name}: "
                             f"rebase it on that source (see {log})") from e
    (tmp / PATCH_STAMP).write_text(patches_digest())
    tmp.rename(tree)


def tree_is_current(tree: Path) -> bool:
    stamp = tree / PATCH_STAMP
    return (tree / "VERSION").exists() and stamp.exists() and \
        stamp.read_text() == patches_digest()


def apply_overlay(tree: Path, pin: dict) -> None:
    """Link qemu/ into the tree as hw/retrolink, include/retrolink/ (the headers shared
    with fabric and guest) as include/retrolink, and hook them into Kconfig/meson.
    Idempotent; re-pointing the links at another checkout makes ninja rebuild only ours."""
    links = [(tree / "hw" / "retrolink", paths.QEMU_OVERLAY),
             (tree / "include" / "retrolink", paths.INCLUDE)]
    links += [(tree / "configs" / "devices" / target / "retrolink.mak", paths.QEMU_OVERLAY / mak)
              for target, mak in DEVICE_SETS.items()]
    for link, target in links:
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    for file, line in ((tree / "hw" / "meson.build", "subdir('retrolink')"),
                       (tree / "hw" / "Kconfig", "source retrolink/Kconfig")):
        text = file.read_text()
        if line not in text.splitlines():
            file.write_text(text.rstrip("\n") + "\n" + line + "\n")


OVERLAY_STAMP = "retrolink-overlay.sha256"


def overlay_digest() -> str:
    """The content of qemu/ and include/retrolink/ (names and bytes), whichever
    checkout they are in."""
    h = hashlib.sha256()
    for root in (paths.QEMU_OVERLAY, paths.INCLUDE):
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            h.update(str(f.relative_to(paths.REPO)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def forget_overlay_objects(build: Path, digest: str) -> None:
    """Ninja decides by file times, but the overlay can be another checkout's (the
    hw/retrolink link is re-pointed by whichever checkout builds) with older files than
    the objects: when the overlay's content is not what the objects were built from,
    remove them (and the generated trace files) so ninja builds them again."""
    stamp = build / OVERLAY_STAMP
    if stamp.exists() and stamp.read_text() == digest:
        return
    for f in build.rglob("*hw_retrolink*"):
        if f.is_file():
            f.unlink()


# QEMU's configure needs a newer meson than Debian 12 has; it gets its own venv in the
# cache so that the QEMU build does not depend on any one checkout's .venv.
BUILD_PYTHON_PACKAGES = ["meson==1.8.2", "pycotap==1.3.1"]


def build_python(root: Path, log: Path) -> Path:
    venv = root / "python"
    stamp = venv / "retrolink-packages"
    if not stamp.exists() or stamp.read_text() != " ".join(BUILD_PYTHON_PACKAGES):
        with step("preparing QEMU's build Python (meson, pycotap)"):
            run_logged(["python3", "-m", "venv", "--clear", venv], log)
            run_logged([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check",
                        *BUILD_PYTHON_PACKAGES], log)
        stamp.write_text(" ".join(BUILD_PYTHON_PACKAGES))
    return venv / "bin"


def configure_args(pin: dict, variant: str = "release") -> list[str]:
    return list(pin["build"]["configure"]) + list(VARIANTS[variant].configure)


def build_qemu(log: Path, variant: str = "release", host_ready=lambda: None) -> Path:
    """Make sure the pinned QEMU with our devices is built (as the given variant of
    VARIANTS); return the binary. host_ready() returns once the host's packages are
    installed (the build may start before: the source download needs apt alone)."""
    pin = load_pin()
    root = qemu_root(pin)
    v = VARIANTS[variant]
    tree, build = root / "src", qemu_build_dir(pin, variant)
    root.mkdir(parents=True, exist_ok=True)
    # the build Python (pip) needs neither the source nor the host's packages
    python_job = Background(build_python, root, log)
    try:
        if not tree_is_current(tree):
            if tree.exists():
                # unpacked files keep their archive times, so ninja would not see the
                # change: start the tree and every build of it over (one full build each)
                say("QEMU patches in qemu/patches/ changed: unpacking QEMU again")
                shutil.rmtree(tree)
                for other in VARIANTS:
                    shutil.rmtree(qemu_build_dir(pin, other), ignore_errors=True)
            dsc = fetch_and_verify(pin, log)
            host_ready()
            extract(dsc, tree, log)
        host_ready()
        venv_bin = python_job.result()
    except BaseException:
        python_job.stop()
        raise
    apply_overlay(tree, pin)
    stamp = build / "retrolink-configure.json"
    want = {"args": configure_args(pin, variant), "python": str(venv_bin)}
    if not (build / "build.ninja").exists() or not stamp.exists() \
            or json.loads(stamp.read_text()) != want:
        shutil.rmtree(build, ignore_errors=True)
        build.mkdir(parents=True)
        with step(f"configuring {v.what} (minimal device set + retrolink devices)"):
            run_logged([tree / "configure", f"--python={venv_bin / 'python3'}",
                        *want["args"]], log, cwd=build,
                       env={"PATH": f"{venv_bin}:{os.environ['PATH']}"})
        stamp.write_text(json.dumps(want))
    binary = build / v.binary
    digest = overlay_digest()
    forget_overlay_objects(build, digest)
    run_ninja(build, binary, v, log)
    # only after a build that succeeded: the objects are now those of this overlay
    (build / OVERLAY_STAMP).write_text(digest)
    return binary


def run_ninja(build: Path, binary: Path, v, log: Path) -> None:
    """Bring the binary up to date, quietly when there is little or nothing to do."""
    jobs = str(os.cpu_count() or 2)
    # meson regenerates build.ninja first when its inputs changed (e.g. the device set):
    # then ninja -n below counts the real work, not just the regeneration
    run_logged(["ninja", "-C", build, "build.ninja"], log)
    # ninja -n tells how much work there is, for the progress bar and to stay quiet when none
    targets = [v.binary, *v.targets]
    dry = subprocess.run(["ninja", "-C", build, "-n", *targets],
                         capture_output=True, text=True)
    todo = sum(1 for l in dry.stdout.splitlines() if l.startswith("["))
    if todo == 0 and binary.exists() and all((build / t).exists() for t in v.targets):
        return
    if todo <= 10 and binary.exists():
        # ninja -n always lists qemu-version.h and what depends on it, which a real
        # run skips (restat): run it quietly and only say something if QEMU relinked
        before = binary.stat().st_mtime_ns
        run_logged(["ninja", "-C", build, "-j", jobs, *targets], log)
        if binary.stat().st_mtime_ns != before:
            say(f"{v.what} relinked with the changed device files")
        return
    title = f"building {v.what} (first time: {v.first_build})" if todo > 100 else \
        f"rebuilding {v.what} ({todo} steps)"
    with step(title):
        run_logged(["ninja", "-C", build, "-j", jobs, *targets], log,
                   progress_total=todo, progress_marker="[", desc=v.what)
