"""The RDMA image layer (docs/rdma.md): RDMA verbs over soft-RoCE. The guest kernel's
rdma_rxe (with ib_core, ib_uverbs, the UDP tunnels it sends through and crc32_generic), Debian's verbs
library with its rxe provider, perftest's programs and iproute2's `rdma`, and the layer's
own files (guest/layers/rdma: the boot script that gives each IP interface its rxe
device). layers.py stacks it on the base initramfs.

libibverbs opens its providers with dlopen, each named by a file of /etc/libibverbs.d/:
only rxe's goes in, so the library looks for no other hardware.
"""
import re
import shutil
from pathlib import Path

from retrolink import paths
from retrolink.build.layer_files import add_closure, copy_files, package_files
from retrolink.progress import StepFailed, run_logged

# the files of these packages go in, but for those LEAVE_OUT matches
PACKAGES = ("libibverbs1", "ibverbs-providers", "perftest")
LEAVE_OUT = re.compile(r"""
    /usr/share/(doc|man|lintian)/                       # documentation
  | /libibverbs/lib(?!rxe-)[^/]*$                       # the providers of hardware no node
  | /libibverbs\.d/(?!rxe\.)[^/]*$                      # has, and their driver files
  | raw_ethernet_ | run_perftest_                       # perftest's raw-packet and scripts
""", re.X)
# a file of a package that holds many others
TOOLS = (Path("/usr/bin/rdma"),)                      # iproute2: `rdma link add`
# the guest kernel's modules (paths under lib/modules/<abi>/), modprobe'd by the boot script;
# rxe computes each packet's ICRC with the crypto API's "crc32", which it asks for by name
MODULES = ("kernel/crypto/crc32_generic.ko",
           "kernel/drivers/infiniband/core/ib_core.ko",
           "kernel/drivers/infiniband/core/ib_uverbs.ko",
           "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko",
           "kernel/net/ipv4/udp_tunnel.ko", "kernel/net/ipv6/ip6_udp_tunnel.ko")
OWN_FILES = paths.REPO / "guest" / "layers" / "rdma"


def add_modules(root: Path, base_root: Path, log: Path) -> None:
    """MODULES from the guest kernel's tree, and modprobe's indexes for the base's modules
    and these: depmod over a copy of the base's tree with them. The layer's indexes
    replace the base's when the kernel unpacks it."""
    (abi_dir,) = (base_root / "lib" / "modules").iterdir()
    abi = abi_dir.name
    kernel = paths.cache_dir() / "guest" / f"kernel-{abi}" / "lib" / "modules" / abi
    merged = root.parent / f"{root.name}.modules"
    shutil.rmtree(merged, ignore_errors=True)
    shutil.copytree(abi_dir, merged / "lib" / "modules" / abi, symlinks=True)
    for rel in MODULES:
        src = kernel / rel
        if not src.is_file():
            raise StepFailed(f"guest kernel module {src} not found in the image package")
        for top in (root, merged):
            dest = top / "lib" / "modules" / abi / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    run_logged(["depmod", "-b", merged, abi], log)
    for index in sorted((merged / "lib" / "modules" / abi).glob("modules.*")):
        shutil.copy2(index, root / "lib" / "modules" / abi / index.name)
    shutil.rmtree(merged)


def fill(root: Path, stage: Path, base_root: Path, log: Path) -> None:
    """Put the layer's files under root. base_root: the base image's tree."""
    copy_files(root, [f for p in PACKAGES for f in package_files(p, LEAVE_OUT)], LEAVE_OUT)
    for tool in TOOLS:
        if not tool.is_file():
            raise StepFailed(f"{tool} missing on the host: install iproute2 (deps/apt.txt)")
    copy_files(root, TOOLS, LEAVE_OUT)
    shutil.copytree(OWN_FILES, root, dirs_exist_ok=True, symlinks=True)
    add_closure(root, base_root)
    add_modules(root, base_root, log)
