"""What a node writes on its result port (ttyS1) in command mode, read while it grows.

The init script (guest/rootfs/init) writes a begin marker, the command's output,
an end marker with the command's exit status, then the kernel's log (dmesg). The end
marker carries a per-run nonce that the command never sees on its output, so a command
that prints something like a marker cannot end its own output early.
"""
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

BEGIN = re.compile(r"^@@retrolink-begin node=(\d+)\s*$")


def new_end_marker() -> str:
    """The end marker for one node of one run (16 hex digits: a fixed length, so the
    guest does the same work whatever the nonce is)."""
    return f"@@retrolink-end-{secrets.token_hex(8)}"


@dataclass
class NodeOutput:
    """Incremental reader of one node's output file: each poll() reads only what was
    added since the last one (a command may print megabytes)."""
    path: Path
    end_marker: str
    booted: bool = False
    finished: bool = False
    exit_code: int | None = None
    lines: list[str] = field(default_factory=list)        # the command's output
    kernel_log: list[str] = field(default_factory=list)   # dmesg, after the end marker
    _offset: int = 0
    _partial: bytes = b""

    def poll(self, final: bool = False) -> list[str]:
        """Read what is new; return the new lines of the command's output. final: the
        node has stopped, so a last line without a newline counts too."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return []
        self._offset += len(data)
        data = self._partial + data
        *complete, self._partial = data.split(b"\n")
        if final and self._partial:
            complete.append(self._partial)
            self._partial = b""
        new = []
        for raw in complete:
            line = raw.decode(errors="replace").rstrip("\r")
            if self.finished:
                self.kernel_log.append(line)
            elif not self.booted:
                self.booted = bool(BEGIN.match(line))
            elif (at := line.find(self.end_marker + " rc=")) >= 0:
                # output that did not end its last line has the marker glued to it
                if at:
                    self.lines.append(line[:at])
                    new.append(line[:at])
                self.finished = True
                self.exit_code = int(line[at:].split("rc=", 1)[1])
            else:
                self.lines.append(line)
                new.append(line)
        return new
