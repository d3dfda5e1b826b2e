"""What a machine with SPARCstation 5 (sun4m) nodes needs besides the x86 build
(docs/sparc.md): the cross toolchain's Debian packages, QEMU's sparc target, the sparc32
kernel, our modules, its userland and our programs, the initramfs, the SBus cards' FCode PROMs. Built only for such a machine, each step cached
under the cache directory and keyed on its inputs, so the x86 build never waits for it."""
from dataclasses import dataclass
from pathlib import Path

from retrolink import paths
from retrolink.build import bootstrap, fcode, qemu_build, sparc_initramfs
from retrolink.build.jobs import Background
from retrolink.build.lock import build_lock
from retrolink.build.sparc_kernel import ensure_sparc_kernel
from retrolink.build.sparc_modules import build_modules
from retrolink.build.sparc_programs import build_programs
from retrolink.build.sparc_userland import ensure_userland

APT_LIST = paths.REPO / "deps" / "apt-sparc.txt"


@dataclass(frozen=True)
class SparcArtifacts:
    qemu: Path
    kernel: Path
    initrd: Path


def build_sparc(log: Path) -> SparcArtifacts:
    with build_lock():
        bootstrap.apt_install(bootstrap.package_list(APT_LIST), log)
        # QEMU's sparc target beside the kernel: the two long poles
        qemu_job = Background(qemu_build.build_qemu, log, "sparc")
        try:
            kernel = ensure_sparc_kernel(log)
            userland = ensure_userland(kernel, log)
            ours = build_modules(kernel, log)
            programs = build_programs(kernel, userland, log)
            initrd = sparc_initramfs.assemble(kernel, userland, ours, programs,
                                              paths.build_dir() / "sparc" / "initramfs.cpio")
            fcode.build_proms(log)      # where node_command finds them (fcode.prom_path)
            qemu = qemu_job.result()
        except BaseException:
            qemu_job.stop()
            raise
    return SparcArtifacts(qemu=qemu, kernel=kernel.image, initrd=initrd)
