"""Fake nodes speaking the wire protocol to a real fabric process, no QEMU."""
import json
import os
import random
import select
import socket
import subprocess
import time
from pathlib import Path

from retrolink import wire


class FakeNode:
    def __init__(self, sock_path: Path, node: int, reaction_ns=10_000, granularity_ns=1,
                 ports: list[tuple[int, str]] | None = None):
        """ports: (network id, protocol name) for each ATTACH after HELLO; None: attach
        nothing (network 0 only, the single-network form)."""
        self.node = node
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.connect(self.s, sock_path)
        self.s.settimeout(3)
        self.s.sendall(wire.hello(node, reaction_ns, granularity_ns, name=f"fake{node}",
                                  ports=len(ports or ())))
        for net, protocol in ports or ():
            self.s.sendall(wire.attach(node, net, wire.PROTOCOLS[protocol]))
        self.delivered: list[dict] = []
        self.notices: list[int] = []    # a hub's notices of our frames: their times
        self.notice_nets = 0            # from WELCOME: the networks that send them
        self.awaiting = 0               # frames sent whose notice has not come
        self.links: list[dict] = []
        self.grant = None
        self.t = 0                      # the last time it reported

    @staticmethod
    def connect(s: socket.socket, sock_path: Path) -> None:
        """Connect, waiting for the fabric to listen."""
        for _ in range(200):
            try:
                s.connect(str(sock_path))
                return
            except (FileNotFoundError, ConnectionRefusedError):
                time.sleep(0.01)
        s.connect(str(sock_path))

    def recv(self) -> dict:
        data = self.s.recv(70000)
        if not data:
            raise ConnectionError("the fabric closed the connection")
        m = wire.unpack(data)
        if m["type"] == wire.DELIVER and m["src"] == self.node:
            self.notices.append(m["time"])      # docs/fabric.md, "hub"
            self.awaiting -= 1
        elif m["type"] == wire.DELIVER:
            self.delivered.append(m)
        elif m["type"] == wire.LINK:
            self.links.append(m)
        return m

    def welcome(self) -> int:
        m = self.recv()
        assert m["type"] == wire.WELCOME, m
        self.notice_nets = m["notice_nets"]
        self.grant = m["time"]
        return m["time"]

    def report(self, time_ns: int, promise_ns: int) -> None:
        """Say SYNC without waiting for the grant (another node may have to act first)."""
        self.t = time_ns
        self.s.sendall(wire.sync(self.node, time_ns, promise_ns))

    def sync(self, time_ns: int, promise_ns: int) -> int:
        """Report, then wait for the next grant (collecting deliveries)."""
        self.report(time_ns, promise_ns)
        return self.wait_grant()

    def wait_grant(self) -> int:
        while not self.step():
            pass
        return self.grant

    def step(self) -> bool:
        """Take one message; True if it was a grant."""
        m = self.recv()
        if m["type"] == wire.ERROR:
            raise ConnectionError(m["text"])
        if m["type"] != wire.GRANT:
            return False
        # a grant is a promise about the past too: it never goes back
        assert self.grant is None or m["time"] >= self.grant, (m["time"], self.grant)
        self.grant = m["time"]
        return True

    def send(self, ready_ns: int, dst: int, payload: bytes, seq=0, net=0):
        self.s.sendall(wire.frame(self.node, ready_ns, dst, payload, seq, net=net))
        self.awaiting += self.notice_nets >> net & 1

    def raw(self, data: bytes):
        self.s.sendall(data)

    def close(self):
        self.s.close()


class Fabric:
    def __init__(self, binary: Path, tmp: Path, config: str):
        self.sock = tmp / "fabric.sock"
        self.stats = tmp / "stats.json"
        self.conf = tmp / "fabric.conf"
        self.conf.write_text(f"socket {self.sock}\nstats {self.stats}\n" + config)
        self.log = tmp / "fabric.log"
        # leaks at exit are not errors here (the process ends); everything else is
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0",
                   UBSAN_OPTIONS="print_stacktrace=1")
        self.proc = subprocess.Popen([str(binary), str(self.conf)], stdout=open(self.log, "w"),
                                     stderr=subprocess.STDOUT, env=env)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=10)
        return self.log.read_text()


