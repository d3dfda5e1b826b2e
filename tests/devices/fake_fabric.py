"""A scripted fabric for device tests under qtest: one node, served from a thread (the
node blocks inside QEMU while it waits for a grant, and the test is waiting for QEMU)."""
import socket
import threading
from pathlib import Path

from retrolink import wire


class FakeFabric(threading.Thread):
    def __init__(self, path: Path, nodes: int, first_grant: int, on_sync):
        """on_sync(sync_message) returns the messages to send back (deliveries, then a
        grant). Everything the node sends is kept in self.received, in order."""
        super().__init__(daemon=True)
        self.nodes, self.first_grant, self.on_sync = nodes, first_grant, on_sync
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(str(path))
        self.listener.listen(1)
        self.listener.settimeout(60)
        self.received: list[dict] = []
        self.error: Exception | None = None
        self.start()

    def run(self):
        try:
            conn, _ = self.listener.accept()
            conn.settimeout(120)
            hello = wire.unpack(conn.recv(70000))
            self.received.append(hello)
            conn.sendall(wire.welcome(hello["node"], self.first_grant, self.nodes))
            while True:
                data = conn.recv(70000)
                if not data:
                    return
                m = wire.unpack(data)
                self.received.append(m)
                if m["type"] == wire.SYNC:
                    for out in self.on_sync(m):
                        conn.sendall(out)
                elif m["type"] == wire.BYE:
                    return
        except Exception as e:       # reported by the test through self.error
            self.error = e

    def of_type(self, msg_type: int) -> list[dict]:
        return [m for m in self.received if m["type"] == msg_type]
