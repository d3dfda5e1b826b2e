"""The root of a node with root_fs = "pmem" (docs/machines.md, "Many nodes on one host"):
its image's files as one read-only EROFS image that every node of every such machine maps
from the same host file (a virtio-pmem device), and a small boot initramfs whose init
(guest/rootfs/init-pmem) mounts that image with DAX under a tmpfs and hands over to the
image's own init.

With DAX the guest reads the image's files in place, so they take none of its RAM: a
node's RAM (and its snapshot) holds what it runs and writes, not 60 MB of files that are
the same on every node. The host keeps the image once, in its page cache.

Both files are reproducible as the initramfs is (fixed times, owners and UUID).
"""
import shutil
from pathlib import Path

from retrolink import paths
from retrolink.build import layers
from retrolink.build.artifacts import root_image_path
from retrolink.build.guest_kernel import GuestKernel
from retrolink.build.initramfs import (BUSYBOX, IMAGE_MODULE_INDEXES, copy_kernel_files,
                                       write_cpio)
from retrolink.progress import StepFailed, run_logged, step

INIT = paths.REPO / "guest" / "rootfs" / "init-pmem"
# the Debian image's modules the boot initramfs loads (init-pmem: virtio_pmem's device,
# its block device, the image's file system and the overlay) with what they depend on
BOOT_MODULES = [f"kernel/{m}.ko" for m in (
    "drivers/virtio/virtio", "drivers/virtio/virtio_ring", "drivers/virtio/virtio_pci",
    "drivers/virtio/virtio_pci_modern_dev", "drivers/virtio/virtio_pci_legacy_dev",
    "drivers/nvdimm/libnvdimm", "drivers/nvdimm/nd_virtio", "drivers/nvdimm/virtio_pmem",
    "drivers/nvdimm/nd_btt", "drivers/nvdimm/nd_pmem",
    "crypto/crc32c_generic", "lib/libcrc32c", "fs/erofs/erofs", "fs/overlayfs/overlay")]
MKFS = "mkfs.erofs"
# the image's file system UUID: fixed, so that the same tree gives the same bytes
UUID = "72657472-6f6c-696e-6b00-000000000001"
# the device's size is a whole number of these (QEMU maps a memory device in whole
# pages; 2 MiB lets the guest map it with huge pages)
ALIGN = 2 << 20


def boot_path(build: Path) -> Path:
    return build / "pmem-boot.cpio"


def assemble_boot(kernel: GuestKernel, out: Path, log: Path) -> Path:
    """The boot initramfs: busybox, init-pmem and BOOT_MODULES with depmod's files."""
    root = out.with_suffix(".root")
    shutil.rmtree(root, ignore_errors=True)
    for d in ("bin", "dev", "proc"):
        (root / d).mkdir(parents=True)
    shutil.copy2(BUSYBOX, root / "bin" / "busybox")
    shutil.copy2(INIT, root / "init")
    copy_kernel_files(kernel, BOOT_MODULES + IMAGE_MODULE_INDEXES,
                      root / "lib" / "modules" / kernel.abi)
    run_logged(["depmod", "-b", root, kernel.abi], log)
    return write_cpio(root, out)


def assemble_image(trees: list[Path], out: Path, log: Path) -> Path:
    """The EROFS image of trees laid one over the other (the base's, then a layer's), at
    out, padded to ALIGN. Written beside and renamed: a QEMU that maps the old file keeps
    its pages."""
    if not shutil.which(MKFS):
        raise StepFailed(f"{MKFS} missing: install the Debian package erofs-utils")
    if len(trees) == 1:
        tree = trees[0]
    else:
        tree = out.with_suffix(".root")
        shutil.rmtree(tree, ignore_errors=True)
        for t in trees:
            shutil.copytree(t, tree, dirs_exist_ok=True, symlinks=True)
    tmp = out.with_suffix(".erofs-tmp")
    # no inline tails: DAX maps whole blocks of a file (erofs-utils' -E noinline_data)
    run_logged([MKFS, "--quiet", "-T0", f"-U{UUID}", "--all-root", "-Enoinline_data",
                tmp, tree], log)
    size = tmp.stat().st_size
    with open(tmp, "r+b") as f:
        f.truncate(-(-size // ALIGN) * ALIGN)
    tmp.replace(out)
    if tree is not trees[0]:
        shutil.rmtree(tree)
    return out


def assemble_all(kernel: GuestKernel, initrd: Path, stacked: dict, log: Path) -> Path:
    """The root image of each initramfs (the base's, and each stacked one's: initrd_<layer>
    in stacked), beside it; returns the boot initramfs."""
    build = initrd.parent
    with step("making the read-only root images (root_fs = \"pmem\")"):
        base = initrd.with_suffix(".root")
        assemble_image([base], root_image_path(initrd), log)
        for name in layers.LAYERS:
            assemble_image([base, layers.layer_path(build, name).with_suffix(".root")],
                           root_image_path(stacked[f"initrd_{name}"]), log)
        return assemble_boot(kernel, boot_path(build), log)
