"""The build pipeline: pin honoured, overlay applied to a clean tree, incremental rebuilds."""
import os
import shutil
import time
from pathlib import Path

import pytest

from retrolink import paths
from retrolink.build import qemu_build
from retrolink.build.initramfs import digest


def test_pin_names_a_10_0_debian_version_with_hashes():
    pin = qemu_build.load_pin()
    assert pin["source"]["version"].split(":")[-1].startswith("10.0.")
    assert all(len(h) == 64 for h in pin["source"]["sha256"].values())


def test_built_qemu_is_the_pinned_version(artifacts):
    pin = qemu_build.load_pin()
    upstream = pin["source"]["version"].split(":")[-1].split("+")[0]
    tree = qemu_build.qemu_root(pin) / "src"
    assert (tree / "VERSION").read_text().strip() == upstream
    assert artifacts.qemu == qemu_build.qemu_binary(pin)


def test_built_qemu_tree_carries_our_patches(artifacts):
    """Every qemu/patches/*.patch is in the tree the binary was built from."""
    import subprocess
    tree = qemu_build.qemu_root() / "src"
    assert qemu_build.our_patches(), "no patches found: the glob or the folder moved"
    for p in qemu_build.our_patches():
        r = subprocess.run(["patch", "-p1", "-R", "--dry-run", "--batch", "-d", tree, "-i", p],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{p.name} is not applied:\n{r.stdout}"
    assert qemu_build.tree_is_current(tree)


def test_overlay_on_a_clean_tree(tmp_path):
    """apply_overlay on pristine hw/ files adds exactly our hooks, idempotently."""
    pin = qemu_build.load_pin()
    tree = tmp_path / "src"
    (tree / "hw").mkdir(parents=True)
    (tree / "configs" / "devices" / "x86_64-softmmu").mkdir(parents=True)
    (tree / "include").mkdir()
    (tree / "hw" / "meson.build").write_text("subdir('core')\n")
    (tree / "hw" / "Kconfig").write_text("source core/Kconfig\n")
    for _ in range(2):
        qemu_build.apply_overlay(tree, pin)
    assert (tree / "hw" / "meson.build").read_text() == "subdir('core')\nsubdir('retrolink')\n"
    assert (tree / "hw" / "Kconfig").read_text().count("source retrolink/Kconfig") == 1
    assert (tree / "hw" / "retrolink").resolve() == paths.QEMU_OVERLAY
    assert (tree / "include" / "retrolink").resolve() == paths.INCLUDE
    mak = tree / "configs" / "devices" / "x86_64-softmmu" / "retrolink.mak"
    assert "CONFIG_Q35=y" in mak.read_text()


def test_sha256_mismatch_is_refused(tmp_path, monkeypatch):
    pin = qemu_build.load_pin()
    name = next(iter(pin["source"]["sha256"]))
    monkeypatch.setenv("RETROLINK_CACHE", str(tmp_path))
    dl = tmp_path / "qemu" / "downloads"
    dl.mkdir(parents=True)
    for f in pin["source"]["sha256"]:
        (dl / f).write_bytes(b"not the real file")
    with pytest.raises(qemu_build.StepFailed, match="does not match the pin"):
        qemu_build.fetch_and_verify(pin, tmp_path / "log")


def test_editing_a_device_file_relinks_qemu_without_rebuilding_it(artifacts):
    """Touch one device source: ninja would recompile that file and relink, nothing else.
    Its time is put back after the plan: a relink would rewrite the QEMU that the other
    test worker is starting (an exec of the half-written file fails)."""
    import subprocess
    src = paths.QEMU_OVERLAY / "sx" / "sx.c"
    build = qemu_build.qemu_root() / "build"
    before = src.stat()
    os.utime(src)
    try:
        plan = subprocess.run(["ninja", "-C", build, "-n", "qemu-system-x86_64"],
                              capture_output=True, text=True).stdout
    finally:
        os.utime(src, ns=(before.st_atime_ns, before.st_mtime_ns))
    compiles = [l for l in plan.splitlines() if "Compiling" in l and "qemu-version" not in l]
    ours = [l for l in compiles if "hw_retrolink" in l]
    others = [l for l in compiles if "hw_retrolink" not in l and "system_vl.c" not in l
              and "monitor_qmp-cmds-control" not in l]
    assert ours and not others, plan


def test_initramfs_is_reproducible(artifacts, tmp_path):
    from retrolink.build import initramfs
    from retrolink.build.guest_kernel import ensure_kernel
    from retrolink.build.lock import build_lock
    kernel = ensure_kernel(tmp_path / "log")
    stage = paths.build_dir() / "guest-root"
    with build_lock():     # the other worker's build may be installing into the stage
        a = initramfs.assemble(kernel, stage, tmp_path / "a.cpio", tmp_path / "log")
        time.sleep(1.1)
        b = initramfs.assemble(kernel, stage, tmp_path / "b.cpio", tmp_path / "log")
    assert digest(a) == digest(b)


def test_no_build_takes_the_last_build_or_says_what_is_missing(tmp_path, monkeypatch):
    """RETROLINK_NO_BUILD: the recorded artifacts as they are; a clear error when there is
    no record, or a file it names is gone."""
    from retrolink.build import pipeline
    monkeypatch.setenv("RETROLINK_BUILD", str(tmp_path))
    monkeypatch.setenv(pipeline.NO_BUILD, "1")
    with pytest.raises(pipeline.StepFailed, match="no build to take as it is"):
        pipeline.build_all()
    files = {k: tmp_path / k for k in ("qemu", "kernel", "initrd", "fabric")}
    for f in files.values():
        f.write_bytes(b"x")
    import json
    pipeline.built_record().write_text(json.dumps({k: str(v) for k, v in files.items()}))
    assert pipeline.build_all().initrd == files["initrd"]
    files["kernel"].unlink()
    with pytest.raises(pipeline.StepFailed, match=r"kernel is gone: run ./retrolink build"):
        pipeline.build_all()
