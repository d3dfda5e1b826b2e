"""Image layers: files a machine asks for ([guest] packages, docs/machines.md) on top of the
base initramfs every machine boots. The kernel unpacks concatenated newc archives in
turn, a later file replacing an earlier one, so a machine with a layer boots one file,
base + layer, and the base (and every snapshot of a machine without the layer) is not
touched by it. Each layer is a cpio archive of its own, reproducible as the base is
(initramfs.write_cpio), built with the base by every build."""
import shutil
from pathlib import Path

from retrolink.build import mpi_layer, rdma_layer
from retrolink.build.initramfs import write_cpio
from retrolink.progress import step

# layer name -> the function that fills its tree: fill(root, stage, base_root, log)
LAYERS = {"mpi": mpi_layer.fill, "rdma": rdma_layer.fill}


def layer_path(build: Path, name: str) -> Path:
    return build / f"layer-{name}.cpio"


def stacked_path(build: Path, name: str) -> Path:
    """The initrd of a machine with that layer: the base, then the layer."""
    return build / f"initramfs-{name}.cpio"


def assemble(name: str, base: Path, stage: Path, log: Path) -> Path:
    """Build layer name's archive beside the base initramfs and the two stacked; returns
    the stacked file."""
    build = base.parent
    root = layer_path(build, name).with_suffix(".root")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    with step(f"assembling the {name} image layer"):
        LAYERS[name](root, stage, base.with_suffix(".root"), log)
        layer = write_cpio(root, layer_path(build, name))
        out = stacked_path(build, name)
        tmp = out.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            for part in (base, layer):
                with open(part, "rb") as src:
                    shutil.copyfileobj(src, f, 4 << 20)
        tmp.replace(out)
    return out
