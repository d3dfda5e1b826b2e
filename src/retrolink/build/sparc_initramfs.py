"""The sparc32 nodes' initramfs (docs/sparc.md): klibc's shell and tools, rltools under
the names of the busybox commands it stands for, our programs (sparc_programs.py), the
init script every node boots (guest/rootfs/init), and the kernel's modules a node loads
and ours (the SBus cards' drivers, sparc_modules.py), flat in /lib/modules/<release>/
where rltools' modprobe looks. Uncompressed newc cpio with
fixed times and owners, as the x86 image (initramfs.write_cpio)."""
import shutil
from pathlib import Path

from retrolink.build.initramfs import INIT, write_cpio
from retrolink.build.sparc_kernel import SparcKernel
from retrolink.build.sparc_userland import TOOL_NAMES, SparcUserland


def assemble(kernel: SparcKernel, userland: SparcUserland, ours: dict[str, Path],
             programs: dict[str, Path], out: Path) -> Path:
    root = out.with_suffix(".root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "sbin", "proc", "sys", "dev", "run", "tmp", "etc", "root"):
        (root / d).mkdir(parents=True)
    for name, f in userland.programs.items():
        shutil.copy2(f, root / "bin" / name)
    shutil.copy2(userland.tools, root / "bin" / "rltools")
    for name, f in programs.items():
        shutil.copy2(f, root / "bin" / name)
    for name in TOOL_NAMES:
        (root / "bin" / name).symlink_to("rltools")
    shutil.copy2(INIT, root / "init")
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\n")
    modules = root / "lib" / "modules" / kernel.release
    modules.mkdir(parents=True)
    for f in [*kernel.modules.values(), *ours.values()]:
        shutil.copy2(f, modules / f.name)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_cpio(root, out)
