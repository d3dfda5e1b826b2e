"""A scripted fabric for device tests under qtest: one node, served from a thread (the
node blocks inside QEMU while it waits for a grant, and the test is waiting for QEMU).

It holds the node to the rules the real fabric enforces (fabric/core/proto.c, fabric/core/main.c)
and to two more no correct node breaks: every message the node sends is checked, and
what is wrong is kept in self.violations (a malformed message from the board)."""
import socket
import threading
import time
from pathlib import Path

from retrolink import wire

HEADER, SYNC_SIZE = 24, 32
FRAME_HEADER = wire.ffi.sizeof("struct rl_frame")
ATTACH_SIZE = wire.ffi.sizeof("struct rl_attach")
MAX_MESSAGE = FRAME_HEADER + 65536


class FakeFabric(threading.Thread):
    def __init__(self, path: Path, nodes: int, first_grant: int, on_sync, notice_nets=0):
        """on_sync(sync_message) returns the messages to send back (deliveries, then a
        grant). Everything the node sends is kept in self.received, in order. notice_nets:
        the networks WELCOME says send notices (a hub's, docs/fabric.md)."""
        super().__init__(daemon=True)
        self.nodes, self.first_grant, self.on_sync = nodes, first_grant, on_sync
        self.notice_nets = notice_nets
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(str(path))
        self.listener.listen(1)
        self.listener.settimeout(60)
        self.received: list[dict] = []
        self.violations: list[str] = []
        self.error: Exception | None = None
        self.node = None
        self.grant = first_grant
        self.granularity = 1
        self.last_sync = 0
        self.last_ready = 0
        self.start()

    def run(self):
        try:
            conn, _ = self.listener.accept()
            conn.settimeout(120)
            data = conn.recv(MAX_MESSAGE + 1)
            if not data:
                return        # QEMU quit during setup (a configuration it refused): no HELLO due
            hello = self.check(data, expect_hello=True)
            if hello is None:
                return
            self.node, self.granularity = hello["node"], max(1, hello["granularity"])
            # the node's ports, one ATTACH each (kept in self.received)
            self.ports = []
            for _ in range(hello["ports"]):
                m = self.check(conn.recv(MAX_MESSAGE + 1), expect=wire.ATTACH)
                if m is None:
                    return
                self.ports.append((m["net"], m["protocol"]))
            conn.sendall(wire.welcome(hello["node"], self.first_grant, self.nodes,
                                      self.notice_nets))
            while True:
                try:
                    data = conn.recv(MAX_MESSAGE + 1)
                except ConnectionResetError:
                    # the node exited with messages it had stopped reading (it had
                    # dropped the connection after a malformed one)
                    return
                if not data:
                    return
                m = self.check(data)
                if m is None:
                    continue
                if m["type"] == wire.SYNC:
                    for out in self.on_sync(m):
                        self.sent(out)
                        conn.sendall(out)
                elif m["type"] == wire.BYE:
                    return
        except Exception as e:       # reported by the test through self.error
            self.error = e

    def stop(self) -> None:
        """End the thread, whether it waits for the node to connect or to speak."""
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.join(timeout=10)

    def sent(self, out: bytes) -> None:
        """Note a message on its way to the node (its grants bound the next SYNC)."""
        if len(out) == HEADER and wire.unpack(out)["type"] == wire.GRANT:
            self.grant = max(self.grant, wire.unpack(out)["time"])

    def violation(self, why: str) -> None:
        self.violations.append(why)

    def check(self, data: bytes, expect_hello: bool = False, expect=None) -> dict | None:
        """Parse and check one message from the node; None (and a violation) if it is
        malformed, else the message, which is kept in self.received."""
        if len(data) < HEADER:
            self.violation(f"message of {len(data)} bytes is shorter than a header")
            return None
        m = wire.unpack(data)
        kind = m["type"]
        if m["magic"] != wire.MAGIC or m["version"] != wire.VERSION:
            self.violation(f"bad magic 0x{m['magic']:x} or version {m['version']}")
            return None
        if m["length"] != len(data):
            self.violation(f"length field {m['length']} but {len(data)} bytes received")
            return None
        if expect_hello != (kind == wire.HELLO):
            self.violation(f"message type {kind} where {'HELLO' if expect_hello else 'no HELLO'}"
                           " was due")
            return None
        if (expect == wire.ATTACH) != (kind == wire.ATTACH):
            self.violation(f"message type {kind} where {'an' if expect else 'no'} ATTACH was due")
            return None
        if self.node is not None and m["node"] != self.node:
            self.violation(f"node field {m['node']} on node {self.node}'s connection")
        size = {wire.HELLO: 72, wire.SYNC: SYNC_SIZE, wire.BYE: HEADER,
                wire.ATTACH: ATTACH_SIZE}.get(kind)
        if kind not in (wire.HELLO, wire.ATTACH, wire.SYNC, wire.BYE, wire.FRAME):
            self.violation(f"message type {kind} is not one a node may send")
            return None
        if size is not None and len(data) != size:
            self.violation(f"message type {kind} of {len(data)} bytes, expected {size}")
            return None
        if kind == wire.FRAME:
            if len(data) < FRAME_HEADER or m["len"] != len(data) - FRAME_HEADER:
                self.violation(f"FRAME payload length {m.get('len')} does not match "
                               f"{len(data)} bytes")
                return None
            self.check_frame_header(m)
        elif kind == wire.SYNC:
            if not self.last_sync <= m["time"] <= self.grant + self.granularity - 1:
                self.violation(f"SYNC time {m['time']} outside [{self.last_sync}, grant "
                               f"{self.grant}]")
            if m["promise"] < m["time"]:
                self.violation(f"SYNC promise {m['promise']} earlier than its time {m['time']}")
            self.last_sync = m["time"]
        self.received.append(m)
        return m

    def check_frame_header(self, m: dict) -> None:
        if m["src"] != m["node"]:
            self.violation(f"FRAME src {m['src']} from node {m['node']}")
        if m["dst"] == m["node"]:
            self.violation(f"FRAME addressed to its sender, node {m['dst']}")
        elif m["dst"] >= self.nodes and m["dst"] != wire.BROADCAST:
            self.violation(f"FRAME to node {m['dst']}, not one of the {self.nodes} nodes")
        if m["time"] < self.last_ready:
            self.violation(f"FRAME ready time {m['time']} went backwards "
                           f"(from {self.last_ready})")
        self.last_ready = max(self.last_ready, m["time"])
        problem = self.check_frame(m)
        if problem:
            self.violation(problem)

    def check_frame(self, m: dict) -> str | None:
        """A board's own rules for its frames' payloads (subclasses); None if fine."""
        return None

    def of_type(self, msg_type: int) -> list[dict]:
        return [m for m in self.received if m["type"] == msg_type]

    def wait_for(self, msg_type: int, count: int = 1, timeout: float = 10) -> list[dict]:
        """The messages of a type once there are count of them: what QEMU sent while a
        command ran may still be on its way to this thread when the reply comes."""
        deadline = time.monotonic() + timeout
        while len(self.of_type(msg_type)) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.of_type(msg_type)


def deliver_on_first_sync(frames, src: int = 1):
    """A fake fabric's on_sync: the given deliveries at the node's first sync, then a grant
    to run free. Each is (arrival, frame) from node src, or (arrival, sender, frame)."""
    state = {"done": False}

    def on_sync(m):
        if state["done"]:
            return [wire.grant(0, wire.NEVER)]
        state["done"] = True
        full = [f if len(f) == 3 else (f[0], src, f[1]) for f in frames]
        return [*(wire.deliver(0, at, sender, data, seq=i)
                  for i, (at, sender, data) in enumerate(full)), wire.grant(0, wire.NEVER)]
    return on_sync
