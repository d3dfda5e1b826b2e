"""Helpers for tests: run the retrolink command as a user would."""
import json
import math
import os
import re
import socket
import subprocess
import time
from pathlib import Path

from retrolink import paths

REPO = paths.REPO
# set by the artifacts fixture once the test run has built: the commands the tests run
# then take that build as it is (RETROLINK_NO_BUILD), rather than each checking it anew
session_env: dict[str, str] = {}


def run_retrolink(*args, timeout=600, env=None):
    """Run ./retrolink with args; returns the CompletedProcess (text)."""
    full_env = dict(os.environ, **session_env, **(env or {}))
    return subprocess.run([str(REPO / "retrolink"), *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=REPO, stdin=subprocess.DEVNULL)


def run_and_kill_a_shard(machine: str, *args, settle_s: float = 5) -> tuple[int, str]:
    """`retrolink run MACHINE ARGS -- (a busy loop)` with 2 shards: once both shards are up
    and the nodes have had settle_s to run, kill -9 shard 1; the run's exit status and
    standard error."""
    env = dict(os.environ, **session_env)
    p = subprocess.Popen([str(REPO / "retrolink"), "run", machine, *args, "--",
                          "while :; do :; done"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        ranks = []
        for _ in range(600):
            # this run's shards: their configuration is in its run folder, named after
            # the machine, the time and the pid of the retrolink that made it
            ranks = subprocess.run(["pgrep", "-f", rf"^\S*retrolink-fabric-mpi "
                                    rf".*/{machine}-[0-9]+-[0-9]+-{p.pid}-"],
                                   capture_output=True, text=True).stdout.split()
            if len(ranks) == 2:
                break
            time.sleep(0.1)
        assert len(ranks) == 2, ranks
        time.sleep(settle_s)
        subprocess.run(["kill", "-9", max(ranks, key=int)])
        _, err = p.communicate(timeout=300)
    finally:
        p.kill()
    return p.returncode, err


def shell_run(sock_path, command, marker, timeout=30):
    """command's output from the shell on a node's shell port (retrolink up), up to the
    line marker-STATUS that follows it."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(str(sock_path))
    s.settimeout(0.5)
    s.sendall(f"{command}; echo {marker}-$?\n".encode())
    buf, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            buf += s.recv(4096)
        except TimeoutError:
            pass
        text = buf.decode(errors="replace").replace("\r", "")
        if f"\n{marker}-" in text:
            return text
    raise AssertionError(f"no answer from the node: {buf!r}")


def quick_bench(which: str, tmp_path, timeout: int, name: str = "") -> tuple[str, dict]:
    """Run `retrolink bench WHICH --quick`; assert it succeeds; its table and JSON."""
    out = tmp_path / f"{which}{name}.json"
    r = run_retrolink("bench", which, "--quick", "--json", str(out), timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout, json.loads(out.read_text())


def quick_bench_twice(which: str, tmp_path, timeout: int) -> dict:
    """Run `retrolink bench WHICH --quick` twice; assert both succeed and print the same
    table and JSON, byte for byte (host time aside); return the JSON."""
    (table_a, a), (table_b, b) = (quick_bench(which, tmp_path, timeout, f"-{i}")
                                  for i in range(2))
    assert table_a == table_b                       # the printed table, byte for byte
    a.pop("host_wall_s"), b.pop("host_wall_s")
    assert a == b
    return a


def same_output_twice(machine: str, scripts: dict[int, str], artifacts) -> list[list[str]]:
    """Run scripts on machine twice (a short run of a benchmark's programs: a whole
    benchmark twice costs minutes); assert both succeed and every node printed the same
    lines, byte for byte; return them."""
    from retrolink.model.machine import load_machine
    from retrolink.run.runner import run_cluster
    runs = []
    for _ in range(2):
        result = run_cluster(load_machine(machine), artifacts, scripts, "twice")
        assert result.ok, result.problems
        runs.append([r.lines for r in result.nodes])
    assert runs[0] == runs[1]
    return runs[0]


def causality_violations(result, board: str) -> list[list[str]]:
    """Each node's count of frames delivered after their arrival time, as its board said
    at exit in its QEMU log ("<board> node N: causality_violations=K")."""
    return [re.findall(rf"{board} node \d+: causality_violations=(\d+)",
                       (result.run_dir / f"node{n.node}-qemu.log").read_text(errors="replace"))
            for n in result.nodes]


def fabric_causality_violations(result) -> int:
    """The fabric's count of frames ready before their node's promise (its stats file)."""
    return json.loads((result.run_dir / "fabric-stats.json").read_text())["causality_violations"]


def same_output_with_and_without_the_live_clock(machine: str, scripts: dict[int, str],
                                                artifacts, board: str) -> list[list[str]]:
    """Run scripts on machine with the live clock, then with peers that see each other
    only at sync points (RETROLINK_LIVE_CLOCK=off, docs/fabric.md "Live time"); assert
    both succeed, every node printed the same lines, byte for byte, and each node's board
    (its QEMU log's "<board> node N: causality_violations=K") counted no frame delivered
    after its arrival time, which a grant too long would cause; return the lines."""
    from retrolink.model.machine import load_machine
    from retrolink.run.runner import run_cluster
    runs = []
    for env in ({}, {"RETROLINK_LIVE_CLOCK": "off"}):
        result = run_cluster(load_machine(machine), artifacts, scripts, "live-clock",
                             node_env=env)
        assert result.ok, result.problems
        runs.append(result)
        counted = causality_violations(result, board)
        assert counted == [["0"]] * len(result.nodes), counted
        assert fabric_causality_violations(result) == 0
    lines = [[n.lines for n in r.nodes] for r in runs]
    assert lines[0] == lines[1]
    return lines[0]


def a_lead_too_long_is_caught(machine: str, scripts: dict[int, str], artifacts, board: str,
                              extra_ns: int = 100_000) -> tuple[bool, list[list[str]], int]:
    """Run scripts on machine with every node's live-clock lead extra_ns too long
    (RETROLINK_LIVE_LEAD_EXTRA_NS, docs/fabric.md "Live time") and assert that what
    same_output_with_and_without_the_live_clock requires breaks: the fabric counts a
    frame ready before its node's promise, a board counts one delivered after its
    arrival time (a peer was granted past it), or the run fails (a node that computed
    its own grant past the fabric's is told a bad GRANT and loses the fabric). Return the
    run's ok, the boards' counts and the fabric's."""
    from retrolink.model.machine import load_machine
    from retrolink.run.runner import run_cluster
    result = run_cluster(load_machine(machine), artifacts, scripts, "lead-too-long",
                         node_env={"RETROLINK_LIVE_LEAD_EXTRA_NS": str(extra_ns)})
    counted = causality_violations(result, board)
    in_fabric = fabric_causality_violations(result) if result.ok else 0
    assert (not result.ok or in_fabric > 0 or
            any(c and int(c[0]) > 0 for c in counted)), (counted, in_fabric)
    return result.ok, counted, in_fabric


# QEMU's e1000 holds its interrupts at least 128 us apart (docs/boards/ethernet.md, "What
# QEMU's NIC models add"): over it a kernel protocol's ping-pong takes that window each
# way whatever the size, and which of two sizes comes out a fraction of a microsecond
# ahead is the window's phase. There two sizes must agree within a quarter of it.
E1000_WINDOW_US = 128


def sizes_take_the_e1000_window(small_us: float, large_us: float) -> bool:
    return 0 < small_us and abs(large_us - small_us) < E1000_WINDOW_US / 4


def by_role(**roles) -> str:
    """A shell command that runs a different program on each node (n0=..., n1=...; the
    others run true)."""
    cases = " ".join(f"{node.removeprefix('n')}) {cmd};;" for node, cmd in roles.items())
    return f"case $RETROLINK_NODE in {cases} *) true;; esac"


def byte_time_ns(n: int, rate: int) -> int:
    """Time to move n bytes at rate bytes/s, rounded up to a whole ns (as rl_bytes_ns and
    the fabric compute it)."""
    return math.ceil(n * 1e9 / rate)


def check_model(stdout: str, result: str, sizes, model_us, allowance_us) -> None:
    """A model test's verdict: for each size n, the one-way time a node printed as
    'RESULT <result> size=n value=US' is the model's, model_us(n), plus 0 to
    allowance_us(n) of guest software (the model cannot be beaten)."""
    measured = {int(m.group(1)): float(m.group(2)) for m in
                re.finditer(rf"RESULT {result} size=(\d+) value=([\d.]+)", stdout)}
    for n in sizes:
        overhead = measured[n] - model_us(n)
        assert 0 <= overhead <= allowance_us(n), (n, measured[n], model_us(n))


# what a kernel says when something went wrong in it (console and dmesg)
KERNEL_PROBLEMS = r"BUG|Oops|WARNING|general protection|Call Trace"


def kernel_checked(cmd: str) -> str:
    """cmd, then the kernel log's problem lines, each prefixed 'kernel-problem: ' (the
    console shows only errors: loglevel=4 hides a WARNING); cmd's exit status."""
    return (f"{{ {cmd}; }}; rc=$?; dmesg | grep -E '{KERNEL_PROBLEMS}' | "
            f"sed 's/^/kernel-problem: /'; exit $rc")


def kernel_problems(r) -> list[str]:
    """The kernel problem lines of a run: from dmesg (kernel_checked) and every node's
    console log."""
    lines = [l for l in r.stdout.splitlines() if "kernel-problem:" in l]
    m = re.search(r"logs: (\S+)\)", r.stderr)
    for log in sorted(Path(m.group(1)).glob("node*-console.log")) if m else []:
        lines += [f"{log.name}: {l}" for l in log.read_text(errors="replace").splitlines()
                  if re.search(KERNEL_PROBLEMS, l)]
    return lines


def guest_script_run(machine: str, script: str, nodes=(0, 1), timeout=900):
    """One boot of machine running script on every node (kernel_checked): the
    CompletedProcess and each node's console lines without their '[nodeN] ' prefix."""
    r = run_retrolink("run", machine, "--", "sh", "-c", kernel_checked(script.strip()),
                      timeout=timeout)
    return r, {n: [l.removeprefix(f"[node{n}] ") for l in r.stdout.splitlines()
                   if l.startswith(f"[node{n}] ")] for n in nodes}


def unbind_held_script(driver: str, misc: str, hold: str) -> str:
    """Shell lines: run hold (a test program that maps the device, prints 'READY hold',
    then waits for /tmp/unbound) in the background, try rmmod (UNLOAD refused|allowed),
    unbind the PCI device of /sys/class/misc/<misc> from driver (UNBIND ok), let hold
    go on, print its output, bind the device again (REBIND ok)."""
    return f"""PCI=$(basename $(readlink /sys/class/misc/{misc}/device))
: > /tmp/hold.out; {hold} > /tmp/hold.out & hold=$!
i=0; while ! grep -q "READY hold" /tmp/hold.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
rmmod {driver} 2>/dev/null && echo "UNLOAD allowed" || echo "UNLOAD refused"
echo $PCI > /sys/bus/pci/drivers/{driver}/unbind && echo "UNBIND ok"
touch /tmp/unbound
wait $hold; cat /tmp/hold.out
echo $PCI > /sys/bus/pci/drivers/{driver}/bind && echo "REBIND ok\""""


def passed_cases(lines: list[str]) -> set[str]:
    """The names of a test program's 'PASS name' lines."""
    return {l.split()[1] for l in lines if l.startswith("PASS ")}


def assert_clean_run(r, lines: dict[int, list[str]]) -> None:
    """The run ended with status 0, no kernel problem and no FAIL or ERROR line."""
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-3000:]
    assert not kernel_problems(r)
    for n, node_lines in lines.items():
        assert not [l for l in node_lines if l.startswith(("FAIL ", "ERROR "))], (n, node_lines)


def device_defaults(qemu, device: str) -> dict[str, str]:
    """The properties `-device X,help` lists, with their defaults (None: no default)."""
    out = subprocess.run([str(qemu), "-device", f"{device},help"], capture_output=True,
                         text=True, timeout=60).stdout
    props = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\w-]+)=<\w+>.*?(?:\(default: (.*)\))?$", line)
        if m:
            props[m.group(1)] = m.group(2)
    return props
