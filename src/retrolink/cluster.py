"""Boot a cluster (fabric + one QEMU per node), run a command on the nodes, collect results.

In command mode nothing is sent to a guest after it starts: the command goes in through
fw_cfg, output comes back on the result port (a file), and the node ends QEMU through
the isa-debug-exit port when done.
"""
import ctypes
import json
import os
import re
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import paths
from .fabric_config import fabric_config_text
from .machine import Machine
from .node_command import DEBUG_EXIT_STATUS, Artifacts, NodeFiles, node_argv
from .progress import say

_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


def _die_with_parent():
    """In a child: get SIGTERM when retrolink dies, so no QEMU or fabric is orphaned."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def terminate_on_sigterm():
    """Make SIGTERM and SIGHUP stop retrolink like Ctrl-C (so clusters are shut down)."""
    def handler(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


BEGIN = re.compile(r"^@@retrolink-begin node=(\d+)\s*$")
END = re.compile(r"^@@retrolink-end rc=(\d+)\s*$")


@dataclass
class NodeResult:
    node: int
    booted: bool = False
    finished: bool = False
    exit_code: int | None = None
    lines: list[str] = field(default_factory=list)
    problem: str = ""            # why the node failed, for the user
    console_log: Path | None = None

    @property
    def ok(self) -> bool:
        return self.finished and self.exit_code == 0


@dataclass
class RunResult:
    nodes: list[NodeResult]
    run_dir: Path
    wall_s: float
    fabric_stats: dict | None = None
    fabric_problem: str = ""
    marks: dict = field(default_factory=dict)   # (node, name) -> host seconds since start

    @property
    def ok(self) -> bool:
        return all(n.ok for n in self.nodes) and not self.fabric_problem


def new_run_dir(machine_name: str) -> Path:
    base = paths.runs_dir()
    base.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for i in range(1000):
        d = base / f"{machine_name}-{stamp}-{os.getpid()}-{i}"
        try:
            d.mkdir()
            return d
        except FileExistsError:
            continue
    raise RuntimeError("cannot create a run directory")


def parse_output(node: int, text: str, result: NodeResult) -> None:
    for line in text.splitlines():
        if BEGIN.match(line):
            result.booted = True
            continue
        m = END.match(line)
        if m:
            result.finished = True
            result.exit_code = int(m.group(1))
            continue
        if result.booted and not result.finished:
            result.lines.append(line.rstrip("\r"))


def console_reason(console: Path) -> str:
    """A short reason from the console log of a node that died."""
    try:
        text = console.read_text(errors="replace")
    except OSError:
        return "no console output"
    for pat in ("Kernel panic - not syncing[^\n]*", "BUG: [^\n]*", "Oops[^\n]*",
                "general protection fault[^\n]*"):
        m = re.search(pat, text)
        if m:
            return m.group(0).strip()
    return "it stopped without finishing (no kernel panic in the console log)"


class Cluster:
    """One cluster run: start the fabric and the nodes, wait, collect."""

    def __init__(self, machine: Machine, art: Artifacts, run_dir: Path, trace: bool = False):
        self.machine, self.art, self.dir = machine, art, run_dir
        self.trace = trace
        self.fabric: subprocess.Popen | None = None
        self.nodes: list[subprocess.Popen] = []
        self.files: list[NodeFiles] = []
        self.socket = run_dir / "fabric.sock"
        self.stats_path = run_dir / "fabric-stats.json"

    def _start_fabric(self) -> None:
        conf = self.dir / "fabric.conf"
        conf.write_text(fabric_config_text(self.machine, self.socket, self.stats_path,
                                           self.dir / "fabric-trace.txt" if self.trace else None))
        log = open(self.dir / "fabric.log", "w")
        self.fabric = subprocess.Popen([str(self.art.fabric), str(conf)], stdout=log, stderr=log,
                                       stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        for _ in range(500):
            if self.socket.exists():
                return
            if self.fabric.poll() is not None:
                raise RuntimeError(f"the fabric exited at start (exit {self.fabric.returncode}); "
                                   f"see {self.dir / 'fabric.log'}")
            time.sleep(0.01)
        raise RuntimeError(f"the fabric did not open {self.socket}; see {self.dir / 'fabric.log'}")

    def start(self, commands: dict[int, str] | None, interactive: bool = False) -> None:
        if self.machine.uses_fabric:
            self._start_fabric()
        for n in range(self.machine.cluster.nodes):
            cmd_file = None
            if commands is not None and n in commands:
                cmd_file = self.dir / f"node{n}-command.sh"
                cmd_file.write_text(commands[n] + "\n")
            files = NodeFiles(console_log=self.dir / f"node{n}-console.log",
                              output=self.dir / f"node{n}-output.log", command=cmd_file,
                              qmp=self.dir / f"node{n}-qmp.sock" if interactive else None,
                              interactive_socket=self.dir / f"node{n}-shell.sock"
                              if interactive else None)
            self.files.append(files)
            argv = node_argv(self.machine, n, self.art, files,
                             self.socket if self.machine.uses_fabric else None)
            (self.dir / f"node{n}-qemu.cmdline").write_text(shlex.join(argv) + "\n")
            qlog = open(self.dir / f"node{n}-qemu.log", "w")
            self.nodes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=qlog,
                                               stderr=subprocess.STDOUT,
                                               preexec_fn=_die_with_parent))

    def wait(self, timeout_s: float) -> RunResult:
        start = time.monotonic()
        deadline = start + timeout_s
        marks: dict = {}
        while any(p.poll() is None for p in self.nodes):
            if time.monotonic() > deadline:
                break
            self._scan_marks(marks, start)
            time.sleep(0.02)
        self._scan_marks(marks, start)
        still_running = {n for n, p in enumerate(self.nodes) if p.poll() is None}
        self.stop()
        results = []
        for n, files in enumerate(self.files):
            r = NodeResult(node=n, console_log=files.console_log)
            parse_output(n, files.output.read_text(errors="replace")
                         if files.output.exists() else "", r)
            qemu_rc = self.nodes[n].returncode
            if not r.booted:
                r.problem = (f"node{n} did not boot: "
                             + ("timed out" if n in still_running
                                else console_reason(files.console_log))
                             + f" (console log: {files.console_log})")
            elif not r.finished:
                why = (f"timed out after {timeout_s:.0f} s (wall clock)" if n in still_running
                       else console_reason(files.console_log))
                r.problem = f"node{n} did not finish its command: {why} (console log: {files.console_log})"
            elif r.exit_code != 0:
                r.problem = f"node{n}: command exited with status {r.exit_code}"
            qemu_log = self.dir / f"node{n}-qemu.log"
            normal = (0, DEBUG_EXIT_STATUS)
            if n not in still_running and qemu_rc not in normal and not r.problem:
                r.problem = f"node{n}: QEMU exited with status {qemu_rc} (see {qemu_log})"
            if n not in still_running and qemu_rc not in normal and qemu_log.exists() \
                    and qemu_log.read_text().strip():
                r.problem += "\n    QEMU said: " + qemu_log.read_text(errors="replace").strip().splitlines()[-1]
            results.append(r)
        run = RunResult(nodes=results, run_dir=self.dir, wall_s=time.monotonic() - start,
                        marks=marks)
        if self.stats_path.exists():
            try:
                run.fabric_stats = json.loads(self.stats_path.read_text())
            except ValueError:
                run.fabric_problem = f"fabric stats unreadable: {self.stats_path}"
        return run

    def _scan_marks(self, marks: dict, start: float) -> None:
        """Note the host time at which each 'MARK <name>' line of a node first appears
        (benchmarks of the emulator itself use it: wall time per virtual second)."""
        for n, files in enumerate(self.files):
            try:
                text = files.output.read_text(errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                if line.startswith("MARK ") and (n, line[5:].strip()) not in marks:
                    marks[(n, line[5:].strip())] = time.monotonic() - start

    def stop(self) -> None:
        """Stop whatever still runs: nodes first (they tell the fabric), then the fabric."""
        for p in self.nodes:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.nodes:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.fabric and self.fabric.poll() is None:
            try:
                self.fabric.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.fabric.send_signal(signal.SIGTERM)
                try:
                    self.fabric.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.fabric.kill()
