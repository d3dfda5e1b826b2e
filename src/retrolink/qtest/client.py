"""A small client for QEMU's qtest protocol (-accel qtest): drive a device's registers
and the virtual clock from a test, with no guest code running."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PCI_CONFIG_ADDR, PCI_CONFIG_DATA = 0xCF8, 0xCFC


class QtestError(Exception):
    """QEMU answered a command with FAIL/ERR, or the session broke (subclasses)."""


class QtestClosed(QtestError):
    """QEMU closed the qtest connection (it exited, with this status)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class QtestTimeout(QtestError):
    """No reply within the session's timeout: QEMU hangs."""


SIZES = {1: "b", 2: "w", 4: "l", 8: "q"}


class Qtest:
    def __init__(self, qemu: Path, extra_args: list[str], log: Path, env: dict | None = None,
                 timeout: float = 60, qmp: bool = False, machine: str = "q35"):
        """Start QEMU with -accel qtest; its stdout and stderr go to log. env is added to
        QEMU's environment; timeout bounds the wait for each reply (QtestTimeout). With
        qmp, a QMP monitor too (self.qmp()). machine: QEMU's -M (a PC, or retrolink-SS-5
        with the sparc QEMU)."""
        self.dir = Path(tempfile.mkdtemp(prefix="rl-qtest-"))
        self.log = log
        self.timeout = timeout
        self.listeners = {}
        for name in ("qtest", "qmp") if qmp else ("qtest",):
            s = self.listeners[name] = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(str(self.dir / f"{name}.sock"))
            s.listen(1)
            extra_args = [f"-{name}", f"unix:{self.dir / f'{name}.sock'}", *extra_args]
        with open(log, "w") as out:
            self.proc = subprocess.Popen(
                [str(qemu), "-M", machine, "-accel", "qtest", "-display", "none", "-nodefaults",
                 "-L", "/usr/share/seabios", "-L", "/usr/share/qemu", *extra_args],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                env=dict(os.environ, **(env or {})))
        self.conn = self._accept("qtest")
        self.buf = b""
        self.async_lines: list[str] = []
        if qmp:
            self.qmp_conn = self._accept("qmp").makefile("rw")
            self.qmp_conn.readline()                    # the greeting
            self.qmp("qmp_capabilities")

    def _accept(self, name: str) -> socket.socket:
        """QEMU connects to each of our sockets as it starts."""
        listener = self.listeners[name]
        listener.settimeout(1)
        deadline = time.monotonic() + max(30, self.timeout)
        while True:
            try:
                conn, _ = listener.accept()
                conn.settimeout(self.timeout)
                return conn
            except TimeoutError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    status = self._stop()
                    raise QtestClosed(f"QEMU did not connect to {name} (exit {status}); log: "
                                      + self.log.read_text(errors="replace"), status)

    def qmp(self, command: str, **arguments) -> dict:
        """One QMP command; its response ({"return": ...} or {"error": ...})."""
        self.qmp_conn.write(json.dumps({"execute": command, "arguments": arguments}) + "\n")
        self.qmp_conn.flush()
        while True:
            reply = json.loads(self.qmp_conn.readline())
            if "event" not in reply:
                return reply

    def _line(self) -> str:
        while b"\n" not in self.buf:
            try:
                data = self.conn.recv(65536)
            except ConnectionResetError:
                data = b""
            except TimeoutError:
                raise QtestTimeout(f"no reply from QEMU within {self.timeout} s") from None
            if not data:
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
                raise QtestClosed("QEMU closed the qtest connection; log: "
                                  + self.log.read_text(errors="replace"), self.proc.returncode)
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace")

    def raw(self, text: str) -> str:
        """Send one command line; return its reply line (OK..., FAIL..., ERR...) as is."""
        try:
            self.conn.sendall(text.encode() + b"\n")
        except (BrokenPipeError, ConnectionResetError):
            pass            # the reply read below reports QEMU's exit
        while True:
            line = self._line()
            if line.startswith("IRQ"):
                self.async_lines.append(line)
                continue
            return line

    def cmd(self, text: str) -> str:
        line = self.raw(text)
        if not line.startswith("OK"):
            raise QtestError(f"{text}: {line}")
        return line[2:].strip()

    def read(self, size: int, addr: int) -> int:
        return int(self.cmd(f"read{SIZES[size]} 0x{addr:x}"), 16)

    def write(self, size: int, addr: int, val: int) -> None:
        self.cmd(f"write{SIZES[size]} 0x{addr:x} 0x{val:x}")

    def readl(self, addr: int) -> int:
        return self.read(4, addr)

    def writel(self, addr: int, val: int) -> None:
        self.write(4, addr, val)

    def readb(self, addr: int) -> int:
        return self.read(1, addr)

    def writeb(self, addr: int, val: int) -> None:
        self.write(1, addr, val)

    def memwrite(self, addr: int, data: bytes) -> None:
        self.cmd(f"write 0x{addr:x} 0x{len(data):x} 0x{data.hex()}")

    def memread(self, addr: int, size: int) -> bytes:
        return bytes.fromhex(self.cmd(f"read 0x{addr:x} 0x{size:x}")[2:])

    def clock_step(self, ns: int | None = None) -> int:
        """Advance the virtual clock by ns (to the next timer without); return the time."""
        return int(self.cmd("clock_step" + (f" {ns}" if ns is not None else "")))

    def clock_set(self, ns: int) -> int:
        """Advance the virtual clock to ns, running every timer due on the way."""
        return int(self.cmd(f"clock_set {ns}"))

    def outl(self, port: int, val: int) -> None:
        self.cmd(f"outl 0x{port:x} 0x{val:x}")

    def inl(self, port: int) -> int:
        return int(self.cmd(f"inl 0x{port:x}"), 16)

    # PCI configuration space through the legacy ports
    def cfg_read(self, dev: int, off: int) -> int:
        self.outl(PCI_CONFIG_ADDR, 0x80000000 | (dev << 11) | (off & 0xFC))
        return self.inl(PCI_CONFIG_DATA)

    def cfg_write(self, dev: int, off: int, val: int) -> None:
        self.outl(PCI_CONFIG_ADDR, 0x80000000 | (dev << 11) | (off & 0xFC))
        self.outl(PCI_CONFIG_DATA, val)

    def find_pci(self, vendor: int, device: int) -> int:
        for dev in range(32):
            if self.cfg_read(dev, 0) == (device << 16) | vendor:
                return dev
        raise QtestError(f"no PCI device {vendor:04x}:{device:04x}")

    def msi_cap(self, dev: int) -> int:
        """The offset of the MSI capability in the function's configuration space."""
        at = self.cfg_read(dev, 0x34) & 0xFF
        while at:
            word = self.cfg_read(dev, at)
            if word & 0xFF == 0x05:
                return at
            at = (word >> 8) & 0xFF
        raise QtestError("no MSI capability")

    def msi_to_ram(self, dev: int, box: int, data: int) -> None:
        """Enable MSI with its message aimed at guest RAM (box), so that a test sees each
        one: `data` written there."""
        cap = self.msi_cap(dev)
        wide = (self.cfg_read(dev, cap) >> 16) & 0x80
        self.memwrite(box, bytes(4))
        self.cfg_write(dev, cap + 4, box)
        if wide:
            self.cfg_write(dev, cap + 8, 0)
        data_at = cap + (12 if wide else 8)
        self.cfg_write(dev, data_at, (self.cfg_read(dev, data_at) & ~0xFFFF) | data)
        self.cfg_write(dev, cap, self.cfg_read(dev, cap) | (1 << 16))     # MSI enable

    def map_bars(self, dev: int, bars: dict[int, int]) -> None:
        for bar, addr in bars.items():
            self.cfg_write(dev, 0x10 + 4 * bar, addr)
        self.cfg_write(dev, 0x04, 0x6)       # memory space + bus master

    def _stop(self) -> int:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for listener in self.listeners.values():
            listener.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode

    def close(self) -> int:
        """Stop QEMU (SIGTERM, as libqtest does); return its exit status."""
        self.conn.close()
        if hasattr(self, "qmp_conn"):
            self.qmp_conn.close()
        return self._stop()
