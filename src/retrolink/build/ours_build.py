"""Build what is ours (fabric, guest userland, guest kernel modules) with the top-level meson."""
import json
import os
import shutil
import subprocess
from pathlib import Path

from retrolink import paths
from retrolink.build.guest_kernel import GuestKernel
from retrolink.build.lock import build_lock
from retrolink.progress import run_logged, step


def meson() -> str:
    venv_meson = paths.REPO / ".venv" / "bin" / "meson"
    return str(venv_meson) if venv_meson.exists() else "meson"


def guest_folders() -> list[str]:
    """The folders the guest's meson files look for (fs.is_dir: a board's module,
    library or programs): a new or removed one needs meson to configure again, which
    ninja cannot know."""
    return sorted(str(p.relative_to(paths.REPO)) for p in (paths.REPO / "guest").glob("*/*")
                  if p.is_dir())


def build_ours(kernel: GuestKernel, log: Path, beside_qemu: bool = False) -> Path:
    """Configure (once), compile (incrementally) and stage the guest files; return the
    staging root whose usr/ and lib/ go into the initramfs. beside_qemu: QEMU is built
    from scratch meanwhile, the long pole: the compilers here take a lower priority
    (nice), so that QEMU's single-threaded steps (its configure) keep a core."""
    build = paths.build_dir()
    options = {"kernel_headers": str(kernel.headers)}
    stamp = build / "retrolink-options.json"
    configured = {**options, "folders": guest_folders()}
    if not (build / "build.ninja").exists():
        with step("configuring retrolink's own build (meson)"):
            run_logged([meson(), "setup", build, paths.REPO, "--prefix=/usr",
                        *[f"-D{k}={v}" for k, v in options.items()]], log)
    elif not stamp.exists() or json.loads(stamp.read_text()) != configured:
        with step("configuring retrolink's own build again (options or folders changed)"):
            run_logged([meson(), "setup", "--reconfigure", build, paths.REPO,
                        *[f"-D{k}={v}" for k, v in options.items()]], log)
    stamp.write_text(json.dumps(configured))
    dry = subprocess.run(["ninja", "-C", build, "-n"], capture_output=True, text=True)
    todo = sum(1 for l in dry.stdout.splitlines() if l.startswith("["))
    if todo:
        with step(f"building fabric, guest programs and modules ({todo} steps)"):
            run_logged([*(["nice", "-n", "5"] if beside_qemu else []), "ninja", "-C", build],
                       log)
    stage = build / "guest-root"
    shutil.rmtree(stage, ignore_errors=True)
    run_logged([meson(), "install", "-C", build, "--no-rebuild", "--quiet",
                "--destdir", stage], log)
    return stage


def build_fabric_variant(name: str, options: dict, target: str, cc: str | None,
                         log: Path) -> Path:
    """A host-only build of the fabric in build/variants/<name> (sanitizers, fuzzing):
    configured once with the given meson options and compiler; returns target's path."""
    build = paths.build_dir() / "variants" / name
    with build_lock():          # test workers may ask for the same variant at once
        if not (build / "build.ninja").exists():
            shutil.rmtree(build, ignore_errors=True)
            env = {"CC": cc} if cc else None
            with step(f"configuring the fabric's {name} build"):
                run_logged([meson(), "setup", build, paths.REPO, "-Dguest=false",
                            *[f"-D{k}={v}" for k, v in options.items()]], log, env=env)
        with step(f"building the fabric's {name} build"):
            run_logged(["ninja", "-C", build, target], log)
    return build / target
