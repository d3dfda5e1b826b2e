"""The RDMA image layer (docs/rdma.md, src/retrolink/build/rdma_layer.py): on top of a
base initramfs that does not change with it, chosen by [guest] packages only, refused
by name on a machine without an Ethernet board."""
from pathlib import Path

import pytest
from layer_checks import booted_initrd, listing

from retrolink.build import layers, rdma_layer
from retrolink.build.artifacts import Artifacts
from retrolink.build.initramfs import write_cpio
from retrolink.build.pipeline import build_log
from retrolink.model.machine import MachineError, load_machine

pytestmark = pytest.mark.usefixtures("artifacts")
RDMA = {"guest.packages": ["rdma"]}


def test_layer_is_reproducible_and_stacked_on_the_base(artifacts, tmp_path):
    build = artifacts.initrd.parent
    root = tmp_path / "root"
    root.mkdir()
    rdma_layer.fill(root, build / "guest-root", artifacts.initrd.with_suffix(".root"), build_log())
    layer = layers.layer_path(build, "rdma").read_bytes()
    assert write_cpio(root, tmp_path / "layer.cpio").read_bytes() == layer
    assert artifacts.initrd_rdma.read_bytes() == artifacts.initrd.read_bytes() + layer


def test_base_image_has_nothing_of_the_layer(artifacts):
    """The verbs files are the layer's alone: the image every other machine boots (and
    its snapshots' key) does not change with them."""
    base = set(listing(artifacts.initrd))
    layer = set(listing(layers.layer_path(artifacts.initrd.parent, "rdma")))
    abi = next(f.split("/")[2] for f in base if f.startswith("lib/modules/"))
    mods = f"lib/modules/{abi}/kernel/drivers/infiniband/"
    for f in ("usr/bin/ib_send_lat", "usr/bin/ib_write_bw", "usr/bin/rdma", "usr/bin/rxe-perf",
              "etc/libibverbs.d/rxe.driver", "etc/retrolink/boot.d/rdma",
              "usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so",
              mods + "sw/rxe/rdma_rxe.ko", mods + "core/ib_uverbs.ko", mods + "core/ib_core.ko"):
        assert f in layer and f not in base, f
    # no provider of other hardware, and no file of the base carried again but modprobe's
    # indexes, which name the layer's modules too
    assert not any("libmlx" in f and "/libibverbs/" in f for f in layer)
    dirs = {Path(f).parent.as_posix() for f in base | layer}
    both = (layer & base) - dirs
    assert both and all(f.startswith(f"lib/modules/{abi}/modules.") for f in both), both


def test_only_machines_with_the_layer_boot_it():
    art = Artifacts(*map(Path, ("qemu", "kernel", "base.cpio", "fabric", "mpi.cpio",
                                "rdma.cpio")))
    assert booted_initrd(load_machine("eth-switch"), art) == "base.cpio"
    assert booted_initrd(load_machine("eth-switch", RDMA), art) == "rdma.cpio"


@pytest.mark.parametrize("machine,overrides,message", [
    ("via", RDMA, 'needs a board of the ethernet protocol.*this machine has via'),
    ("cpci", RDMA, "needs a board of the ethernet protocol"),
    ("eth-switch", {"guest.packages": ["rdma", "mpi"], "cluster.memory_mib": 384},
     "one layer at a time"),
    ("eth-switch", {"guest.packages": ["rxe"]}, "'rdma'"),
])
def test_bad_rdma_machines_refused(machine, overrides, message):
    with pytest.raises(MachineError, match=message):
        load_machine(machine, overrides)
