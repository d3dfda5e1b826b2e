"""Everything a cluster needs, built incrementally: host packages, QEMU, the guest kernel,
our own programs and modules, and the initramfs."""
import shutil
from pathlib import Path

from retrolink.build import bootstrap, initramfs, qemu_build
from retrolink import paths
from retrolink.build.guest_kernel import ensure_kernel
from retrolink.build.lock import build_lock
from retrolink.run.node_command import Artifacts
from retrolink.build.ours_build import build_ours
from retrolink.progress import say, step


def build_log() -> Path:
    return paths.build_dir() / "logs" / "build.log"


def build_all() -> Artifacts:
    log = build_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    with build_lock():
        bootstrap.setup_host(log)
        kernel = ensure_kernel(log)
        qemu = qemu_build.build_qemu(log)
        stage = build_ours(kernel, log)
        initrd = paths.build_dir() / "initramfs.cpio"
        initramfs.assemble(kernel, stage, initrd, log)
    return Artifacts(qemu=qemu, kernel=kernel.vmlinuz, initrd=initrd,
                     fabric=paths.fabric_binary())
