"""A machine's [disks.NAME] (docs/machines.md): checked before anything boots, and what a
node with a disk gets (its QEMU arguments, its modules) and one without does not."""
import pytest

from retrolink import paths
from retrolink.build.artifacts import Artifacts
from retrolink.model.machine import MachineError, load_machine
from retrolink.run.node_command import NodeFiles, node_argv


def machine_with(tmp_path, disk: str, nodes: int = 2):
    f = tmp_path / "m.toml"
    f.write_text(f"[cluster]\nnodes = {nodes}\n\n[disks.hd]\n{disk}\n")
    return load_machine(str(f))


@pytest.mark.parametrize("disk,why", [
    ("size_mib = 405", "size_mib = 405 is more than the drive holds"),
    ("track_to_track_ns = 30000000", "track_to_track_ns = 30000000 is more than full_stroke_ns"),
    ("nodes = [2]", "disks.hd.nodes = [2]: give distinct node ids 0..1"),
    ("nodes = [0, 0]", "disks.hd.nodes = [0, 0]: give distinct node ids"),
    ("heads = 0", "disks.hd.heads: Input should be greater than or equal to 1"),
    ("sector_ns = 170455.5", "disks.hd.sector_ns: expected a whole number"),
    ("rpm = 4400", "disks.hd.rpm: unknown field"),
    ("[disks.more1]\n[disks.more2]\n[disks.more3]\n[disks.more4]\n[disks.more5]\n"
     "[disks.more6]\n[disks.more7]", "node 0 has 8 disks: its SCSI adapter takes 7"),
])
def test_a_bad_disk_is_refused_naming_the_field(tmp_path, disk, why):
    with pytest.raises(MachineError) as e:
        machine_with(tmp_path, disk)
    assert why in str(e.value), str(e.value)


def argv(machine, node):
    art = Artifacts(qemu=paths.REPO / "q", kernel=paths.REPO / "k", initrd=paths.REPO / "i",
                    fabric=paths.REPO / "f")
    return node_argv(machine, node, art, NodeFiles(paths.REPO / "c", paths.REPO / "o", None),
                     None)


def test_only_the_nodes_with_a_disk_get_its_adapter_and_modules(tmp_path):
    m = machine_with(tmp_path, "nodes = [1]\nsize_mib = 8")
    without, with_disk = argv(m, 0), argv(m, 1)
    assert not any("rl-disk" in a or "lsi53c895a" in a for a in without)
    assert not any("opt/retrolink/modules" in a for a in without)
    drive = with_disk[with_disk.index("-drive") + 1]
    assert "driver=rl-disk" in drive and "size=8M" in drive and "sector-ns=170455" in drive
    assert "lsi53c895a,id=scsi0,addr=0x10" in with_disk
    assert "scsi-hd,bus=scsi0.0,scsi-id=0,drive=disk0,write-cache=off" in with_disk
    modules = next(a for a in with_disk if a.startswith("name=opt/retrolink/modules"))
    assert modules.endswith("sd_mod sym53c8xx ext4")


def test_the_example_machine_sets_the_declared_defaults():
    """machines/scsi-disk.toml writes every value out with its source: the declared ones."""
    from retrolink.disks import Disk
    assert load_machine("scsi-disk").disks["hd"] == Disk(nodes=[0])


def test_a_nodes_disks_are_targets_of_one_adapter_in_the_files_order(tmp_path):
    """One adapter: Linux scans its targets in order, so the file's first disk is sda (two
    adapters are scanned at once, and the second's disk was sda in a run)."""
    m = machine_with(tmp_path, "size_mib = 8\n[disks.second]\nsize_mib = 16", nodes=1)
    a = argv(m, 0)
    assert [x for x in a if x.startswith("lsi53c895a")] == ["lsi53c895a,id=scsi0,addr=0x10"]
    drives = [a[i + 1] for i, x in enumerate(a) if x == "-drive"]
    assert ["size=8M" in drives[0], "size=16M" in drives[1]] == [True, True]
    assert "scsi-hd,bus=scsi0.0,scsi-id=1,drive=disk1,write-cache=off" in a
