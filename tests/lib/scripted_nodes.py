"""A cluster of fake nodes whose traffic follows only from what the fabric delivers
(never from when grants come): each node sends a planned set of frames, and answers
every frame it receives after its reaction time, for a few hops. Run against one
fabric and against the same configuration in shards, every delivery must be the same
(docs/fabric.md, "Shards")."""
import heapq
import random
import threading
from pathlib import Path

from fakenode import FakeNode

from retrolink import wire

LAST_TIME = 2**63     # a grant this far: nothing can arrive any more


class ScriptedNode(threading.Thread):
    def __init__(self, sock: Path, node: int, nodes: int, seed: int, reaction_ns: int,
                 frames: int, hops: int, broadcast: bool):
        super().__init__(daemon=True)
        self.sock, self.node, self.reaction, self.hops = sock, node, reaction_ns, hops
        rnd = random.Random(seed * 1000 + node)
        t, self.plan = 0, []
        for i in range(frames):
            t += rnd.choice([0, 700, 3000, 20_000])
            dst = rnd.choice([d for d in range(nodes) if d != node])
            if broadcast and rnd.random() < 0.2:
                dst = wire.BROADCAST
            self.plan.append((t, (0, i), dst, bytes([0, node, i]) * rnd.choice([4, 30, 300])))
        self.got: list[tuple] = []
        self.error: BaseException | None = None

    def run(self):
        try:
            self._run()
        except BaseException as e:      # the test reads it
            self.error = e

    def _run(self):
        x = FakeNode(self.sock, self.node, reaction_ns=self.reaction)
        x.s.settimeout(120)
        grant = x.welcome()
        todo = list(self.plan)
        heapq.heapify(todo)
        pending, seen, t, seq = [], 0, 0, 0
        while True:
            pending += x.delivered[seen:]
            seen = len(x.delivered)
            # a delivery before the grant: every one before it has come (the grant rule)
            now = sorted((d for d in pending if d["time"] < grant),
                         key=lambda d: (d["time"], d["seq"]))
            pending = [d for d in pending if d["time"] >= grant]
            for d in now:
                if d["payload"][0] < self.hops:
                    reply = bytes([d["payload"][0] + 1]) + d["payload"][1:]
                    heapq.heappush(todo, (d["time"] + self.reaction, (1, d["seq"]), d["src"],
                                          reply))
            while todo and todo[0][0] <= grant:
                ready, _, dst, payload = heapq.heappop(todo)
                x.send(ready, dst, payload, seq=seq)
                seq += 1
            if grant >= LAST_TIME:
                break
            t = grant
            promise = min([todo[0][0]] if todo else [wire.NEVER])
            promise = min([promise] + [d["time"] + self.reaction for d in pending])
            x.sync(t, max(promise, t))
            grant = x.grant
        x.raw(wire.bye(self.node, t))
        x.close()
        self.got = [(d["time"], d["src"], d["dst"], d["net"], d["payload"].hex())
                    for d in x.delivered]


def run_scripted(sock_for, nodes: int, seed: int, reaction_ns=2000, frames=10, hops=3,
                 broadcast=False) -> list[list[tuple]]:
    """Every node's deliveries, in the order it received them. sock_for(node): the
    socket that node connects to."""
    threads = [ScriptedNode(sock_for(n), n, nodes, seed, reaction_ns, frames, hops, broadcast)
               for n in range(nodes)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
        assert not th.is_alive(), f"node {th.node} did not finish in 300 s"
        if th.error:
            raise th.error
    return [th.got for th in threads]
