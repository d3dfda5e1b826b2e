"""What a build makes for a cluster: its own module, so that a command that only checks
the build (a warm `retrolink build`) imports nothing of the machine model."""
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Artifacts:
    qemu: Path
    kernel: Path
    initrd: Path
    fabric: Path
    # the base initramfs with the MPI layer on top (layers.py), for machines whose
    # [guest] packages name it; with the RDMA layer
    initrd_mpi: Path | None = None
    initrd_rdma: Path | None = None
    # the boot initramfs of root_fs = "pmem" (pmem_root.py; PCs only)
    pmem_boot: Path | None = None

    def initrd_for(self, packages) -> Path:
        """The initrd of a machine with these image layers ([guest] packages)."""
        if not packages:
            return self.initrd
        stacked = getattr(self, f"initrd_{packages[0]}", None) if len(packages) == 1 else None
        if stacked is not None:
            return stacked
        raise ValueError(f"no initrd built with the layers {list(packages)}")

    def root_image_for(self, packages) -> Path:
        """The read-only root image (root_fs = "pmem") of the same files as initrd_for's."""
        return root_image_path(self.initrd_for(packages))


def root_image_path(initrd: Path) -> Path:
    """Where the root image of the files of initramfs initrd is (build/pmem_root.py)."""
    return initrd.with_suffix(".erofs")
