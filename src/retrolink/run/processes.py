"""What the processes retrolink starts share: each dies with the process that started it
(Linux's PR_SET_PDEATHSIG), so that no QEMU, fabric or launcher outlives its run."""
import ctypes
import signal

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """In a child (a Popen's preexec_fn, or a forked process): get sig when the parent
    dies."""
    _libc.prctl(PR_SET_PDEATHSIG, sig)
