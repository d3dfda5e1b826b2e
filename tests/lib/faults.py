"""The fault kit's host half (docs/reliability.md): run `retrolink run` in the background
as a user would, wait until a node has reached a given point of its command, then kill
or stop one node's QEMU or the fabric, and collect what retrolink told the user.

The guest half: a test's guest command prints a line (e.g. `echo FAULT-POINT`) where the
fault should strike; guest/kernel/rl_fault provokes kernel WARNINGs and Oopses.
"""
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from helpers import REPO, session_env
from retrolink.run.diagnosis import cpu_seconds


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    run_dir: Path


class BackgroundRun:
    """`./retrolink run ARGS...` with its own runs folder, so its run directory (and
    through it each of its processes) can be found."""

    def __init__(self, tmp_path: Path, *args: str):
        self.runs = tmp_path / "runs"
        self.proc = subprocess.Popen([str(REPO / "retrolink"), "run", *args], cwd=REPO,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ, **session_env,
                                              RETROLINK_RUNS=str(self.runs)))

    @property
    def run_dir(self) -> Path:
        dirs = [d for d in self.runs.glob("*") if d.is_dir()] if self.runs.exists() else []
        assert len(dirs) == 1, f"expected one run directory in {self.runs}: {dirs}"
        return dirs[0]

    def wait_for_line(self, node: int, text: str, timeout: float = 300) -> None:
        """Block until node's command has printed a line containing text."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "retrolink ended before the fault point:\n" + \
                self.proc.stderr.read()
            try:
                out = (self.run_dir / f"node{node}-output.log").read_text(errors="replace")
                if text in out:
                    return
            except (OSError, AssertionError):
                pass
            time.sleep(0.2)
        raise AssertionError(f"node{node} did not print {text!r} within {timeout} s")

    def _pid(self, marker: str) -> int:
        """The process of this run whose command line names marker (a path in the run
        directory: node<N>-console.log for a node's QEMU, fabric.conf for the fabric)."""
        needle = str(self.run_dir / marker).encode()
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    if needle in (proc / "cmdline").read_bytes():
                        return int(proc.name)
                except OSError:
                    continue
        raise AssertionError(f"no process with {marker} in its command line")

    def signal_node(self, node: int, sig: int) -> None:
        os.kill(self._pid(f"node{node}-console.log"), sig)

    def node_cpu_seconds(self, node: int) -> float:
        """CPU time (user + system) node's QEMU has used so far."""
        return cpu_seconds(self._pid(f"node{node}-console.log"))

    def signal_fabric(self, sig: int) -> None:
        os.kill(self._pid("fabric.conf"), sig)

    def finish(self, timeout: float = 600) -> Finished:
        out, err = self.proc.communicate(timeout=timeout)
        return Finished(self.proc.returncode, out, err, self.run_dir)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.communicate(timeout=60)
