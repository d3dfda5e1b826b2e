"""What the image layers' tests share (tests/mpi, tests/rdma): an archive's file names, and
the initrd a machine's nodes boot."""
import subprocess

from retrolink.run.node_command import NodeFiles, node_argv


def listing(archive) -> list[str]:
    with open(archive, "rb") as f:
        return subprocess.run(["cpio", "-it", "--quiet"], stdin=f, capture_output=True,
                              text=True, check=True).stdout.split()


def booted_initrd(machine, art) -> str:
    """The -initrd of node 0 of machine with the build art."""
    argv = node_argv(machine, 0, art, NodeFiles(console_log=None, output=None, command=None),
                     None)
    return argv[argv.index("-initrd") + 1]
