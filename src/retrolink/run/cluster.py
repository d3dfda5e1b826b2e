"""Boot a cluster (fabric + one QEMU per node), run a command on the nodes, collect results.

In command mode nothing is sent to a guest after it starts: the command goes in through
fw_cfg, output comes back on the result port (a file), and the node ends QEMU through
the isa-debug-exit port when done.
"""
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from retrolink import lockstep, paths
from retrolink.run import gdb, hosts, snapshot, sun4m
from retrolink.model.machine import Machine
from retrolink.progress import StepFailed, say
from retrolink.run.dir_watch import DirWatch
from retrolink.run.diagnosis import (
    console_reason, cpu_seconds, exit_description, fabric_failure, kernel_complaints, last_words,
    disconnect_reason, disconnected_nodes, process_state, qemu_failure, read_fabric_status,
    resident_kib, stall_reason, stalled_nodes
)
from retrolink.run.fabric_config import fabric_config_text
from retrolink.run.node_command import (DEBUG_EXIT_STATUS, Artifacts, NodeFiles, initrd_of,
                                        node_argv, write_command_slot)
from retrolink.run.node_output import NodeOutput, new_end_marker
from retrolink.run.processes import die_with_parent
from retrolink.run.shards import (
    fabric_mpi, mpirun_command, mpirun_env, node_shards, shard_path)

# Set: every cluster's wait ends now, and the cluster stops (bench.phase.run_at_once: a
# cluster run at the same time failed, or the run was interrupted)
ABANDON = threading.Event()


class ClusterError(StepFailed):
    """A cluster could not be started (the message says what to do)."""


@dataclass
class NodeResult:
    node: int
    booted: bool = False
    finished: bool = False
    exit_code: int | None = None
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)   # why the node failed, for the user
    console_log: Path | None = None

    @property
    def problem(self) -> str:
        return "\n    ".join(self.problems)

    @property
    def ok(self) -> bool:
        return self.finished and self.exit_code == 0 and not self.problems


@dataclass
class RunResult:
    nodes: list[NodeResult]
    run_dir: Path
    wall_s: float
    fabric_stats: dict | None = None
    fabric_problem: str = ""
    marks: dict = field(default_factory=dict)   # (node, name) -> host seconds since start
    # (node, name) -> every node's lock-step slot when that mark appeared (bench fabric)
    mark_slots: dict = field(default_factory=dict)
    # (node, name) -> that node's QEMU resident memory (KiB) when the mark appeared
    mark_rss_kib: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(n.ok for n in self.nodes) and not self.fabric_problem

    @property
    def problems(self) -> list[str]:
        """Every failure of the run, the fabric's first (it explains the nodes')."""
        return [p for p in [self.fabric_problem] if p] + \
            [p for n in self.nodes for p in n.problems]


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
    raise ClusterError(f"cannot create a run directory in {base}")


def socket_dir(run_dir: Path) -> Path:
    """Where a run's Unix sockets go. A socket's path holds at most 107 bytes, so a run
    directory too deep for them gets a short one in the temporary folder, and each
    socket is linked from the run directory (shell and push follow the link)."""
    if len(os.fsencode(run_dir / "node999-shell.sock")) <= 107:
        return run_dir
    return Path(tempfile.mkdtemp(prefix="retrolink-"))


# how long retrolink lets the nodes finish writing after the fabric died
FABRIC_DEATH_GRACE_S = 2.0
# how often a running cluster's state is checked when no node writes anything (a node's
# output is read as it is written: src/retrolink/run/dir_watch.py), and how often its
# outputs are read where inotify is not available (MARK lines are timed to this)
POLL_S, MARK_POLL_S = 0.05, 0.01
# a stall is announced (once) after this long; the run ends at cluster.stall_timeout_s
STALL_NOTICE_S = 10.0
# how often the nodes' virtual clocks are read for cluster.run_limit_virtual_s
VIRTUAL_POLL_S = 0.5


