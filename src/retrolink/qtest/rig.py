"""A board under qtest, the test being its driver: QEMU started with the device, its BARs
mapped; on a fake fabric (the device is node 0 of `nodes`) or alone. Each board's test
rig (tests/boards/<board>/) builds on this with its registers and memory layout."""
import threading
from pathlib import Path

from retrolink import wire
from retrolink.qtest.client import Qtest
from retrolink.qtest.fake_fabric import FakeFabric

FIRST_GRANT = 1_000_000


class DeviceRig:
    def __init__(self, qemu: Path, tmp_path: Path, device: str, pci_id: tuple[int, int] | None,
                 bars: dict[int, int], props: str = "", fabric: bool = True,
                 fabric_props: str = "", nodes: int = 2, on_sync=None, extra=(), env=None,
                 name: str = "qemu", qmp: bool = False, incoming: Path | None = None,
                 notice_nets: int = 0, machine: str = "q35"):
        """pci_id: the PCI card's, whose BARs the rig maps at bars; None for a card the
        machine maps itself (an SBus card on `machine` retrolink-SS-5).
        props: the device's properties; fabric_props: more of them when it is on the
        fabric. on_sync: the fake fabric's answer to each SYNC (by default a grant to run
        free). incoming: load that state file (QEMU waits paused; BARs come with it).
        notice_nets: the networks whose frames the fake fabric's WELCOME says earn notices
        (the test delivers them)."""
        self.fabric = None
        if fabric:
            sock = tmp_path / f"{name}.sock"
            self.fabric = FakeFabric(sock, nodes, FIRST_GRANT,
                                     on_sync or (lambda m: [wire.grant(0, wire.NEVER)]),
                                     notice_nets)
            props = ",".join(x for x in (f"node=0,fabric={sock}", fabric_props, props) if x)
        args = ["-device", device + (f",{props}" if props else "")]
        if incoming:
            extra = [*extra, "-incoming", f"file:{incoming}"]
        self.log = tmp_path / f"{name}.log"
        self.q = Qtest(qemu, [*args, *extra], self.log, env=env, qmp=qmp, machine=machine)
        if not incoming and pci_id:
            self.q.map_bars(self.q.find_pci(*pci_id), bars)

    def close(self):
        """Stop QEMU and the fake fabric, which must have seen no broken rule."""
        status = self.q.close()
        if self.fabric:
            self.fabric.stop()
            assert not self.fabric.violations, self.fabric.violations
        return status


class ScriptedRig(DeviceRig):
    """A DeviceRig whose fake fabric the test plays: it sees the board's frames
    (frames(), parsed by `parse`) and delivers frames to it at chosen times (deliver(), or
    `frames` at the first sync)."""
    # the board hands every frame to the link no earlier than its promise: close() checks
    # that the link port never had to move one (a board whose promise it has in full)
    CHECK_PROMISE = False

    def __init__(self, qemu: Path, tmp_path: Path, device: str, pci_id: tuple[int, int],
                 bars: dict[int, int], parse, frames=(), step: int | None = None,
                 react=None, **kw):
        """frames: (arrival, src, payload) delivered at the node's first sync. step: after
        that, grant step ns at a time (so that deliver() and react reach the board at
        each sync point), else run free. react(rig, now): called at each sync point
        before the deliveries go (it may deliver()). kw: DeviceRig's."""
        self.lock = threading.Lock()
        self.queue = [(at, src, data) for at, src, data in frames]
        self.seq = 0
        self.step, self.react = step, react
        self.parse = parse
        self.sync_times: list[int] = []
        self.delivered: list[tuple[int, int, bytes]] = []      # (arrival, src, payload)
        super().__init__(qemu, tmp_path, device, pci_id, bars, on_sync=self._on_sync, **kw)

    def _on_sync(self, m: dict) -> list[bytes]:
        now = m["time"]
        with self.lock:
            self.sync_times.append(now)
            if self.react:
                self.react(self, now)
            out = []
            for at, src, data in sorted(self.queue, key=lambda x: x[0]):
                out.append(wire.deliver(0, max(at, now), src, data, seq=self.seq))
                self.delivered.append((max(at, now), src, data))
                self.seq += 1
            self.queue.clear()
        return [*out, wire.grant(0, wire.NEVER if self.step is None else now + self.step)]

    def close(self):
        status = super().close()
        if self.CHECK_PROMISE:
            assert "before the promise" not in self.log.read_text()
        return status

    def deliver(self, at: int, src: int, payload: bytes) -> None:
        """A frame from node src, arriving at `at` (or at the next sync point, if later)."""
        with self.lock:
            self.queue.append((at, src, payload))

    def frames(self) -> list[dict]:
        """The board's frames so far: the fabric's FRAME fields and the parsed header."""
        return [dict(m, **self.parse(m["payload"])) for m in self.fabric.of_type(wire.FRAME)]

    def wait_frames(self, count: int) -> list[dict]:
        self.fabric.wait_for(wire.FRAME, count)
        return self.frames()