NEVER = 2**64 - 1


def cluster(fabric, nodes: int, topology: str) -> tuple[Fabric, list[FakeNode]]:
    """A fabric (the test's fixture) with fake nodes 0..nodes-1 on one topology line
    ("KIND key=value ..."), every one welcomed."""
    f = fabric(f"nodes {nodes}\ntopology {topology}\n")
    n = [FakeNode(f.sock, i) for i in range(nodes)]
    for x in n:
        x.welcome()
    return f, n


def run_until(nodes: list[FakeNode], running: list[int], done) -> None:
    """After the test's frames are sent: the nodes not running say they will send nothing
    more; the running ones report their grant (promising nothing) as soon as they get it,
    each on its own (a node's next grant may need another's report), until done(). A
    node waiting for a notice of its frames runs too: the notice is an arrival at it,
    and its peers' grants wait for it to get past it."""
    running = [i for i, x in enumerate(nodes) if i in running or x.awaiting]
    for i, x in enumerate(nodes):
        if i not in running:
            x.report(0, NEVER)
    socks = {nodes[i].s: nodes[i] for i in running}
    for x in socks.values():
        x.report(x.grant, NEVER)
    while not done():
        ready, _, _ = select.select(list(socks), [], [], 3)
        assert ready, "no grant for 3 s"
        for s in ready:
            # a grant of NEVER: nothing can arrive any more, it runs free
            if socks[s].step() and socks[s].grant != NEVER:
                socks[s].report(socks[s].grant, NEVER)


def run_until_delivered(nodes: list[FakeNode], expected: dict[int, int]) -> None:
    """run_until node i has had expected[i] frames delivered, for every i in expected."""
    run_until(nodes, list(expected),
              lambda: all(len(nodes[i].delivered) >= want for i, want in expected.items()))


def finish(fabric: Fabric, nodes: list[FakeNode]) -> dict:
    """Every node says BYE at its last reported time; the fabric ends and its stats are
    returned."""
    for x in nodes:
        x.raw(wire.bye(x.node, x.t))
    assert fabric.proc.wait(timeout=10) == 0
    return json.loads(fabric.stats.read_text())


def check_config(binary: Path, tmp: Path, config: str) -> subprocess.CompletedProcess:
    """retrolink-fabric --check on a configuration (its socket line added)."""
    conf = tmp / "check.conf"
    conf.write_text(f"socket {tmp}/s\n" + config)
    return subprocess.run([str(binary), "--check", str(conf)], capture_output=True, text=True,
                          timeout=10)


def random_traffic(fabric, topology: str, seed: int, nodes=4, frames=12, broadcast=0.0):
    """Each node sends `frames` frames at pseudo-random times and sizes to pseudo-random
    others (a share of them broadcast); runs until everything is over. Returns every
    delivery (time, src, dst, payload, receiver) sorted, the stats, and the copies sent (a
    broadcast counts once per receiver)."""
    rnd = random.Random(seed)
    f, n = cluster(fabric, nodes, topology)
    sent = 0
    for src in range(nodes):
        t = 0
        for seq in range(frames):
            t += rnd.choice([0, 0, 500, 3000, 20_000])
            dst = rnd.choice([d for d in range(nodes) if d != src])
            if rnd.random() < broadcast:
                dst = wire.BROADCAST
            n[src].send(t, dst, bytes([src, seq]) * rnd.choice([10, 30, 400, 757]), seq=seq)
            sent += nodes - 1 if dst == wire.BROADCAST else 1
    # once nothing is left to deliver every grant is NEVER
    run_until(n, list(range(nodes)), lambda: min(x.grant for x in n) == NEVER)
    got = sorted((d["time"], d["src"], d["dst"], d["payload"], x.node)
                 for x in n for d in x.delivered)
    return got, finish(f, n), sent
