"""A small client for QEMU's qtest protocol (-accel qtest): drive a device's registers
and the virtual clock from a test, with no guest code running."""
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PCI_CONFIG_ADDR, PCI_CONFIG_DATA = 0xCF8, 0xCFC


class QtestError(Exception):
    pass


class Qtest:
    def __init__(self, qemu: Path, extra_args: list[str], log: Path):
        self.dir = Path(tempfile.mkdtemp(prefix="rl-qtest-"))
        sock_path = self.dir / "qtest.sock"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(sock_path))
        self.listener.listen(1)
        self.log = log
        self.proc = subprocess.Popen(
            [str(qemu), "-M", "q35", "-accel", "qtest", "-qtest", f"unix:{sock_path}",
             "-display", "none", "-nodefaults", "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
             *extra_args], stdin=subprocess.DEVNULL, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        self.listener.settimeout(30)
        try:
            self.conn, _ = self.listener.accept()
        except TimeoutError:
            self.proc.kill()
            raise QtestError(f"QEMU did not connect to qtest; see {log}: "
                             + log.read_text(errors="replace"))
        self.conn.settimeout(60)
        self.buf = b""
        self.async_lines: list[str] = []

    def _line(self) -> str:
        while b"\n" not in self.buf:
            try:
                data = self.conn.recv(65536)
            except ConnectionResetError:
                data = b""
            if not data:
                self.proc.wait(timeout=10)
                raise QtestError("QEMU closed the qtest connection; log: "
                                 + self.log.read_text(errors="replace"))
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def cmd(self, text: str) -> str:
        try:
            self.conn.sendall(text.encode() + b"\n")
        except (BrokenPipeError, ConnectionResetError):
            pass            # the reply read below reports QEMU's exit
        while True:
            line = self._line()
            if line.startswith("IRQ"):
                self.async_lines.append(line)
                continue
            if not line.startswith("OK"):
                raise QtestError(f"{text}: {line}")
            return line[2:].strip()

    def readl(self, addr: int) -> int:
        return int(self.cmd(f"readl 0x{addr:x}"), 16)

    def writel(self, addr: int, val: int) -> None:
        self.cmd(f"writel 0x{addr:x} 0x{val:x}")

    def readb(self, addr: int) -> int:
        return int(self.cmd(f"readb 0x{addr:x}"), 16)

    def writeb(self, addr: int, val: int) -> None:
        self.cmd(f"writeb 0x{addr:x} 0x{val:x}")

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

    def map_bars(self, dev: int, bars: dict[int, int]) -> None:
        for bar, addr in bars.items():
            self.cfg_write(dev, 0x10 + 4 * bar, addr)
        self.cfg_write(dev, 0x04, 0x6)       # memory space + bus master

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.listener.close()
