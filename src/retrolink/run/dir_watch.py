"""Sleeping until a running cluster writes a file, instead of looking every few ms.

A run's wait loop reads the nodes' outputs as they grow and times each MARK line as it
appears (bench fabric's stretches). Looking 100 times a second timed a mark to 10 ms, but
each look woke a process that took a core from a node for a fraction of a millisecond,
and at microsecond lookahead the node's peers wait for it that long too: the harness
slowed the synchronised cluster it measured more than the free-running one. Woken by
inotify when a file in the run directory is written, the loop times a mark as it is
written and otherwise sleeps for the timeout its other checks need.
"""
import time
from pathlib import Path

from inotify_simple import INotify, flags


class DirWatch:
    """Wait until a file in a directory is created or written, or a timeout passes.
    After a write it returns no sooner than min_interval_s after the last one that
    woke it, so a node that prints a lot does not make the loop spin. Without inotify
    (e.g. too many instances open) it sleeps min_interval_s at most."""

    def __init__(self, directory: Path, min_interval_s: float):
        self.min_interval_s = min_interval_s
        self._woken_at = -min_interval_s
        self._inotify: INotify | None = None
        try:
            self._inotify = INotify()
            self._inotify.add_watch(directory, flags.CREATE | flags.MODIFY)
        except OSError:
            self.close()

    def wait(self, timeout_s: float) -> bool:
        """Sleep until something was written (True) or timeout_s passed (False)."""
        if self._inotify is None:
            time.sleep(min(timeout_s, self.min_interval_s))
            return False
        since = time.monotonic() - self._woken_at
        if since < self.min_interval_s:
            time.sleep(self.min_interval_s - since)
        if not self._inotify.read(timeout=max(0, round(timeout_s * 1000))):
            return False
        self._woken_at = time.monotonic()
        return True

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None

    def __enter__(self) -> "DirWatch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
