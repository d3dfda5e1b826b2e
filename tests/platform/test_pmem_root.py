"""A root on the read-only image (cluster.root_fs = "pmem", build/pmem_root.py): every
node maps the one host file, reads its files in place, and cannot change it."""
import hashlib

import pytest
from helpers import kernel_checked, kernel_problems, run_retrolink

from retrolink.build.artifacts import root_image_path
from retrolink.build.initramfs import digest

pytestmark = pytest.mark.usefixtures("artifacts")

# node 0 writes zeros over the start of its image's device, as root can (direct I/O: to
# the device, not into the guest's cache of it); both nodes then read the device and a
# file of the image. The image's first blocks are EROFS's, not zero.
OVERWRITE = kernel_checked(
    'if [ "$RETROLINK_NODE" = 0 ]; then '
    "dd if=/dev/zero of=/dev/pmem0 bs=4096 count=64 oflag=direct 2>/dev/null; echo wrote $?; fi; "
    "dd if=/dev/pmem0 bs=4096 count=64 iflag=direct 2>/dev/null | md5sum | cut -c1-32; "
    "grep -c root /etc/passwd; stat -f -c %t /")


def test_a_guest_writing_over_its_image_changes_nothing(artifacts):
    """The device is read-only memory to the guest: the writes are dropped, both nodes read
    what they read before, and the host's file is as the build made it. (A write through
    the guest's cache of the device stays in that cache: its own view, as on any disk.)"""
    image = root_image_path(artifacts.initrd)
    before = digest(image)
    with open(image, "rb") as f:
        first = hashlib.md5(f.read(64 * 4096)).hexdigest()
    r = run_retrolink("run", "plain", "--cold", "--set", "cluster.root_fs=pmem", "--",
                      "sh", "-c", OVERWRITE)
    assert r.returncode == 0 and not kernel_problems(r), r.stdout[-3000:] + r.stderr[-2000:]
    assert r.stdout.splitlines() == [
        "[node0] wrote 0", f"[node0] {first}", "[node0] 1", "[node0] 794c7630",
        f"[node1] {first}", "[node1] 1", "[node1] 794c7630"]
    assert digest(image) == before


def test_a_missing_image_is_named_before_anything_boots(artifacts, tmp_path, monkeypatch):
    """A build whose image has gone (a deleted build folder under RETROLINK_NO_BUILD) is
    named with the file and what to do, before a QEMU starts."""
    from retrolink.build.artifacts import Artifacts
    from retrolink.model.machine import load_machine, parse_overrides
    from retrolink.run.runner import run_cluster
    initrd = tmp_path / "initramfs.cpio"
    initrd.write_bytes(artifacts.initrd.read_bytes()[:512])
    art = Artifacts(**{**vars(artifacts), "initrd": initrd})
    machine = load_machine("plain", parse_overrides(["cluster.nodes=1", "cluster.root_fs=pmem"]))
    with pytest.raises(ValueError, match=r"the root image .*initramfs.erofs is missing: run "
                                         r"\./retrolink build"):
        run_cluster(machine, art, {0: "true"}, "pmem")
