"""Everything a cluster needs, built incrementally: host packages, QEMU, the guest kernel,
our own programs and modules, and the initramfs."""
import json
import os
import threading
from pathlib import Path

from retrolink import paths
from retrolink.build import stamp
from retrolink.build.artifacts import Artifacts
from retrolink.build.lock import build_lock, build_lock_free
from retrolink.build.jobs import Background
from retrolink.progress import StepFailed

# RETROLINK_NO_BUILD=1: take the last build's artifacts as they are, without even the
# stamp check (stamp.py: a few milliseconds when nothing changed). The test suite sets it
# for the commands it runs, once its session has built: a test that edits a source (and
# puts it back) then does not make the next command rebuild.
NO_BUILD = "RETROLINK_NO_BUILD"


def build_log() -> Path:
    return paths.build_dir() / "logs" / "build.log"


def built_record() -> Path:
    """What the last build_all made: read back under RETROLINK_NO_BUILD."""
    return paths.build_dir() / "artifacts.json"


def build_all() -> Artifacts:
    if os.environ.get(NO_BUILD, "") not in ("", "0"):
        return last_built()
    # nothing the build reads has changed since the last successful build, and no build
    # is under way: its artifacts as they are, without running a tool (stamp.py)
    inputs = stamp.inputs_stamp()
    if build_lock_free():
        done = stamp.current(inputs)
        if done is not None:
            return Artifacts(**done)
    from retrolink.build import bootstrap, initramfs, layers, pmem_root, qemu_build
    from retrolink.build.guest_kernel import ensure_kernel
    from retrolink.build.ours_build import build_ours
    log = build_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    with build_lock():
        stamp.forget()
        # QEMU's build is the long pole: it runs beside the rest, which does not need it
        # (its source download even beside the host's packages, with apt alone)
        host, failed = threading.Event(), []

        def host_ready():
            host.wait()
            if failed:
                raise StepFailed("stopped: another step of the build failed")
        qemu_cold = not qemu_build.qemu_binary().exists()
        qemu_job = Background(qemu_build.build_qemu, log, host_ready=host_ready)
        try:
            bootstrap.setup_host(log)
            host.set()
            kernel = ensure_kernel(log)
            stage = build_ours(kernel, log, beside_qemu=qemu_cold)
            initrd = paths.build_dir() / "initramfs.cpio"
            initramfs.assemble(kernel, stage, initrd, log)
            stacked = {f"initrd_{name}": layers.assemble(name, initrd, stage, log)
                       for name in layers.LAYERS}
            pmem_boot = pmem_root.assemble_all(kernel, initrd, stacked, log)
            qemu = qemu_job.result()
        except BaseException:       # a failed step, or Ctrl-C: QEMU's build ends too
            failed.append(True)
            host.set()
            qemu_job.stop()
            raise
        art = Artifacts(qemu=qemu, kernel=kernel.vmlinuz, initrd=initrd,
                        fabric=paths.fabric_binary(), pmem_boot=pmem_boot, **stacked)
        built_record().write_text(json.dumps({k: str(v) for k, v in vars(art).items()}) + "\n")
        # the inputs as they were when this build started: an edit made while it ran is
        # seen by the next command
        stamp.write(inputs, vars(art))
    return art


def last_built() -> Artifacts:
    record = built_record()
    try:
        art = Artifacts(**{k: Path(v) for k, v in json.loads(record.read_text()).items()})
    except (OSError, ValueError, TypeError) as e:
        raise StepFailed(f"{NO_BUILD} is set, but there is no build to take as it is "
                         f"({record}: {e}): run ./retrolink build, or unset {NO_BUILD}") from None
    missing = [str(p) for p in vars(art).values() if p is not None and not p.is_file()]
    if missing:
        raise StepFailed(f"{NO_BUILD} is set, but the last build's {', '.join(missing)} "
                         f"is gone: run ./retrolink build, or unset {NO_BUILD}")
    return art


def build_for(machine) -> Artifacts:
    """What a machine's nodes boot: build_all's for PCs; for SPARCstation 5 nodes their
    own QEMU, kernel and initramfs (sparc_pipeline.py: built only for such a machine),
    and the fabric of the PC's build; the SBus cards' PROMs are where fcode.prom_path
    says."""
    if machine.cluster.arch != "sparc32":
        return build_all()
    from retrolink.build.sparc_pipeline import build_sparc
    log = build_log()
    log.parent.mkdir(parents=True, exist_ok=True)
    sparc = build_sparc(log)
    return Artifacts(qemu=sparc.qemu, kernel=sparc.kernel, initrd=sparc.initrd,
                     fabric=paths.fabric_binary())
