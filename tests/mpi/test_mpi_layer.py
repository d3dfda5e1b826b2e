"""The MPI image layer (docs/mpi.md, src/retrolink/build/layers.py): reproducible, on top
of a base initramfs that does not change with it, chosen by [guest] packages only."""
import pytest
from layer_checks import booted_initrd, listing

from retrolink.build import layers, mpi_layer
from retrolink.build.artifacts import Artifacts
from retrolink.build.initramfs import write_cpio
from retrolink.build.pipeline import build_log
from retrolink.model.machine import MachineError, load_machine

pytestmark = pytest.mark.usefixtures("artifacts")
MPI = {"guest.packages": ["mpi"], "cluster.memory_mib": 384}


def test_layer_is_reproducible(artifacts, tmp_path):
    """Built twice from the same inputs: the same bytes, those of the build's layer."""
    build = artifacts.initrd.parent
    stage = build / "guest-root"
    made = []
    for i in range(2):
        root = tmp_path / f"root{i}"
        root.mkdir()
        mpi_layer.fill(root, stage, artifacts.initrd.with_suffix(".root"), build_log())
        made.append(write_cpio(root, tmp_path / f"layer{i}.cpio").read_bytes())
    assert made[0] == made[1]
    assert made[0] == layers.layer_path(build, "mpi").read_bytes()


def test_stacked_initrd_is_base_then_layer(artifacts):
    base, layer = artifacts.initrd.read_bytes(), layers.layer_path(
        artifacts.initrd.parent, "mpi").read_bytes()
    assert artifacts.initrd_mpi.read_bytes() == base + layer


def test_base_image_has_nothing_of_the_layer(artifacts):
    """The MPI files are the layer's alone: the image every other machine boots (and its
    snapshots' key) does not change with them."""
    base = set(listing(artifacts.initrd))
    layer = set(listing(layers.layer_path(artifacts.initrd.parent, "mpi")))
    for f in ("usr/bin/orted", "usr/bin/rl_mpi_sum", "usr/bin/mpi-run", "usr/sbin/dropbear",
              "etc/openmpi/openmpi-mca-params.conf", "root/.ssh/authorized_keys"):
        assert f in layer and f not in base, f
    assert not any(f.startswith("layers") for f in base)
    # dlopen'ed components and their libraries are there, hardware ones left out
    plugins = "usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/"
    assert {plugins + p for p in ("mca_btl_tcp.so", "mca_plm_rsh.so", "mca_pml_ob1.so")} <= layer
    assert not any("ucx" in f or "openib" in f for f in layer)
    assert "lib/x86_64-linux-gnu/libevent_core-2.1.so.7" in layer    # (ldd's path)


def test_only_machines_with_the_layer_boot_it():
    art = Artifacts(*(p for p in map(__import__("pathlib").Path,
                                     ("qemu", "kernel", "base.cpio", "fabric", "mpi.cpio"))))
    assert booted_initrd(load_machine("eth-switch"), art) == "base.cpio"
    assert booted_initrd(load_machine("eth-switch", MPI), art) == "mpi.cpio"


@pytest.mark.parametrize("overrides,message", [
    ({"guest.packages": ["mpi"]}, "at least 384 MiB"),
    ({"guest.packages": ["mpi", "mpi"], "cluster.memory_mib": 384}, "name each layer once"),
    ({"guest.packages": ["openmpi"], "cluster.memory_mib": 384}, "'mpi'"),
    ({"guest.layers": ["mpi"]}, "unknown field"),
])
def test_bad_guest_packages_refused(overrides, message):
    with pytest.raises(MachineError, match=message):
        load_machine("eth-switch", overrides)
