"""`retrolink up` / `shell` / `push`: a cluster kept running for driver development.

Each node's result port (ttyS1) is a Unix socket with a root shell behind it. Host input
wakes a guest from outside the model, so timings in an interactive session are not
deterministic (docs/fabric.md, causality violations); use `run` or `bench` for numbers.
"""
import base64
import os
import re
import select
import socket
import sys
import termios
import time
import tty
from pathlib import Path

from retrolink import paths
from retrolink.model.machine import Machine
from retrolink.progress import StepFailed, say
from retrolink.run import gdb
from retrolink.run.cluster import Cluster, new_run_dir
from retrolink.run.node_command import Artifacts

LATEST = "latest-up"


def up(machine: Machine, art: Artifacts, gdb_node: int | None = None) -> int:
    run_dir = new_run_dir((machine.cluster.name or "cluster") + "-up")
    latest = paths.runs_dir() / LATEST
    latest.unlink(missing_ok=True)
    latest.symlink_to(run_dir)
    cluster = Cluster(machine, art, run_dir, gdb_node=gdb_node)
    cluster.start(commands=None, interactive=True)
    say(f"{machine.cluster.nodes} node(s) booting; logs in {run_dir}")
    for n in range(machine.cluster.nodes):
        say(f"  node{n}: ./retrolink shell {n}    (console: {run_dir}/node{n}-console.log)")
    say("Ctrl-C stops the cluster")
    try:
        if gdb_node is not None:
            layout = guest_layout(gdb_node, str(run_dir))
            gdb.announce(run_dir, gdb_node, cluster.gdb_socket, layout,
                         gdb.target_for(machine.cluster.arch, art.kernel), say)
        while all(p.poll() is None for p in cluster.nodes):
            time.sleep(0.5)
        dead = [n for n, p in enumerate(cluster.nodes) if p.poll() is not None]
        say(f"node(s) {dead} stopped (see their console logs); stopping the cluster")
    except KeyboardInterrupt:
        say("stopping the cluster")
    finally:
        cluster.stop()
        latest.unlink(missing_ok=True)
    return 0


def guest_layout(node: int, run_dir: str | None, boot_timeout_s: float = 300) -> gdb.GuestLayout:
    """Where node's kernel and our modules are, read through its shell port once it is up."""
    deadline = time.monotonic() + boot_timeout_s
    while not (Path(run_dir) / f"node{node}-shell.sock").exists() and time.monotonic() < deadline:
        time.sleep(0.1)     # QEMU is starting
    s = _connect(node, run_dir)
    try:
        _wait_for_shell(s, node, deadline)
        s.sendall(f"stty -echo; {gdb.dump_script(gdb.our_modules())}; stty echo\n".encode())
        m = _read_until(s, re.compile(f"^{gdb.END}\\s*$", re.M), deadline)
    finally:
        s.close()
    if not m:
        raise StepFailed(f"node{node} did not say where its kernel and modules are")
    layout = gdb.GuestLayout()
    for line in m.string.splitlines():
        layout.add(line)
    return layout


def _socket_for(node: int, run_dir: str | None) -> Path:
    base = Path(run_dir) if run_dir else paths.runs_dir() / LATEST
    sock = base / f"node{node}-shell.sock"
    if not sock.exists():
        raise StepFailed(f"no running cluster with node {node} ({sock} missing); "
                         "start one with: ./retrolink up MACHINE")
    return sock.resolve()      # a deep run directory links its sockets (cluster.socket_dir)


def _connect(node: int, run_dir: str | None) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(_socket_for(node, run_dir)))
    return s


def shell(node: int, run_dir: str | None) -> int:
    s = _connect(node, run_dir)
    say(f"connected to node{node}; type exit or Ctrl-] to leave")
    s.sendall(b"\n")
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd) if os.isatty(fd) else None
    try:
        if old:
            tty.setraw(fd)
        while True:
            r, _, _ = select.select([s, fd], [], [])
            if s in r:
                data = s.recv(4096)
                if not data:
                    break
                os.write(sys.stdout.fileno(), data)
            if fd in r:
                data = os.read(fd, 1024)
                if not data or b"\x1d" in data:
                    break
                s.sendall(data)
    finally:
        if old:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
        s.close()
    return 0


def _read_until(s: socket.socket, pattern: re.Pattern, deadline: float,
                probe: bytes | None = None) -> re.Match | None:
    """Read the node's console until pattern matches (None at the deadline or EOF),
    sending probe once a second while waiting."""
    s.settimeout(1)
    buf = ""
    probed = 0.0
    while time.monotonic() < deadline:
        if probe and time.monotonic() - probed >= 1:
            s.sendall(probe)
            probed = time.monotonic()
        try:
            data = s.recv(4096)
        except TimeoutError:
            continue
        if not data:
            return None
        buf += data.decode(errors="replace").replace("\r", "")
        m = pattern.search(buf)
        if m:
            return m
    return None


def _wait_for_shell(s: socket.socket, node: int, deadline: float) -> None:
    """Wait until the node's shell runs commands: a node still booting would drop the
    first lines of a script and run the rest as commands. The shell computes the marker,
    so the echo of what we type never matches it."""
    tag = f"@@ready-{os.getpid()}-"
    if not _read_until(s, re.compile(f"{tag}42"), deadline, f"echo {tag}$((6*7))\n".encode()):
        raise StepFailed(f"node{node}'s shell did not answer; is the node still booting? "
                         f"see its console log in the run directory")
    # swallow the replies to our other probes
    _read_until(s, re.compile("(?!)"), time.monotonic() + 1.2)


def push(node: int, file: str, run_dir: str | None, timeout_s: float = 60,
         boot_timeout_s: float = 300) -> int:
    """Copy a file into the node's /tmp through its shell port (base64 over the tty)."""
    src = Path(file)
    if not src.is_file():
        raise StepFailed(f"{file}: no such file")
    s = _connect(node, run_dir)
    # a node may still be booting (up was just started): the boot has its own bound
    _wait_for_shell(s, node, time.monotonic() + boot_timeout_s)
    deadline = time.monotonic() + timeout_s
    encoded = base64.encodebytes(src.read_bytes()).decode()
    marker = f"@@pushed-{os.getpid()}"
    script = (f"stty -echo; base64 -d > /tmp/{src.name} <<'@@EOF'\n{encoded}@@EOF\n"
              f"echo {marker} $?; stty echo\n")
    s.sendall(script.encode())
    m = _read_until(s, re.compile(rf"{marker} (\d+)\s*$", re.M), deadline)  # after the prompt
    if m:
        rc = int(m.group(1))
        say(f"/tmp/{src.name} on node{node}: " + ("copied" if rc == 0 else f"failed ({rc})"))
        return 0 if rc == 0 else 1
    raise StepFailed(f"node{node} did not confirm the copy within {timeout_s:.0f} s")
