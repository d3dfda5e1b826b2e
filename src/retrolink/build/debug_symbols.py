"""`retrolink debug-symbols`: the guest kernel's vmlinux with its symbols and debug info,
from Debian's linux-image-<abi>-dbg (about 0.9 GB to download), for `--gdb`.

Opt-in: neither the build nor the tests fetch it. Only the vmlinux is kept (in the cache,
beside the image), the package is deleted once it is unpacked.
"""
from retrolink import paths
from retrolink.build.guest_kernel import download_deb, resolve_abi
from retrolink.progress import StepFailed, run_logged, step
from retrolink.run.gdb import debug_vmlinux


def fetch_kernel_debug_symbols():
    log = paths.build_dir() / "logs" / "build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    abi = resolve_abi(log)
    target = debug_vmlinux(abi)
    if target.is_file():
        return target
    pkg = f"linux-image-{abi}-dbg"
    tmp = target.parent.with_name(target.parent.name + ".tmp")
    with step(f"downloading {pkg} (about 0.9 GB) for the guest kernel's symbols"):
        deb = download_deb(pkg, log)
        run_logged(["rm", "-rf", tmp], log)
        tmp.mkdir(parents=True)
        # usr/lib/debug/boot/vmlinux-<abi>, and a link to it under lib/modules/<abi>/
        run_logged(["sh", "-ec", 'dpkg-deb --fsys-tarfile "$1" | '
                    'tar -x -C "$2" --wildcards "*/vmlinux*"', "sh", deb, tmp], log)
        deb.unlink()
        found = [p for p in (tmp / "usr").rglob("vmlinux*") if p.is_file() and not p.is_symlink()]
        if not found:
            raise StepFailed(f"{pkg} holds no vmlinux (see {log})")
        max(found, key=lambda p: p.stat().st_size).rename(tmp / target.name)
        run_logged(["rm", "-rf", tmp / "usr"], log)
        run_logged(["rm", "-rf", target.parent], log)
        tmp.rename(target.parent)
    return target
