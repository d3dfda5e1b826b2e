"""Why a node, its QEMU or the fabric failed, in words for the user (docs/reliability.md).

Everything here reads what a finished or stuck run left behind: exit statuses, the
console and kernel logs, QEMU's and the fabric's logs, the fabric's status file and the
state of a process. Nothing here starts or stops anything.
"""
import json
import os
import re
import signal
from pathlib import Path

# What the guest kernel says when something went wrong inside it. A run whose kernel
# said any of these fails, even if the command finished (a driver bug is a failure).
KERNEL_COMPLAINT = re.compile(
    r"(Oops\b|BUG:|kernel BUG at|WARNING:|Kernel panic|general protection fault|UBSAN:|"
    r"INFO: task \S+ blocked|watchdog: BUG|rcu: INFO|retrolink-init: |"
    # too little memory for the initramfs: the command may find nothing it needs
    r"Initramfs unpacking failed)")
_TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s*")
_CRASH = ("Kernel panic - not syncing[^\n]*", "BUG: [^\n]*", "kernel BUG at[^\n]*",
          "Oops[^\n]*", "general protection fault[^\n]*")


def kernel_complaints(lines, most: int = 3) -> list[str]:
    """The first few lines of a kernel log that report a problem, without timestamps."""
    found = []
    for line in lines:
        if KERNEL_COMPLAINT.search(line):
            found.append(_TIMESTAMP.sub("", line).strip())
            if len(found) == most:
                break
    return found


def console_reason(console: Path) -> str:
    """A short reason from the console log of a node that died."""
    try:
        text = console.read_text(errors="replace")
    except OSError:
        return "no console output"
    for pat in _CRASH:
        m = re.search(pat, text)
        if m:
            return m.group(0).strip()
    return "it stopped without finishing (no kernel panic in the console log)"


# mpirun's own words when a rank ends (the fabric in shards, docs/fabric.md "Shards")
MPIRUN_RANK_DIED = re.compile(r"mpirun noticed that process rank (\d+) with PID \d+ on node "
                              r"(\S+) exited on signal (\d+)(?: \((\w+)\))?")


def last_words(log: Path) -> str:
    """The last non-empty line a process wrote to its log ('' if none), but the counters
    a QEMU's NICs and boards say at every exit, an error's too (docs/fabric.md "Live
    time": `... causality_violations=N`)."""
    try:
        lines = [l.strip() for l in log.read_text(errors="replace").splitlines()
                 if l.strip() and " causality_violations=" not in l]
    except OSError:
        return ""
    # a fabric in shards: the shard mpirun saw die, by its number and host, rather than
    # mpirun's banner
    for l in reversed(lines):
        m = MPIRUN_RANK_DIED.search(l)
        if m:
            rank, host, sig, name = m.groups()
            return f"fabric shard {rank} (on {host}) was killed by signal {sig}" + \
                (f" ({name})" if name else "")
    if any(l.startswith("Primary job") for l in lines):
        # a shard ended with an error: its own last line, not mpirun's banner after it
        lines = [l for l in lines if l.startswith("fabric shard ")] or lines
    return lines[-1] if lines else ""


def exit_description(rc: int) -> str:
    """'failed with exit status 1' or 'was killed by signal 9 (SIGKILL)' (a Popen returncode)."""
    if rc >= 0:
        return f"failed with exit status {rc}"
    try:
        name = signal.Signals(-rc).name
    except ValueError:
        name = "unknown signal"
    return f"was killed by signal {-rc} ({name})"


def process_state(pid: int) -> str:
    """The kernel's one-letter state of a process ('R', 'S', 'T' stopped, ...), or ''."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[0]


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) a process has used so far, or 0 once it
    has gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    utime, stime = stat.rsplit(")", 1)[1].split()[11:13]
    return (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")


def resident_kib(pid: int) -> int:
    """A process's resident memory (VmRSS) in KiB, or 0 once it has gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(m.group(1)) if m else 0


def qemu_failure(node: int, rc: int, qemu_log: Path) -> str:
    """A QEMU that exited on its own with a status that is not the guest's normal end."""
    words = last_words(qemu_log)
    return (f"node{node}: QEMU {exit_description(rc)}"
            + (f"; QEMU said: {words}" if words else "") + f" (log: {qemu_log})")


def read_fabric_status(path: Path) -> dict | None:
    """The fabric's status file (docs/fabric.md): which nodes it waits for, if stalled."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def stalled_nodes(status: dict | None) -> list[dict]:
    """The nodes a stalled fabric waits for: [{"node", "name", "time_ns", "silent_s"}]."""
    if not status or not status.get("stalled"):
        return []
    return [w for w in status.get("waiting_for", []) if isinstance(w, dict) and "node" in w]


def disconnected_nodes(status: dict | None) -> list[dict]:
    """The nodes the fabric cut off for a protocol error: [{"node", "name", "why"}]. Such a
    node's QEMU may run on alone or wait at the boot barrier for ever."""
    if not status:
        return []
    return [d for d in status.get("disconnected", []) if isinstance(d, dict) and "node" in d]


def disconnect_reason(d: dict, fabric_log: Path) -> str:
    return (f"node{d['node']} was disconnected by the fabric: {d.get('why', 'no reason given')} "
            f"(fabric log: {fabric_log})")


def stall_reason(w: dict, pid_state: str) -> str:
    why = (f"node{w['node']} stalled the cluster: its virtual clock stopped at "
           f"{w.get('time_ns', 0)} ns and it has not reported to the fabric since")
    if pid_state == "T":
        why += "; its QEMU process is stopped (SIGSTOP or a debugger): continue it or kill it"
    return why


def fabric_failure(rc: int | None, died_early: bool, log: Path, stats: Path) -> str:
    """'' if the fabric ended normally (exit 0, statistics written), else why not."""
    words = last_words(log)
    said = f"; its last words: {words}" if words else ""
    if rc is not None and rc != 0:
        return (f"the fabric {exit_description(rc)}"
                + (" while the nodes were running" if died_early else "")
                + f"{said} (log: {log}); the nodes lost their links and the lock-step")
    if died_early:
        return (f"the fabric ended while the nodes were running{said} (log: {log}); "
                "the nodes lost their links and the lock-step")
    if rc == 0 and not stats.exists():
        return f"the fabric ended without writing its statistics {stats}{said} (log: {log})"
    return ""
