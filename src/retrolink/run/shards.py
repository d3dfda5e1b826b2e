"""The fabric in shards (docs/fabric.md, "Shards"): which shard serves which node, and
the command that starts one fabric process a shard under Open MPI's mpirun."""
import os
import shutil
from pathlib import Path

# Open MPI refuses root unless told twice (CI runs as root); the shards of one host
# share its cores with the QEMUs, so more processes than cores is the normal case
MPIRUN_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def node_shards(nodes: int, shards: int) -> list[int]:
    """Each node's shard: consecutive blocks of nodes, as even as they divide (a
    switch's or ring's neighbours mostly in one shard)."""
    return [n * shards // nodes for n in range(nodes)]


def shard_path(path: Path, shard: int) -> Path:
    """A file of shard k's own, as the fabric names it (shard.c): the configuration's
    path, ".k" (its socket, with its lock-step file beside it; its status file)."""
    return path.with_name(f"{path.name}.{shard}")


def mpirun_path() -> str:
    """Open MPI's mpirun, or FileNotFoundError saying how to get it."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        raise FileNotFoundError("mpirun (Debian's openmpi-bin) is not installed: "
                                "./retrolink setup installs it")
    return mpirun


def mpirun_command(fabric_mpi: Path, config: Path, shards: int) -> list[str]:
    """mpirun starting `shards` fabric processes on this host, each reading the same
    configuration."""
    return [mpirun_path(), "-n", str(shards), "--oversubscribe", "--bind-to", "none",
            str(fabric_mpi), str(config)]


def mpirun_env() -> dict:
    return dict(os.environ, **MPIRUN_ENV)


def fabric_mpi(fabric: Path) -> Path:
    """The MPI fabric built beside the fabric (fabric/meson.build: when Open MPI's
    headers are there, which ./retrolink setup installs)."""
    path = fabric.with_name("retrolink-fabric-mpi")
    if not path.is_file():
        raise FileNotFoundError(f"{path} was not built (Open MPI's libopenmpi-dev is missing "
                                f"at build time): ./retrolink setup installs it, then build "
                                f"again")
    return path
