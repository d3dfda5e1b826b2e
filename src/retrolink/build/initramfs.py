"""Assemble the guest initramfs: busybox-static, the init script, our modules and
programs, and any extra Debian tools (copied with their shared libraries).

Kernel modules live where modprobe looks for them, /lib/modules/<abi>/: those of the
Debian image that a machine may need under kernel/, ours under extra/, with the
dependency files depmod writes; the init script modprobes the modules its machine's
boards name (fw_cfg opt/retrolink/modules), so a module's dependencies load first.

The archive is uncompressed newc cpio (fast to boot under TCG) with every mtime and
owner fixed, so the same inputs give a byte-identical image.
"""
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from retrolink import paths
from retrolink.build.guest_kernel import GuestKernel
from retrolink.progress import StepFailed, run_logged

BUSYBOX = Path("/bin/busybox")
INIT = paths.REPO / "guest" / "rootfs" / "init"
# where the guest build installs the files of an image layer, in its staging root
# (stage/layers/<layer>/...): the base image leaves them out (layers.py)
LAYERS_DIR = "layers"
# kernel modules of the Debian image a node may load: fw_cfg (every node: the command
# comes through it), the stock NICs' drivers (Ethernet boards), ext2 (through ext4) for
# the PUMA-II shared disk and brd, the kernel RAM disk it is compared with, the SCSI
# disk's (disks/scsi.py: the LSI adapter's sym53c8xx, sd_mod and what they need), and the
# NFSv4 server and client with what modprobe loads before them (guest/bin/fs/nfs-serve,
# nfs-mount; docs/nfs.md)
IMAGE_MODULES = ["kernel/drivers/firmware/qemu_fw_cfg.ko", "kernel/drivers/net/mii.ko",
                 "kernel/drivers/net/ethernet/intel/e100.ko",
                 "kernel/drivers/net/ethernet/intel/e1000/e1000.ko",
                 "kernel/drivers/net/ethernet/dec/tulip/tulip.ko",
                 "kernel/drivers/net/ethernet/realtek/8139too.ko",
                 "kernel/fs/ext4/ext4.ko", "kernel/fs/jbd2/jbd2.ko", "kernel/fs/mbcache.ko",
                 "kernel/lib/crc16.ko", "kernel/crypto/crc32c_generic.ko",
                 "kernel/drivers/block/brd.ko",
                 *(f"kernel/{m}.ko" for m in (
                     "drivers/scsi/scsi_common", "drivers/scsi/scsi_mod",
                     "drivers/scsi/scsi_transport_spi", "drivers/scsi/sym53c8xx_2/sym53c8xx",
                     "drivers/scsi/sd_mod", "block/t10-pi", "lib/crc-t10dif", "lib/crc64",
                     "lib/crc64-rocksoft", "crypto/crct10dif_common",
                     "crypto/crct10dif_generic", "crypto/crc64_rocksoft_generic")),
                 "kernel/drivers/net/ethernet/amd/pcnet32.ko",
                 "kernel/net/sunrpc/sunrpc.ko", "kernel/net/sunrpc/auth_gss/auth_rpcgss.ko",
                 "kernel/fs/nfs_common/grace.ko", "kernel/fs/nfs_common/nfs_acl.ko",
                 "kernel/fs/lockd/lockd.ko", "kernel/fs/nfsd/nfsd.ko",
                 "kernel/fs/netfs/netfs.ko", "kernel/fs/fscache/fscache.ko",
                 "kernel/net/dns_resolver/dns_resolver.ko",
                 "kernel/fs/nfs/nfs.ko", "kernel/fs/nfs/nfsv4.ko"]
# what depmod needs besides the modules themselves (built-in modules count as present)
IMAGE_MODULE_INDEXES = ["modules.builtin", "modules.builtin.modinfo", "modules.order"]
# stock network benchmarks the guests run unmodified (docs/boards/ethernet.md), each the host's
# copy from its Debian package (deps/apt.txt) with its shared libraries: tool -> package
GUEST_TOOLS = {"/usr/bin/iperf3": "iperf3", "/usr/bin/NPtcp": "netpipe-tcp",
               "/usr/bin/qperf": "qperf", "/usr/bin/sockperf": "sockperf",
               # the NFS server's and client's user side (docs/nfs.md)
               "/usr/sbin/rpc.nfsd": "nfs-kernel-server", "/usr/sbin/rpc.mountd": "nfs-kernel-server",
               "/usr/sbin/exportfs": "nfs-kernel-server", "/usr/sbin/mount.nfs": "nfs-common"}
# configuration files the tools read, copied from the host: file -> package. libtirpc
# (rpc.mountd, mount.nfs) finds its transports in /etc/netconfig and fails without it;
# rpc.nfsd asks for the port of service "nfs", mount.nfs for RPC programs by name
GUEST_FILES = {"/etc/netconfig": "libtirpc-common", "/etc/services": "netbase",
               "/etc/rpc": "netbase"}