class Cluster:
    """One cluster run: start the fabric and the nodes, wait, collect."""

    def __init__(self, machine: Machine, art: Artifacts, run_dir: Path, trace: bool = False,
                 qemu_trace: str | None = None, node_env: dict | None = None,
                 insn_profile: frozenset = frozenset(), gdb_node: int | None = None,
                 shards: int = 1, on_hosts: list[str] | None = None):
        """node_env: variables added to each QEMU's environment (bench fabric's
        RETROLINK_LOCKSTEP=socket). gdb_node: the node whose QEMU gets a gdbstub
        (docs/debugging.md). shards: fabric processes under mpirun, each serving a block
        of the nodes (docs/fabric.md, "Shards"); 1: the one fabric. on_hosts: a shard
        per host, each host running its shard's nodes (hosts.py); shards is then theirs."""
        self.machine, self.art, self.dir = machine, art, run_dir
        self.node_env = node_env or {}
        self.trace = trace
        self.qemu_trace = qemu_trace
        self.insn_profile = insn_profile    # nodes whose instructions are profiled
        self.gdb_node = gdb_node
        self.gdb_socket: Path | None = None
        # called with (node, its new output lines) as they are read (run --gdb's dump)
        self.on_lines = None
        self.fabric: subprocess.Popen | None = None
        self.nodes: list[subprocess.Popen] = []
        self.files: list[NodeFiles] = []
        self.outputs: list[NodeOutput] = []
        self.mark_rss: dict = {}     # RunResult.mark_rss_kib
        self.sockets = socket_dir(run_dir)
        self.socket = self.sockets / "fabric.sock"
        self.stats_path = run_dir / "fabric-stats.json"
        self.status_path = run_dir / "fabric-status.json"
        self.fabric_log = run_dir / "fabric.log"
        self.on_hosts = on_hosts
        if on_hosts:
            shards = len(on_hosts)
            self.sockets = hosts.socket_dir(run_dir)     # each host's own
            self.sockets.mkdir(parents=True, exist_ok=True)
            self.socket = self.sockets / "fabric.sock"
        self.shards = shards if machine.uses_fabric else 1
        self.node_shard = node_shards(machine.cluster.nodes, self.shards)
        self.snapshot_key: str | None = None
        self.restored_from: Path | None = None      # the snapshot this run started from
        self.maker: snapshot.SnapshotMaker | None = None   # ... or the one it makes

    def _socket_path(self, name: str) -> Path:
        """A socket's path, linked from the run directory when it lives elsewhere."""
        if self.sockets != self.dir:
            (self.dir / name).symlink_to(self.sockets / name)
        return self.sockets / name

    def _fabric_conf(self) -> str:
        return fabric_config_text(self.machine, self.socket, self.stats_path,
                                  self.dir / "fabric-trace.txt" if self.trace else None)

    def node_socket(self, n: int) -> Path:
        """The fabric socket node n connects to: its shard's."""
        if self.shards == 1:
            return self.socket
        return shard_path(self.socket, self.node_shard[n])

    def _node_sockets(self) -> list[Path]:
        return [self.node_socket(n) for n in range(self.machine.cluster.nodes)]

    def _shard_sockets(self) -> list[Path]:
        return sorted(set(self._node_sockets()))

    def _status_paths(self) -> list[Path]:
        if self.shards == 1:
            return [self.status_path]
        return [shard_path(self.status_path, k) for k in range(self.shards)]

    def _start_fabric(self, conf_text: str) -> None:
        conf = self.dir / "fabric.conf"
        if self.shards > 1:
            conf_text += f"shards {self.shards}\n" + "".join(
                f"node {n} shard={s}\n" for n, s in enumerate(self.node_shard))
        conf.write_text(conf_text)
        check = subprocess.run([str(self.art.fabric), "--check", str(conf)], text=True,
                               capture_output=True, stdin=subprocess.DEVNULL)
        if check.returncode != 0:
            words = [l for l in check.stderr.splitlines() if l.strip()]
            raise ClusterError(f"the fabric refuses this machine: "
                               f"{words[-1] if words else exit_description(check.returncode)}")
        if self.on_hosts:
            argv, env = self._hosts_command(conf)
        elif self.shards > 1:
            say(f"the fabric in {self.shards} shards under mpirun (nodes per shard: "
                + ", ".join(str(self.node_shard.count(k)) for k in range(self.shards)) + ")")
            try:
                argv = mpirun_command(fabric_mpi(self.art.fabric), conf, self.shards)
            except FileNotFoundError as e:
                raise ClusterError(f"--shards {self.shards}: {e}") from None
            env = mpirun_env()
        else:
            argv, env = [str(self.art.fabric), str(conf)], None
        with open(self.fabric_log, "w") as log:
            self.fabric = subprocess.Popen(argv, stdout=log, stderr=log, env=env,
                                           stdin=subprocess.DEVNULL,
                                           preexec_fn=die_with_parent)
        # mpirun takes a while to start its processes
        waits = 500 if self.shards == 1 and not self.on_hosts else 6000
        for _ in range(waits):
            if self.on_hosts:
                up = all(hosts.shard_up(self.dir, k).exists() for k in range(self.shards))
            else:
                up = all(s.exists() for s in self._shard_sockets())
            if up:
                return
            if self.fabric.poll() is not None:
                raise ClusterError(f"the fabric refused to start (it {exit_description(self.fabric.returncode)}): "
                                   f"{last_words(self.fabric_log)} (log: {self.fabric_log})")
            time.sleep(0.01)
        raise ClusterError(f"the fabric did not open {self.socket} within {waits / 100:.0f} s "
                           f"(log: {self.fabric_log})")

    def _hosts_command(self, conf: Path) -> tuple[list[str], dict]:
        """mpirun of every host's host_shard.py, and the plan they read (hosts.json)."""
        say(f"the fabric in {self.shards} shard(s) on " + ", ".join(
            f"{h} (nodes {self._nodes_of(k)})" for k, h in enumerate(self.on_hosts))
            + ", each with its nodes' QEMUs, under mpirun; every node boots cold")
        try:
            fabric = fabric_mpi(self.art.fabric) if self.shards > 1 else self.art.fabric
            plan = self.dir / "hosts.json"
            plan.write_text(json.dumps({
                "run_dir": str(self.dir), "fabric": str(fabric), "config": str(conf),
                "node_env": self.node_env,
                "nodes": [{"node": n, "shard": k, "socket": str(self.node_socket(n))}
                          for n, k in enumerate(self.node_shard)]}, indent=1) + "\n")
            return (hosts.mpirun_command(self.on_hosts, plan, self.node_env),
                    hosts.mpirun_env(self.node_env))
        except FileNotFoundError as e:
            raise ClusterError(f"--hosts: {e}") from None

    def _nodes_of(self, shard: int) -> str:
        ns = [n for n, k in enumerate(self.node_shard) if k == shard]
        return f"{ns[0]}-{ns[-1]}" if len(ns) > 1 else str(ns[0])

    def start(self, commands: dict[int, str] | None, interactive: bool = False) -> None:
        if self.machine.uses_fabric:
            self.socket = self._socket_path("fabric.sock")
        argvs = []
        for n in range(self.machine.cluster.nodes):
            files = NodeFiles(console_log=self.dir / f"node{n}-console.log",
                              output=self.dir / f"node{n}-output.log",
                              command=self.dir / f"node{n}-command.sh",
                              command_length=self.dir / f"node{n}-command.len",
                              end_marker=new_end_marker(),
                              qmp=self._socket_path(f"node{n}-qmp.sock") if interactive else None,
                              interactive_socket=self._socket_path(f"node{n}-shell.sock")
                              if interactive else None,
                              qemu_trace=self.qemu_trace,
                              trace_log=self.dir / f"node{n}-trace.txt",
                              insn_profile=self.dir / f"node{n}-insns.txt"
                              if n in self.insn_profile else None)
            write_command_slot(files, commands.get(n) if commands is not None else None)
            self.files.append(files)
            self.outputs.append(NodeOutput(files.output, files.end_marker))
            argvs.append(node_argv(self.machine, n, self.art, files,
                                   self.node_socket(n) if self.machine.uses_fabric else None))
            if n == self.gdb_node:
                self.gdb_socket = self._socket_path(gdb.socket_name(n))
                argvs[-1] += gdb.qemu_args(self.gdb_socket)
        conf = self._fabric_conf() if self.machine.uses_fabric else ""
        conf, argvs = self._snapshot_plan(conf, argvs)
        for n, argv in enumerate(argvs):
            (self.dir / f"node{n}-qemu.cmdline").write_text(shlex.join(argv) + "\n")
        if self.machine.uses_fabric:
            self._start_fabric(conf)
        if self.on_hosts:
            # each host's host_shard.py starts its nodes (hosts.py)
            self.nodes = [hosts.HostedNode(self.dir, n, self.fabric) for n in range(len(argvs))]
            return
        for n, argv in enumerate(argvs):
            with open(self.dir / f"node{n}-qemu.log", "w") as qlog:
                self.nodes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=qlog,
                                                   env={**os.environ, **self.node_env},
                                                   stderr=subprocess.STDOUT,
                                                   preexec_fn=die_with_parent))
        if self.maker:
            self.maker.start()

    def _snapshot_plan(self, conf: str, argvs: list[list[str]]) -> tuple[str, list[list[str]]]:
        """Start from this configuration's snapshot, or make it on the way (docs/snapshots.md)."""
        binaries = [self.art.qemu, self.art.kernel, initrd_of(self.machine, self.art)]
        # (on hosts: a snapshot is saved and loaded through each QEMU's monitor, here)
        if snapshot.cold() or self.on_hosts or not all(p.is_file() for p in binaries):
            return conf, argvs      # (a missing binary: QEMU's start says what is wrong)
        binaries += snapshot.files_named(argvs, [self.dir, self.sockets])
        # a node's shard's socket is the one fabric's to the key: the guests are the same
        # whatever the fabric's shards, and so their snapshot
        key_argvs = [[a.replace(str(self.node_socket(n)), str(self.socket)) for a in argv]
                     for n, argv in enumerate(argvs)]
        key = snapshot.snapshot_key(binaries, key_argvs,
                                    conf, [self.dir, self.sockets],
                                    [f.end_marker for f in self.files])
        self.snapshot_key = key
        fabric = self.machine.uses_fabric
        found = snapshot.find(key, len(argvs), fabric)
        if found:
            self.restored_from = found.dir
            return (conf + f"restore_state {found.fabric_state}\n" if fabric else conf,
                    [argv + ["-incoming", f"file:{found.node_file(n)}"]
                     for n, argv in enumerate(argvs)])
        build = snapshot.new_build_dir(key)
        qmp = []
        for n, argv in enumerate(argvs):
            if self.files[n].qmp:
                qmp.append(self.files[n].qmp)
            else:
                qmp.append(self._socket_path(f"node{n}-qmp.sock"))
                argv += ["-qmp", f"unix:{qmp[-1]},server=on,wait=off"]
            if not fabric:
                # no fabric to stop the nodes at the barrier: each stops where it arrives
                # (after the key: a node started from the snapshot has arrived already)
                barrier = (sun4m.BARRIER_TYPE if self.machine.cluster.arch == "sparc32"
                           else "retrolink-barrier")
                argv += ["-global", f"{barrier}.stop-at-arrival=on"]
        self.maker = snapshot.SnapshotMaker(
            qmp, build, key, alive=lambda: all(p.poll() is None for p in self.nodes),
            fabric=fabric)
        if not fabric:
            return conf, argvs
        return conf + f"save_state {build / snapshot.FABRIC_STATE}\n", argvs

    def wait(self, timeout_s: float | None, boot_timeout_s: float | None) -> RunResult:
        """Wait for every node's command. Wall-clock caps only if given (a person asked
        for them): up to boot_timeout_s for all of them to boot, then up to timeout_s
        from the moment the last one booted. Otherwise the run ends when a node's virtual
        clock passes cluster.run_limit_virtual_s, or on a stall (_StallWatch): a slow
        host makes a run slower, never failed."""
        start = time.monotonic()
        deadline = start + boot_timeout_s if boot_timeout_s else math.inf
        clocks = _VirtualCap(self._node_sockets() if self.machine.uses_fabric else None,
                             self.machine.cluster.run_limit_virtual_s)
        all_booted = False
        marks: dict = {}
        mark_slots: dict = {}
        fabric_died_at = cut_off_at = None
        stall = _StallWatch(self._status_paths(), self.machine.cluster.stall_timeout_s,
                            [p.pid for p in self.nodes], self.gdb_node, self.gdb_socket)
        ended_by = "timeout"
        with DirWatch(self.dir, MARK_POLL_S) as written:
            while any(p.poll() is None for p in self.nodes):
                now = time.monotonic()
                if now > deadline:
                    break
                self._read_outputs(marks, mark_slots, start)
                if not all_booted and all(o.booted for o in self.outputs):
                    all_booted, deadline = True, now + timeout_s if timeout_s else math.inf
                if clocks.check(now):
                    ended_by = "virtual"
                    break
                # status 0 is the fabric's normal end, after the last node's BYE, which can come
                # just before that node's QEMU has exited: only a failure counts here
                if self.fabric and fabric_died_at is None and self.fabric.poll() not in (None, 0):
                    fabric_died_at = now
                    say(f"the fabric {exit_description(self.fabric.returncode)} while the nodes "
                        f"were running; stopping the cluster (log: {self.fabric_log})")
                if fabric_died_at is not None and now - fabric_died_at > FABRIC_DEATH_GRACE_S:
                    ended_by = "fabric"
                    break
                if stall.check(now):
                    ended_by = "stall"
                    break
                if ABANDON.is_set():
                    ended_by = "abandoned"
                    break
                # a node cut off as its QEMU exits (a panic's BYE past its grant) is not
                # waited for: only one whose QEMU runs on after the grace ends the run
                if stall.disconnected:
                    cut_off_at = cut_off_at or now
                    if now - cut_off_at > FABRIC_DEATH_GRACE_S and any(
                            self.nodes[d["node"]].poll() is None for d in stall.disconnected
                            if d["node"] < len(self.nodes)):
                        ended_by = "disconnected"
                        break
                # until a node writes (its output: a MARK line is timed as it appears), or
                # until the checks above are due again
                written.wait(POLL_S)
        # the state of each QEMU still running (a stopped one shows 'T'), before stopping them
        still_running = {n: process_state(p.pid) for n, p in enumerate(self.nodes)
                         if p.poll() is None}
        self.stop()
        self._read_outputs(marks, mark_slots, start, final=True)
        waited_for = {w["node"]: w for w in stall.waiting_for} if ended_by == "stall" else {}
        cut_off = {d["node"]: d for d in stall.disconnected
                   if d["node"] in still_running} if ended_by == "disconnected" else {}
        # (what ended the run for the nodes still running then)
        if ended_by == "virtual":
            limit = (f"the virtual clock of node{clocks.passed_by} passed "
                     f"{self.machine.cluster.run_limit_virtual_s:g} s (cluster.run_limit_virtual_s)")
        elif all_booted:
            limit = f"timed out after {timeout_s or 0:.0f} s (wall clock)"
        else:
            limit = (f"timed out after {boot_timeout_s or 0:.0f} s of booting (wall clock; "
                     "cluster.boot_timeout_s)")
        results = [self._node_result(n, still_running, ended_by, waited_for, cut_off, limit)
                   for n in range(len(self.nodes))]
        run = RunResult(nodes=results, run_dir=self.dir, wall_s=time.monotonic() - start,
                        marks=marks, mark_slots=mark_slots, mark_rss_kib=self.mark_rss)
        if self.fabric:
            run.fabric_problem = fabric_failure(self.fabric.returncode, fabric_died_at is not None,
                                                self.fabric_log, self.stats_path)
            if self.stats_path.exists():
                try:
                    run.fabric_stats = json.loads(self.stats_path.read_text())
                except ValueError:
                    run.fabric_problem = run.fabric_problem or \
                        f"the fabric's statistics are unreadable: {self.stats_path}"
        return run

    def _node_result(self, n: int, still_running: dict, ended_by: str, waited_for: dict,
                     cut_off: dict, limit: str) -> NodeResult:
        out, files = self.outputs[n], self.files[n]
        r = NodeResult(node=n, booted=out.booted, finished=out.finished,
                       exit_code=out.exit_code, lines=out.lines, console_log=files.console_log)
        log_note = f" (console log: {files.console_log})"
        if n in cut_off:
            r.problems.append(disconnect_reason(cut_off[n], self.fabric_log) + log_note)
        elif n in waited_for:
            r.problems.append(stall_reason(waited_for[n], still_running.get(n, "")) + log_note)
        elif n in still_running:
            why = {"timeout": limit, "virtual": limit,
                   "fabric": "stopped, because the fabric ended",
                   "abandoned": "stopped, because a cluster run at the same time failed",
                   "disconnected": "stopped, because the fabric disconnected " + ", ".join(
                       f"node{k}" for k in sorted(cut_off)),
                   "stall": "stopped, waiting for " + ", ".join(
                       f"node{k}" for k in sorted(waited_for)) + " (stalled)"}[ended_by]
            r.problems.append(f"node{n} {'did not finish its command' if out.booted else 'did not boot'}: "
                              f"{why}{log_note}")
        elif self.nodes[n].returncode not in (0, DEBUG_EXIT_STATUS):
            # QEMU's own failure comes first: the console says nothing about it
            r.problems.append(self._qemu_failure(n))
        elif not out.finished:
            r.problems.append(f"node{n} {'did not finish its command' if out.booted else 'did not boot'}: "
                              f"{console_reason(files.console_log)}{log_note}")
        elif out.exit_code != 0:
            r.problems.append(f"node{n}: command exited with status {out.exit_code}")
        if out.finished:
            kernel_log = self.dir / f"node{n}-kernel.log"
            kernel_log.write_text("\n".join(out.kernel_log) + "\n")
            complaints = kernel_complaints(out.kernel_log)
            if complaints:
                r.problems.append(f"node{n}: the guest kernel reported a problem: "
                                  + " | ".join(complaints) + f" (kernel log: {kernel_log})")
        return r

    def _qemu_failure(self, n: int) -> str:
        node, log = self.nodes[n], self.dir / f"node{n}-qemu.log"
        if not isinstance(node, hosts.HostedNode):
            return qemu_failure(n, node.returncode, log)
        where = node.where() or "not started"
        if node.returncode == hosts.LOST:
            return (f"node{n}'s QEMU ({where}): its host's processes ended without its exit "
                    f"status (their messages: {self.fabric_log}; QEMU's log: {log})")
        return f"{qemu_failure(n, node.returncode, log)} (on {where})"

    def _read_outputs(self, marks: dict, mark_slots: dict, start: float,
                      final: bool = False) -> None:
        """Read what the nodes added to their output; note the host time at which each
        'MARK <name>' line first appears, and every node's lock-step slot then
        (benchmarks of the emulator itself use them)."""
        for n, out in enumerate(self.outputs):
            new = out.poll(final)
            if new and self.on_lines:
                self.on_lines(n, new)
            for line in new:
                key = (n, line[5:].strip()) if line.startswith("MARK ") else None
                if key and key not in marks:
                    marks[key] = time.monotonic() - start
                    self.mark_rss[key] = resident_kib(self.nodes[n].pid)
                    if self.fabric:
                        mark_slots[key] = lockstep.read_node_slots(self._node_sockets())

    def stop(self) -> None:
        """Stop whatever still runs: nodes first (they tell the fabric), then the fabric."""
        if self.maker and self.maker.is_alive():
            self.maker.stopping.set()
        if self.on_hosts and self.fabric and self.fabric.poll() is None and \
                any(p.poll() is None for p in self.nodes):
            # mpirun stops the shards; each host's launcher then stops its QEMUs
            self.fabric.send_signal(signal.SIGTERM)
        for p in self.nodes:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.send_signal(signal.SIGCONT)    # a stopped QEMU cannot take SIGTERM
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
                    self.fabric.wait()
        if self.maker and self.maker.ident:
            self.maker.join(timeout=30)
        if self.sockets != self.dir:
            shutil.rmtree(self.sockets, ignore_errors=True)


