"""The MPI image layer (docs/mpi.md): Open MPI from Debian's packages with dropbear as its
remote shell, our MPI programs (guest/bin/mpi) and the layer's own files (guest/layers/mpi:
the MCA parameters, `mpi-run`). layers.py stacks it on the base initramfs.

Open MPI opens its components (mca_*.so) and PMIx's with dlopen, so the libraries of
mpirun alone are not enough: every file of the packages goes in, but for those left out
below, and every shared object's libraries (ldd) with it.
"""
import re
import shutil
import subprocess
from pathlib import Path

from retrolink import paths
from retrolink.build.initramfs import LAYERS_DIR
from retrolink.build.layer_files import add_closure, copy_files, package_files
from retrolink.progress import StepFailed, run_logged

PACKAGES = ("openmpi-bin", "libopenmpi3", "openmpi-common", "libpmix2", "dropbear-bin")
# files of those packages the layer leaves out (their paths)
LEAVE_OUT = re.compile(r"""
    /usr/share/(doc|man|lintian)/                       # documentation
  | ucx | [_-]ofi[._] | psm | openib | verbs            # components for hardware no node has
                                                        # (UCX, libfabric, PSM, InfiniBand)
  | oshmem | osh(CC|c\+\+|cc|cxx|fort|run) | shmem(CC|c\+\+|cc|cxx|fort|run)
  | _sshmem_ | _spml_ | _scoll_ | _memheap_ | mca_atomic_    # OpenSHMEM
  | java | mpifh | usempi | mpi_cxx                     # the bindings other than C's
  | opal_wrapper | wrapper-data | /mpi(CC|c\+\+|cc|cxx|f77|f90|fort)\. | opalc | ortecc
                                                        # compiler wrappers: no compiler
  | profile2mat | aggregate_profile | totalview | valgrind   # Perl and debugger tools
  | reachable_netlink                                   # needs libnl; _weighted serves
""", re.X)
# the layer's own files: a tree laid over the image as it is
OWN_FILES = paths.REPO / "guest" / "layers" / "mpi"
# Debian's mpirun and mpiexec are links through /etc/alternatives
LINKS = {"usr/bin/mpirun": "orterun", "usr/bin/mpiexec": "orterun"}
# dropbear's keys, made once per cache with dropbearkey (random, so not rebuilt: the layer
# from the same cache is the same bytes); every node has the same host key, and root's
# client key is its own authorized key
KEYS = ("host_ed25519", "client_ed25519")


def keys(log: Path) -> dict[str, Path]:
    """The cache's dropbear keys, made the first time."""
    d = paths.cache_dir() / "mpi-keys"
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in KEYS:
        key = d / name
        if not key.exists():
            tmp = d / f"{name}.tmp"
            tmp.unlink(missing_ok=True)
            run_logged(["dropbearkey", "-t", "ed25519", "-f", tmp], log)
            tmp.replace(key)
        out[name] = key
    return out


def public_key(key: Path) -> str:
    """The key's public half as an authorized_keys line (dropbearkey names the host it runs
    on in its comment: ours is fixed)."""
    out = subprocess.run(["dropbearkey", "-y", "-f", key], capture_output=True, text=True)
    line = next((l for l in out.stdout.splitlines() if l.startswith("ssh-ed25519 ")), None)
    if line is None:
        raise StepFailed(f"dropbearkey -y -f {key} printed no public key: {out.stderr}")
    return " ".join(line.split()[:2]) + " root@retrolink\n"


def fill(root: Path, stage: Path, base_root: Path, log: Path) -> None:
    """Put the layer's files under root. base_root: the base image's tree, whose files
    (the C library, ...) the layer need not carry again."""
    copy_files(root, [f for p in PACKAGES for f in package_files(p, LEAVE_OUT)], LEAVE_OUT)
    for link, target in LINKS.items():
        (root / link).symlink_to(target)
    ours = stage / LAYERS_DIR / "mpi"
    if not ours.is_dir():
        raise StepFailed(f"{ours} missing: the guest build installs the MPI programs there")
    shutil.copytree(ours, root, dirs_exist_ok=True, symlinks=True)
    shutil.copytree(OWN_FILES, root, dirs_exist_ok=True, symlinks=True)
    add_closure(root, base_root)
    k = keys(log)
    ssh = root / "root" / ".ssh"
    ssh.mkdir(parents=True, exist_ok=True)
    (root / "etc" / "dropbear").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(k["host_ed25519"], root / "etc/dropbear/dropbear_ed25519_host_key")
    shutil.copyfile(k["client_ed25519"], ssh / "id_dropbear")
    (ssh / "authorized_keys").write_text(public_key(k["client_ed25519"]))
    # mpi-run makes root's known_hosts from it: every name of /etc/hosts has this key
    (root / "etc/dropbear/host_key.pub").write_text(public_key(k["host_ed25519"]))
    # dropbear refuses keys that others may read or write
    ssh.chmod(0o700)
    for f in (ssh / "id_dropbear", ssh / "authorized_keys",
              root / "etc/dropbear/dropbear_ed25519_host_key"):
        f.chmod(0o600)