def shared_libraries(binary: Path) -> list[Path]:
    """The shared libraries (and loader) a dynamically linked host binary needs."""
    out = subprocess.run(["ldd", str(binary)], capture_output=True, text=True).stdout
    libs = []
    for line in out.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            libs.append(Path(m.group(1)))
    return libs


def add_host_tool(root: Path, tool: Path) -> None:
    """Copy a Debian tool and its libraries into the image at the same paths."""
    add_libraries(root, tool, also=[tool])


def add_libraries(root: Path, binary: Path, also=(), have=lambda lib: False) -> None:
    """Copy the host's libraries that binary needs (and the files also) into the image at
    the same paths, but those have(path) says the image has."""
    for f in [*also, *(l for l in shared_libraries(binary) if not have(l))]:
        dest = root / f.relative_to("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f.resolve(), dest)


def copy_kernel_files(kernel: GuestKernel, rels: list[str], modules: Path) -> None:
    """The image package's module files rels (paths under its lib/modules/<abi>/) into
    modules, at the same paths."""
    for rel in rels:
        src = kernel.modules / rel
        if not src.exists():
            raise StepFailed(f"guest kernel file {src} not found in the image package")
        (modules / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, modules / rel)


def assemble(kernel: GuestKernel, stage: Path, out: Path, log: Path, extra_tools=()) -> Path:
    if not BUSYBOX.exists():
        raise StepFailed(f"{BUSYBOX} missing: install busybox-static")
    root = out.with_suffix(".root")
    shutil.rmtree(root, ignore_errors=True)
    modules = root / "lib" / "modules" / kernel.abi
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "run", "tmp", "etc",
              "root"):
        (root / d).mkdir(parents=True, exist_ok=True)
    shutil.copy2(BUSYBOX, root / "bin" / "busybox")
    shutil.copy2(INIT, root / "init")
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\n")
    # glibc's tools look names up in /etc/hosts only (there is no DNS on the nodes), and
    # protocols by name (NPtcp exits without getprotobyname("tcp")); services and RPC
    # programs in GUEST_FILES' copies
    (root / "etc" / "nsswitch.conf").write_text("hosts: files\nprotocols: files\n"
                                                "services: files\nrpc: files\n")
    (root / "etc" / "protocols").write_text("ip 0 IP\nicmp 1 ICMP\ntcp 6 TCP\nudp 17 UDP\n")
    (root / "etc" / "profile").write_text('PS1="$(hostname)# "\nexport PATH=/usr/bin:/bin:/usr/sbin:/sbin\n')
    copy_kernel_files(kernel, IMAGE_MODULES + IMAGE_MODULE_INDEXES, modules)
    if stage.exists():
        # the image layers' files (stage/layers/<layer>/) are theirs (layers.py)
        shutil.copytree(stage, root, dirs_exist_ok=True, symlinks=True,
                        ignore=lambda d, names: [n for n in names if n.endswith(".ko") or
                                                 (Path(d) == stage and n == LAYERS_DIR)])
        # ours (meson installs them under lib/modules/<group>/) go to extra/
        (modules / "extra").mkdir(exist_ok=True)
        for ko in sorted((stage / "lib" / "modules").glob("*/*.ko")):
            shutil.copy2(ko, modules / "extra" / ko.name)
        for d in (root / "lib" / "modules").iterdir():     # the groups' folders, now empty
            if d != modules and not any(d.iterdir()):
                d.rmdir()
    run_logged(["depmod", "-b", root, kernel.abi], log)
    for tool, package in [*GUEST_TOOLS.items(), *((t, None) for t in extra_tools)]:
        if not Path(tool).exists():
            raise StepFailed(f"{tool} missing on the host" +
                             (f": install the Debian package {package}" if package else ""))
        add_host_tool(root, Path(tool))
    for f, package in GUEST_FILES.items():
        if not Path(f).is_file():
            raise StepFailed(f"{f} missing on the host: install the Debian package {package}")
        shutil.copy2(f, root / Path(f).relative_to("/"))
    return write_cpio(root, out)


def write_cpio(root: Path, out: Path) -> Path:
    """root as an uncompressed newc archive at out: every file, sorted, its mtime 0 and
    owner root, so that the same tree gives the same bytes."""
    for p in [root, *root.rglob("*")]:
        os.utime(p, (0, 0), follow_symlinks=False)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    tmp = out.with_suffix(".tmp")
    # cpio reads the file names on stdin
    with open(tmp, "wb") as f:
        proc = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc", "--reproducible", "-R", "0:0"],
                              input=("\n".join(files) + "\n").encode(), cwd=root, stdout=f,
                              stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise StepFailed(f"cpio failed: {proc.stderr.decode(errors='replace')}")
    tmp.replace(out)
    return out


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
