"""Everything a cluster needs, built incrementally: host packages, QEMU, the guest kernel,
our own programs and modules, and the initramfs."""
import json
import os
import shutil
from pathlib import Path

from retrolink.build import bootstrap, initramfs, qemu_build
from retrolink import paths
from retrolink.build.guest_kernel import ensure_kernel
from retrolink.build.lock import build_lock
from retrolink.run.node_command import Artifacts
from retrolink.build.ours_build import build_ours
from retrolink.progress import StepFailed, say, step

# RETROLINK_NO_BUILD=1: take the last build's artifacts as they are, without the checks
# (apt, ninja) that cost a few seconds per command even when nothing changed. The test
# suite sets it for the commands it runs, once its session has built.
NO_BUILD = "RETROLINK_NO_BUILD"


def build_log() -> Path:
    return paths.build_dir() / "logs" / "build.log"


def built_record() -> Path:
    """What the last build_all made: read back under RETROLINK_NO_BUILD."""
    return paths.build_dir() / "artifacts.json"


def build_all() -> Artifacts:
    if os.environ.get(NO_BUILD, "") not in ("", "0"):
        return last_built()
    log = build_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    with build_lock():
        bootstrap.setup_host(log)
        kernel = ensure_kernel(log)
        qemu = qemu_build.build_qemu(log)
        stage = build_ours(kernel, log)
        initrd = paths.build_dir() / "initramfs.cpio"
        initramfs.assemble(kernel, stage, initrd, log)
    art = Artifacts(qemu=qemu, kernel=kernel.vmlinuz, initrd=initrd,
                    fabric=paths.fabric_binary())
    built_record().write_text(json.dumps({k: str(v) for k, v in vars(art).items()}) + "\n")
    return art


def last_built() -> Artifacts:
    record = built_record()
    try:
        art = Artifacts(**{k: Path(v) for k, v in json.loads(record.read_text()).items()})
    except (OSError, ValueError, TypeError) as e:
        raise StepFailed(f"{NO_BUILD} is set, but there is no build to take as it is "
                         f"({record}: {e}): run ./retrolink build, or unset {NO_BUILD}") from None
    missing = [str(p) for p in vars(art).values() if not p.is_file()]
    if missing:
        raise StepFailed(f"{NO_BUILD} is set, but the last build's {', '.join(missing)} "
                         f"is gone: run ./retrolink build, or unset {NO_BUILD}")
    return art
