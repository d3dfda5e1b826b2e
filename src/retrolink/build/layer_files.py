"""What the image layers (layers.py) share: the files of installed Debian packages, copied
into a layer's tree at their paths, and the libraries (ldd) of every ELF file of the tree
that the base image does not hold."""
import os
import re
import shutil
import subprocess
from pathlib import Path

from retrolink.build.initramfs import add_libraries
from retrolink.progress import StepFailed


def package_files(package: str, leave_out: re.Pattern) -> list[Path]:
    """The files and links of an installed package, but those leave_out matches."""
    out = subprocess.run(["dpkg-query", "-L", package], capture_output=True, text=True)
    if out.returncode != 0:
        raise StepFailed(f"the Debian package {package} is not installed (deps/apt.txt)")
    return [Path(l) for l in out.stdout.splitlines()
            if l.startswith("/") and not leave_out.search(l)
            and (os.path.islink(l) or os.path.isfile(l))]


def copy_files(root: Path, files, leave_out: re.Pattern) -> None:
    """Copy the host's files under root at the same paths; a link stays a link, unless
    what it points to is left out."""
    for f in files:
        dest = root / f.relative_to("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if f.is_symlink():
            if not leave_out.search(str(f.resolve())):
                dest.unlink(missing_ok=True)
                dest.symlink_to(os.readlink(f))
        else:
            shutil.copy2(f, dest)


def is_elf(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def add_closure(root: Path, base_root: Path) -> None:
    """The libraries of every ELF file under root, but those the base image has."""
    elves = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
                   and is_elf(p))
    for elf in elves:
        add_libraries(root, elf, have=lambda lib: (base_root / lib.relative_to("/")).exists())
