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
    for target in qemu_build.DEVICE_SETS:        # as in QEMU's tree
        (tree / "configs" / "devices" / target).mkdir(parents=True)
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
    sparc = tree / "configs" / "devices" / "sparc-softmmu" / "retrolink.mak"
    assert "CONFIG_RETROLINK_SBUS_BOARD=y" in sparc.read_text()


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


def test_the_read_only_root_image_and_its_boot_initramfs_are_reproducible(artifacts, tmp_path):
    """root_fs = "pmem" (build/pmem_root.py): made twice from the same tree, the same
    bytes, those of the build's; the image is padded to whole 2 MiB."""
    from retrolink.build import pmem_root
    from retrolink.build.artifacts import root_image_path
    from retrolink.build.guest_kernel import ensure_kernel
    from retrolink.build.lock import build_lock
    kernel = ensure_kernel(tmp_path / "log")
    with build_lock():     # the other worker's build may be making the base tree
        tree = artifacts.initrd.with_suffix(".root")
        a = pmem_root.assemble_image([tree], tmp_path / "a.erofs", tmp_path / "log")
        time.sleep(1.1)
        b = pmem_root.assemble_image([tree], tmp_path / "b.erofs", tmp_path / "log")
        boot = pmem_root.assemble_boot(kernel, tmp_path / "boot.cpio", tmp_path / "log")
    assert digest(a) == digest(b) == digest(root_image_path(artifacts.initrd))
    assert a.stat().st_size % pmem_root.ALIGN == 0
    assert digest(boot) == digest(artifacts.pmem_boot)


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


def _fake_checkout(root: Path) -> dict:
    """A checkout of the files the stamp reads, and a build's artifacts."""
    files = {"qemu/sx/sx.c": "int sx;\n", "qemu/patches/0001-fix.patch": "--- a\n+++ b\n",
             "qemu/upstream.toml": "[source]\n", "guest/rootfs/init": "#!/bin/sh\n",
             "guest/kernel/sx/sx.c": "int m;\n", "deps/apt.txt": "gcc\n",
             "fabric/core/main.c": "int main;\n", "meson.build": "project('x')\n",
             "src/retrolink/build/pipeline.py": "x = 1\n"}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    art = {k: root / "out" / k for k in ("qemu", "kernel", "initrd", "fabric")}
    for f in art.values():
        f.parent.mkdir(exist_ok=True)
        f.write_bytes(b"built")
    return art


def _edit_keeping_times(path: Path, text: str) -> None:
    """Change the content but give back its size and modification time: an editor or
    tool that keeps them must not hide the change."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("change", ["device source", "patch same size and time",
                                    "guest module", "init script", "package list",
                                    "new file", "deleted file", "artifact rebuilt elsewhere",
                                    "artifact gone", "build code"])
def test_the_build_stamp_sees_a_changed_input(tmp_path, monkeypatch, change):
    """The warm check (stamp.py): the same inputs give the last build's artifacts without
    a tool run; each kind of change to an input or an artifact makes the build run."""
    from retrolink.build import stamp
    repo = tmp_path / "repo"
    art = _fake_checkout(repo)
    monkeypatch.setattr(paths, "REPO", repo)
    monkeypatch.setenv("RETROLINK_BUILD", str(tmp_path / "build"))
    (tmp_path / "build").mkdir()
    before = stamp.inputs_stamp()
    stamp.write(before, art)
    assert stamp.current(stamp.inputs_stamp()) == art
    time.sleep(0.01)
    if change == "device source":
        (repo / "qemu/sx/sx.c").write_text("int sx; int y;\n")
    elif change == "patch same size and time":
        _edit_keeping_times(repo / "qemu/patches/0001-fix.patch", "--- c\n+++ d\n")
    elif change == "guest module":
        _edit_keeping_times(repo / "guest/kernel/sx/sx.c", "int n;\n")
    elif change == "init script":
        (repo / "guest/rootfs/init").write_text("#!/bin/sh\necho\n")
    elif change == "package list":
        (repo / "deps/apt.txt").write_text("gcc\nmake\n")
    elif change == "new file":
        (repo / "guest/kernel/sx/extra.h").write_text("\n")
    elif change == "deleted file":
        (repo / "fabric/core/main.c").unlink()
    elif change == "artifact rebuilt elsewhere":
        art["qemu"].write_bytes(b"relinked")
    elif change == "artifact gone":
        art["initrd"].unlink()
    elif change == "build code":
        (repo / "src/retrolink/build/pipeline.py").write_text("x = 2\n")
    assert stamp.current(stamp.inputs_stamp()) is None
    # a build that fails part-way leaves no stamp that says it is current
    stamp.write(before, art)
    stamp.forget()
    assert stamp.current(before) is None


def test_a_no_op_build_runs_no_tool(artifacts, monkeypatch):
    """Once built, build_all decides from the stamps alone: no apt, ninja, meson or cpio."""
    import subprocess
    from retrolink.build import pipeline
    monkeypatch.delenv(pipeline.NO_BUILD, raising=False)
    pipeline.build_all()        # (re)stamps if a test touched a source meanwhile
    # another worker may hold the build lock (a sanitizer build of the fabric): this
    # test is about the stamp
    monkeypatch.setattr(pipeline, "build_lock_free", lambda: True)

    def no_tool(*args, **kwargs):
        raise AssertionError(f"a no-op build ran {args[0]}")
    for name in ("run", "Popen", "call", "check_call", "check_output"):
        monkeypatch.setattr(subprocess, name, no_tool)
    assert pipeline.build_all() == artifacts


def test_a_failed_step_shows_its_own_output_while_another_tool_writes_the_log(tmp_path):
    """QEMU compiles beside the rest of the build, both into build.log: a failing tool's
    message has its own last lines, not the other's, and the log has every line whole."""
    from retrolink.build.jobs import Background
    from retrolink.progress import StepFailed, run_logged
    log = tmp_path / "build.log"
    chatter = Background(run_logged, ["sh", "-c", "for i in $(seq 3000); do echo other $i; done"],
                         log)
    with pytest.raises(StepFailed) as failed:
        run_logged(["sh", "-c", "for i in $(seq 200); do echo mine $i; done; exit 3"], log)
    chatter.result()
    text = str(failed.value)
    assert "exit 3" in text and "mine 200" in text and "other" not in text, text
    lines = log.read_text().splitlines()
    assert sum(l.startswith("mine ") for l in lines) == 200
    assert sum(l.startswith("other ") for l in lines) == 3000
    assert all(l.startswith(("mine ", "other ", "$ ")) or not l for l in lines)


def test_a_failure_beside_qemu_s_build_stops_it(tmp_path):
    """The foreground fails: Background.stop ends the background job's tool at once."""
    from retrolink.build.jobs import Background
    from retrolink.progress import StepFailed, run_logged
    job = Background(run_logged, ["sleep", "60"], tmp_path / "log")

    def waits_for_its_own_job():     # as QEMU's build waits for its build Python
        return Background(run_logged, ["sleep", "60"], tmp_path / "log").result()
    nested = Background(waits_for_its_own_job)
    time.sleep(0.5)
    start = time.monotonic()
    job.stop()
    nested.stop()
    assert time.monotonic() - start < 5
    for j in (job, nested):
        with pytest.raises(StepFailed, match="exit -15"):
            j.result()