class _VirtualCap:
    """Reads the nodes' virtual clocks from the lock-step file (each node's time at its
    last sync point) every VIRTUAL_POLL_S, and tells the run to end once one passes the
    cap. Without a fabric there is no file: never."""

    def __init__(self, sockets: list[Path] | None, limit_s: float):
        """sockets: each node's fabric socket (its shard's), beside its lock-step file."""
        self.sockets, self.limit_ns = sockets, int(limit_s * 1e9)
        self.next_s = 0.0
        self.passed_by: int | None = None

    def check(self, now: float) -> bool:
        if self.sockets is None or now < self.next_s:
            return False
        self.next_s = now + VIRTUAL_POLL_S
        slots = lockstep.read_node_slots(self.sockets) or []
        over = [n for n, s in enumerate(slots)
                if s.time_ns != lockstep.NEVER and s.time_ns > self.limit_ns]
        if over:
            self.passed_by = over[0]
        return bool(over)


class _StallWatch:
    """Watches the fabric's status file: says once that the cluster waits for a node,
    and tells the run to end when the lock-step has not moved for stall_timeout_s while
    the nodes it waits for are not running: their QEMUs got no CPU time meanwhile
    (stopped, or blocked), or used that much CPU time without moving (a loop that makes
    no progress). A node that gets a little CPU time on a busy host and moves when it
    has it is slow, not stalled: a busy host never ends a run (docs/reliability.md). A
    wait for the node under gdb while a debugger is attached to it is no stall: the
    cluster's virtual time stands still until gdb lets the node run."""

    # CPU time under which a waited-for QEMU counts as not running at all
    IDLE_CPU_S = 0.1

    def __init__(self, status_paths: list[Path], timeout_s: float, pids: list[int],
                 gdb_node: int | None = None, gdb_socket: Path | None = None):
        """status_paths: the fabric's status file, or each shard's."""
        self.paths, self.timeout_s, self.pids = status_paths, timeout_s, pids
        self.gdb_node, self.gdb_socket = gdb_node, gdb_socket
        self.in_gdb_said = False
        self.since: float | None = None
        self.cpu_since = 0.0
        self.waiting_for: list[dict] = []
        self.disconnected: list[dict] = []
        self.announced = False
        self._mtime = None

    def _waited_cpu_s(self) -> float:
        return sum(cpu_seconds(self.pids[w["node"]]) for w in self.waiting_for
                   if 0 <= w["node"] < len(self.pids))

    def check(self, now: float) -> bool:
        mtimes = [p.stat().st_mtime_ns if p.exists() else None for p in self.paths]
        if not any(mtimes):
            return False
        if mtimes != self._mtime:
            self._mtime = mtimes
            statuses = [read_fabric_status(p) for p in self.paths]
            self.waiting_for = [w for s in statuses for w in stalled_nodes(s)]
            self.disconnected = [d for s in statuses for d in disconnected_nodes(s)]
            self.since = now if self.waiting_for else None
            self.cpu_since = self._waited_cpu_s()
            self.announced = False
        if self.since is None:
            return False
        if self._in_gdb():
            if not self.in_gdb_said:
                say(f"node{self.gdb_node} is stopped in gdb: the cluster waits for it, its "
                    "virtual time standing still, until gdb continues or detaches")
                self.in_gdb_said = True
            self.since = now        # a stall counts from when gdb lets the node go
            self.cpu_since = self._waited_cpu_s()
            return False
        self.in_gdb_said = False
        if not self.announced and now - self.since >= STALL_NOTICE_S:
            names = ", ".join(f"node{w['node']}" for w in self.waiting_for)
            say(f"the cluster is waiting for {names}: its clock has not advanced for "
                f"{STALL_NOTICE_S:.0f} s (wall); the run ends if it stays so for "
                f"{self.timeout_s:.0f} s while its QEMU gets no CPU time, or after "
                f"{self.timeout_s:.0f} s of CPU time")
            self.announced = True
        used = self._waited_cpu_s() - self.cpu_since
        if used >= self.timeout_s:
            return True                             # runs, and makes no progress
        if now - self.since < self.timeout_s:
            return False
        if used < self.IDLE_CPU_S:
            return True                             # stopped or blocked all that time
        # it ran a little on a busy host: judge the next period on its own
        self.since, self.cpu_since = now, used + self.cpu_since
        return False

    def _in_gdb(self) -> bool:
        return (self.gdb_socket is not None
                and any(w["node"] == self.gdb_node for w in self.waiting_for)
                and gdb.attached(self.gdb_socket))
