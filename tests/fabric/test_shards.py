"""The fabric in shards (docs/fabric.md, "Shards"): the same configuration run by one
fabric and by 2 and 4 shards under mpirun gives every node the same deliveries (times,
senders, payloads, the fabric's numbering) and the same trace, on every topology; a
shard that dies is named and the others end; bad shard configurations are refused."""
import json
import subprocess
import time

import pytest
from fakenode import FakeNode
from scripted_nodes import run_scripted

from retrolink import wire
from retrolink.run import shards as sh

# as the fabric fixture checks (conftest.py)
SANITIZER_ERRORS = ("ERROR: AddressSanitizer", "runtime error:")

TOPOLOGIES = {
    "p2p": (2, "p2p rate=100000000 prop_ns=200 overhead_bytes=0", False),
    "token_ring": (4, "token_ring rate=12500000 station_delay_ns=1000 token_bytes=3", True),
    "hub": (4, "hub rate=1250000 prop_ns=1000", True),
    "switch": (4, "switch rate=100000000 prop_ns=1000 overhead_bytes=36", False),
    "min": (4, "min k=2 stages=2 rate=40000000 stage_delay_ns=250", False),
    "ethernet_switch": (4, "ethernet_switch rate=12500000 prop_ns=1000", True),
    "cpci_bus": (4, "cpci_bus cycle_ns=30 rate=133333333 mtu=256", True),
}


class Sharded:
    """One configuration, run by `shards` fabric processes under mpirun (1: the plain
    fabric, as retrolink runs it without shards)."""
    started: list["Sharded"] = []

    def __init__(self, binary, tmp, nodes: int, topology: str, shards: int):
        self.tmp, self.shards = tmp, shards
        self.sock = tmp / "fabric.sock"
        self.stats, self.trace, self.log = tmp / "stats.json", tmp / "trace.txt", tmp / "fabric.log"
        self.owner = sh.node_shards(nodes, shards)
        lines = [f"socket {self.sock}", f"stats {self.stats}", f"trace {self.trace}",
                 f"nodes {nodes}", f"topology {topology}"]
        if shards > 1:
            lines.append(f"shards {shards}")
            lines += [f"node {n} shard={s}" for n, s in enumerate(self.owner)]
        conf = tmp / "fabric.conf"
        conf.write_text("\n".join(lines) + "\n")
        # leaks at exit are not errors here (the process ends, and Open MPI keeps some)
        env = dict(sh.mpirun_env(), ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
                   UBSAN_OPTIONS="print_stacktrace=1")
        if shards > 1:
            cmd = sh.mpirun_command(sh.fabric_mpi(binary), conf, shards)
        else:
            cmd = [str(binary), str(conf)]
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                     env=env)
        Sharded.started.append(self)

    def listening(self) -> None:
        """mpirun, with ASan, can take seconds to start the shards (minutes on a busy
        host)."""
        socks = {self.sock_for(n) for n in range(len(self.owner))}
        for _ in range(3000):
            if all(p.exists() for p in socks) or self.proc.poll() is not None:
                return
            time.sleep(0.1)

    def sock_for(self, node: int):
        return sh.shard_path(self.sock, self.owner[node]) if self.shards > 1 else self.sock

    def wait(self) -> str:
        assert self.proc.wait(timeout=60) == 0, self.log.read_text()
        log = self.log.read_text()
        assert not [e for e in SANITIZER_ERRORS if e in log], log
        return log


@pytest.fixture(autouse=True)
def no_fabric_left():
    """Whatever a test leaves running (a failed assertion) is ended: mpirun ends its
    shards (and a shard whose mpirun is gone ends itself)."""
    yield
    for f in Sharded.started:
        if f.proc.poll() is None:
            f.proc.terminate()
            try:
                f.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                f.proc.kill()
                f.proc.wait()
    Sharded.started.clear()


def run(binary, tmp, name: str, shards: int, seed: int):
    nodes, topology, broadcast = TOPOLOGIES[name]
    folder = tmp / f"{name}-{shards}"
    folder.mkdir()
    f = Sharded(binary, folder, nodes, topology, shards)
    f.listening()
    got = run_scripted(f.sock_for, nodes, seed, broadcast=broadcast)
    log = f.wait()
    stats = json.loads(f.stats.read_text())
    return got, f.trace.read_text(), stats, log


