"""A board under qtest, the test being its driver: QEMU started with the device, its BARs
mapped; on a fake fabric (the device is node 0 of `nodes`) or alone. Each board's test
rig (tests/boards/<board>/) builds on this with its registers and memory layout."""
from pathlib import Path

from retrolink import wire
from retrolink.qtest.client import Qtest
from retrolink.qtest.fake_fabric import FakeFabric

FIRST_GRANT = 1_000_000


class DeviceRig:
    def __init__(self, qemu: Path, tmp_path: Path, device: str, pci_id: tuple[int, int],
                 bars: dict[int, int], props: str = "", fabric: bool = True,
                 fabric_props: str = "", nodes: int = 2, on_sync=None, extra=(), env=None,
                 name: str = "qemu", qmp: bool = False, incoming: Path | None = None):
        """props: the device's properties; fabric_props: more of them when it is on the
        fabric. on_sync: the fake fabric's answer to each SYNC (by default a grant to run
        free). incoming: load that state file (QEMU waits paused; BARs come with it)."""
        self.fabric = None
        if fabric:
            sock = tmp_path / f"{name}.sock"
            self.fabric = FakeFabric(sock, nodes, FIRST_GRANT,
                                     on_sync or (lambda m: [wire.grant(0, wire.NEVER)]))
            props = ",".join(x for x in (f"node=0,fabric={sock}", fabric_props, props) if x)
        args = ["-device", device + (f",{props}" if props else "")]
        if incoming:
            extra = [*extra, "-incoming", f"file:{incoming}"]
        self.log = tmp_path / f"{name}.log"
        self.q = Qtest(qemu, [*args, *extra], self.log, env=env, qmp=qmp)
        if not incoming:
            self.q.map_bars(self.q.find_pci(*pci_id), bars)

    def close(self):
        """Stop QEMU and the fake fabric, which must have seen no broken rule."""
        status = self.q.close()
        if self.fabric:
            self.fabric.stop()
            assert not self.fabric.violations, self.fabric.violations
        return status
