"""One build at a time. Builds share the cache outside the checkout (QEMU's unpacked and
overlaid tree, its build directories), and the test suite's workers each make sure the
artifacts are built: a second build waits for the first, then finds everything done."""
import fcntl
from contextlib import contextmanager

from retrolink import paths
from retrolink.progress import say


@contextmanager
def build_lock():
    path = paths.cache_dir() / "build.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another retrolink build to finish (it holds {path}) ...")
            fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build_lock_free() -> bool:
    """Whether no build holds the lock right now (a look, without waiting or holding it):
    a build under way may be rewriting the artifacts a stamp check would take."""
    path = paths.cache_dir() / "build.lock"
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return True
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(f, fcntl.LOCK_UN)
        return True
