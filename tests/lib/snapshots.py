"""Snapshots of a QEMU under qtest: save its state to a file (QMP migrate, file: URI),
and find and change the bytes of one device field in such a file.

A field is found from the stream's own description of itself (the JSON "vmdesc" QEMU
appends to a stream, which scripts/analyze-migration.py reads too): the device's section
header by its name, then the field by adding up the sizes of the fields before it. A test
checks the value it finds before changing it, so a wrong offset fails the test instead of
corrupting some other field."""
import json
import struct
import time
from pathlib import Path

import pytest

QEMU_VM_SECTION_FULL = 0x04
QEMU_VM_VMDESCRIPTION = 0x06


def save(q, path: Path, timeout: float = 60) -> dict:
    """Stop the VM and migrate it to path; wait for the end. query-migrate's answer: its
    status is 'completed' or 'failed'."""
    assert q.qmp("stop") == {"return": {}}
    r = q.qmp("migrate", uri=f"file:{path}")
    assert r == {"return": {}}, r
    deadline = time.monotonic() + timeout
    while (status := q.qmp("query-migrate")["return"]).get("status") not in (
            "completed", "failed", "cancelled"):
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
    # the migration thread puts the run state back after it has said how it ended:
    # until then, cont is refused ("Migration is not finalized yet")
    while q.qmp("query-status")["return"]["status"] == "finish-migrate":
        assert time.monotonic() < deadline, "the run state stays finish-migrate"
        time.sleep(0.01)
    return status


def save_completed(q, path: Path, log: Path) -> None:
    """save(), which must complete (else the QEMU log's end says why)."""
    status = save(q, path)
    assert status["status"] == "completed", (status, log.read_text()[-2000:])


def wait_loaded(q, timeout: float = 60) -> str:
    """The run state of a QEMU started with -incoming once it has loaded its state."""
    deadline = time.monotonic() + timeout
    while (status := q.qmp("query-status")["return"]["status"]) == "inmigrate":
        assert time.monotonic() < deadline, "the state did not load"
        time.sleep(0.05)
    return status


def resume(q, timeout: float = 60) -> None:
    """A QEMU started with -incoming: wait until it has loaded its state (paused), then
    let it run."""
    assert wait_loaded(q, timeout) == "paused"
    assert q.qmp("cont") == {"return": {}}


def load_refused(q, log: Path, timeout: float = 60) -> str:
    """The log of a QEMU started with -incoming from a state it must refuse: it exits
    with status 1 (not a signal: a crash), having said the load failed."""
    status = q.proc.wait(timeout=timeout)
    text = log.read_text(errors="replace")
    assert status == 1, (status, text[-3000:])
    assert "load of migration failed" in text, text[-3000:]
    return text


def load_patched(make_rig, state: Path, out: Path, section: str, path: tuple, bad: int,
                 was: int | None = None) -> str:
    """Patch one field of a saved state (checking first that it was `was`), start a rig on
    it (make_rig(state file): a board's test rig on a fake fabric) and return the log of
    the refused load."""
    stream = Stream(state)
    if was is not None:
        assert stream.read(section, *path) == was
    stream.patch(section, *path, value=bad)
    rig = make_rig(stream.write(out))
    try:
        return load_refused(rig.q, rig.log)
    finally:
        rig.q.close()
        rig.fabric.stop()


def corruption_test(cases: dict, section: str, rig_class):
    """A board's test of its corrupted streams, parametrized over cases, each (field path,
    value saved, bad value, what the refusal says): the patched stream of the module's
    `snapshot` fixture is refused, the log saying "<section> node 0: the stream's <what>"
    (rl_board_refuse)."""
    @pytest.mark.parametrize("case", cases)
    def test(artifacts, tmp_path, snapshot, case):
        path, was, bad, said = cases[case]
        log = load_patched(lambda state: rig_class(artifacts, tmp_path, name="dst",
                                                   incoming=state),
                           snapshot[0], tmp_path / "bad.state", section, path, bad, was)
        assert f"{section} node 0: the stream's {said}" in log, log[-3000:]
    return test


class Stream:
    """A migration stream in a file, read whole; patch() changes it in memory, write()
    writes it to a file."""

    def __init__(self, path: Path):
        self.data = bytearray(path.read_bytes())
        self.desc = self._vmdesc()

    def _vmdesc(self) -> dict:
        # QEMU_VM_VMDESCRIPTION, a be32 length, then the JSON to the end of the file
        for at in range(len(self.data) - 5, -1, -1):
            if (self.data[at] == QEMU_VM_VMDESCRIPTION and
                    struct.unpack(">I", self.data[at + 1:at + 5])[0] == len(self.data) - at - 5):
                return json.loads(self.data[at + 5:])
        raise AssertionError("the stream has no vmdesc")

    def section(self, name: str, instance_id: int = 0) -> tuple[int, list]:
        """The offset of the body of the section whose id ends in name ('/retrolink-sx')
        or is name, and its description's fields."""
        devices = [d for d in self.desc["devices"]
                   if (d["name"] == name or d["name"].endswith("/" + name.lstrip("/")))
                   and d["instance_id"] == instance_id]
        assert len(devices) == 1, [d["name"] for d in self.desc["devices"]]
        dev = devices[0]
        idstr = dev["name"].encode()
        # FULL, be32 section id, u8 length, the id, be32 instance id, be32 version id
        header = (bytes([len(idstr)]) + idstr + struct.pack(">II", instance_id, dev["version"]))
        found = [at for at in _find_all(self.data, header)
                 if self.data[at - 5] == QEMU_VM_SECTION_FULL]
        assert len(found) == 1, f"{len(found)} section headers for {dev['name']}"
        return found[0] + len(header), dev["fields"]

    def field(self, section: str, *path, instance_id: int = 0) -> tuple[int, int]:
        """(offset, size) of a field: path is names and element indexes, as in
        field('retrolink-sx', 'tx_wire', 2, 'len')."""
        offset, fields = self.section(section, instance_id)
        return _locate(fields, offset, list(path))

    def read(self, section: str, *path, instance_id: int = 0) -> int:
        at, size = self.field(section, *path, instance_id=instance_id)
        return int.from_bytes(self.data[at:at + size], "big")

    def patch(self, section: str, *path, value: int, instance_id: int = 0) -> None:
        at, size = self.field(section, *path, instance_id=instance_id)
        self.data[at:at + size] = value.to_bytes(size, "big")

    def write(self, path: Path) -> Path:
        path.write_bytes(self.data)
        return path


def _find_all(data: bytes, needle: bytes):
    at = data.find(needle)
    while at >= 0:
        yield at
        at = data.find(needle, at + 1)


def _locate(fields: list, offset: int, path: list) -> tuple[int, int]:
    """Walk a vmdesc field list: each entry covers array_len elements (one if absent) from
    element index (0 if absent), each of 'size' bytes in the stream."""
    name, rest = path[0], path[1:]
    index = 0
    if rest and isinstance(rest[0], int):
        index, rest = rest[0], rest[1:]
    for f in fields:
        count, first = f.get("array_len", 1), f.get("index", 0)
        if f["name"] == name and first <= index < first + count:
            at = offset + (index - first) * f["size"]
            if not rest:
                return at, f["size"]
            assert f["type"] == "struct", f
            return _locate(f["struct"]["fields"], at, rest)
        offset += count * f["size"]
    raise AssertionError(f"no field {name}[{index}] in {[f['name'] for f in fields]}")