@pytest.mark.parametrize("seed", [7, 21])
@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_shards_deliver_what_one_fabric_does(fabric_binary, tmp_path, name, seed):
    one, one_trace, one_stats, _ = run(fabric_binary, tmp_path, name, 1, seed)
    assert sum(map(len, one)) > 20, one          # the traffic crossed every way
    counts = [2, 4] if TOPOLOGIES[name][0] >= 4 else [2]
    for shards in counts:
        got, trace, stats, log = run(fabric_binary, tmp_path, name, shards, seed)
        assert got == one, shards
        assert trace == one_trace, shards
        assert stats["networks"] == one_stats["networks"]
        assert stats["drops"] == one_stats["drops"]
        assert stats["causality_violations"] == 0
        assert "exchanges with the other shards" in log
        for a, b in zip(stats["nodes"], one_stats["nodes"]):
            for key in ("frames_sent", "bytes_sent", "frames_received", "bytes_received"):
                assert a[key] == b[key], (shards, a, b)


def test_different_traffic_gives_different_deliveries(fabric_binary, tmp_path):
    """The comparison above can fail: another seed's traffic is not the same."""
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    assert run(fabric_binary, tmp_path / "a", "switch", 2, 7)[0] != \
        run(fabric_binary, tmp_path / "b", "switch", 2, 8)[0]


def test_a_node_at_the_wrong_shard_is_refused(fabric_binary, tmp_path):
    f = Sharded(fabric_binary, tmp_path, 2, TOPOLOGIES["p2p"][1], 2)
    f.listening()
    m = FakeNode(sh.shard_path(f.sock, 0), 1).recv()
    assert m["type"] == wire.ERROR, m
    assert "HELLO from node 1, which shard 1 serves (this is shard 0)" in m["text"]
    f.proc.terminate()
    f.proc.wait(timeout=30)


def test_a_killed_shard_is_named_and_the_others_end(fabric_binary, tmp_path):
    f = Sharded(fabric_binary, tmp_path, 2, TOPOLOGIES["p2p"][1], 2)
    f.listening()
    nodes = [FakeNode(f.sock_for(n), n) for n in range(2)]
    for x in nodes:
        x.welcome()
    pids = subprocess.run(["pgrep", "-f", "-P", str(f.proc.pid), "retrolink-fabric-mpi"],
                          capture_output=True, text=True).stdout.split()
    assert len(pids) == 2, pids
    subprocess.run(["kill", "-9", pids[1]])
    assert f.proc.wait(timeout=60) != 0
    time.sleep(0.2)
    log = f.log.read_text()
    assert "exited on signal 9" in log, log


@pytest.mark.parametrize("lines, message", [
    ("shards 2\nnode 0 shard=0\nnode 1 shard=0\n", "shard 1 serves no VM node"),
    ("shards 2\nnode 0 shard=0\nnode 1 shard=2\n", "node 1 is in shard 2, but there are 2"),
    ("shards 0\n", "shards: expected 1.."),
])
def test_bad_shard_configurations_are_refused(fabric_binary, tmp_path, lines, message):
    conf = tmp_path / "c.conf"
    conf.write_text(f"socket {tmp_path}/s\nnodes 2\n{TOPOLOGIES['p2p'][1] and 'topology ' + TOPOLOGIES['p2p'][1]}\n{lines}")
    r = subprocess.run([str(fabric_binary), "--check", str(conf)], capture_output=True,
                       text=True, timeout=10)
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_the_plain_fabric_refuses_shards(fabric_binary, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(f"socket {tmp_path}/s\nnodes 2\ntopology {TOPOLOGIES['p2p'][1]}\n"
                    "shards 2\nnode 1 shard=1\n")
    r = subprocess.run([str(fabric_binary), str(conf)], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 2 and "built without MPI" in r.stderr, r.stderr


def test_too_few_processes_for_the_shards_are_refused(fabric_binary, tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text(f"socket {tmp_path}/s\nnodes 3\ntopology {TOPOLOGIES['hub'][1]}\n"
                    "shards 3\nnode 1 shard=1\nnode 2 shard=2\n")
    cmd = sh.mpirun_command(sh.fabric_mpi(fabric_binary), conf, 2)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=sh.mpirun_env())
    assert r.returncode != 0
    assert "the configuration has 3 shards, but 2 fabric processes" in r.stdout + r.stderr
