"""The guest kernel: Debian bookworm's linux-image-amd64 and the exactly matching headers.

The ABI (e.g. 6.1.0-56) is resolved from the package index at build time, because
security updates replace it; the image package is downloaded and unpacked into the
cache (not installed on the host), the headers package is installed on the host so
Kbuild can build our modules against it.
"""
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from retrolink.build import bootstrap
from retrolink import paths
from retrolink.progress import StepFailed, run_logged, step

META_PACKAGE = "linux-image-amd64"


@dataclass(frozen=True)
class GuestKernel:
    abi: str              # "6.1.0-56-amd64"
    vmlinuz: Path
    modules: Path         # lib/modules/<abi> of the unpacked image
    headers: Path         # /usr/src/linux-headers-<abi>


def resolve_abi(log: Path) -> str:
    """The flavour-qualified ABI that linux-image-amd64 depends on right now."""
    def query():
        out = subprocess.run(["apt-cache", "depends", META_PACKAGE], capture_output=True,
                             text=True).stdout
        m = re.search(r"Depends: linux-image-(\d+\.\d+\.\d+-\d+-amd64)\b", out)
        return m.group(1) if m else None
    abi = query()
    if abi is None:
        run_logged(["apt-get", "update", "-q"], log)
        abi = query()
    if abi is None:
        raise StepFailed(f"cannot resolve the guest kernel: 'apt-cache depends {META_PACKAGE}' "
                         "names no linux-image-<abi>-amd64; check the apt sources (bookworm)")
    return abi


def download_deb(pkg: str, log: Path) -> Path:
    """Debian's package pkg, downloaded (not installed) into the cache; its path."""
    dl = paths.cache_dir() / "guest" / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    for old in dl.glob(f"{pkg}_*.deb"):
        old.unlink()
    run_logged(["apt-get", "download", pkg], log, cwd=dl)
    debs = list(dl.glob(f"{pkg}_*.deb"))
    if len(debs) != 1:
        raise StepFailed(f"apt-get download {pkg} gave {debs}")
    return debs[0]


def ensure_kernel(log: Path) -> GuestKernel:
    abi = resolve_abi(log)
    headers_pkg = f"linux-headers-{abi}"
    bootstrap.apt_install([headers_pkg], log)
    headers = Path("/usr/src") / f"linux-headers-{abi}"
    if not (headers / "Makefile").exists():
        raise StepFailed(f"{headers_pkg} is installed but {headers}/Makefile is missing")
    root = paths.cache_dir() / "guest" / f"kernel-{abi}"
    vmlinuz = root / "boot" / f"vmlinuz-{abi}"
    if not vmlinuz.exists():
        pkg = f"linux-image-{abi}"
        with step(f"downloading the guest kernel {pkg}"):
            deb = download_deb(pkg, log)
            tmp = root.with_name(root.name + ".tmp")
            run_logged(["rm", "-rf", tmp], log)
            run_logged(["dpkg-deb", "-x", deb, tmp], log)
            version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True,
                                     text=True, check=True).stdout.strip()
            (tmp / "PACKAGE_VERSION").write_text(version + "\n")
            tmp.rename(root)
    # the image and the headers must come from the very same Debian package version
    image_version = (root / "PACKAGE_VERSION").read_text().strip()
    headers_version = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", headers_pkg],
                                     capture_output=True, text=True).stdout.strip()
    if image_version != headers_version:
        raise StepFailed(f"guest kernel linux-image-{abi} {image_version} does not match the "
                         f"installed {headers_pkg} {headers_version}; run 'apt-get update' and "
                         f"'retrolink build' again (delete {root} to refetch the image)")
    return GuestKernel(abi=abi, vmlinuz=vmlinuz, modules=root / "lib" / "modules" / abi,
                       headers=headers)
