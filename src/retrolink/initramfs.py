"""Assemble the guest initramfs: busybox-static, the init script, our modules and
programs, and any extra Debian tools (copied with their shared libraries).

The archive is uncompressed newc cpio (fast to boot under TCG) with every mtime and
owner fixed, so the same inputs give a byte-identical image.
"""
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from . import paths
from .guest_kernel import GuestKernel
from .progress import StepFailed, run_logged

BUSYBOX = Path("/bin/busybox")
INIT = paths.REPO / "guest-userland" / "rootfs" / "init"
# kernel modules of the Debian image that the init script loads
IMAGE_MODULES = ["kernel/drivers/firmware/qemu_fw_cfg.ko"]


def shared_libraries(binary: Path) -> list[Path]:
    """The shared libraries (and loader) a dynamically linked host binary needs."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            libs.append(Path(m.group(1)))
    return libs


def add_host_tool(root: Path, tool: Path) -> None:
    """Copy a Debian tool and its libraries into the image at the same paths."""
    for f in [tool, *shared_libraries(tool)]:
        dest = root / f.relative_to("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f.resolve(), dest)


def assemble(kernel: GuestKernel, stage: Path, out: Path, log: Path, extra_tools=()) -> Path:
    if not BUSYBOX.exists():
        raise StepFailed(f"{BUSYBOX} missing: install busybox-static")
    root = out.with_suffix(".root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "run", "tmp", "etc",
              "root", "lib/modules/extra", "lib/modules/retrolink"):
        (root / d).mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, root / "bin" / "busybox")
    shutil.copy2(INIT, root / "init")
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\n")
    (root / "etc" / "profile").write_text('PS1="$(hostname)# "\nexport PATH=/usr/bin:/bin:/usr/sbin:/sbin\n')
    for rel in IMAGE_MODULES:
        src = kernel.modules / rel
        if not src.exists():
            raise StepFailed(f"guest kernel module {src} not found in the image package")
        shutil.copy2(src, root / "lib" / "modules" / "extra" / src.name)
    if stage.exists():
        shutil.copytree(stage, root, dirs_exist_ok=True, symlinks=True)
    for tool in extra_tools:
        add_host_tool(root, Path(tool))
    for p in [root, *root.rglob("*")]:
        os.utime(p, (0, 0), follow_symlinks=False)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    tmp = out.with_suffix(".tmp")
    # cpio reads the file names on stdin
    with open(tmp, "wb") as f:
        proc = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc", "--reproducible", "-R", "0:0"],
                              input=("\n".join(files) + "\n").encode(), cwd=root, stdout=f,
                              stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise StepFailed(f"cpio failed: {proc.stderr.decode(errors='replace')}")
    tmp.replace(out)
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
