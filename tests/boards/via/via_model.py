"""An independent model of the VIA NIC's timing (docs/boards/via.md, "Timing"), from its
parameters as src/retrolink/boards/via.py declares them: the two resources (the DMA
engine, the NIC's engine), each a server that takes one job at a time in the order jobs
are booked, and the steps of a send and a receive on an idle NIC."""
from dataclasses import dataclass, field

from retrolink.boards.via import NicParams, PciParams
from retrolink.qtest.via_regs import R

FRAME = R.VIA_FRAME_PAYLOAD


def ns(n: int, rate: int) -> int:
    """n bytes at rate bytes/s, rounded up to a whole ns."""
    return -(-n * 10**9 // rate)


def defaults() -> dict:
    pci, nic = PciParams(), NicParams()
    return dict(pio_write=pci.pio_write_ns, pio_read=pci.pio_read_ns,
                dma_rate=pci.dma_rate, dma_setup=pci.dma_setup_ns,
                desc=nic.desc_ns, frame=nic.frame_ns)


def props(p: dict) -> str:
    return (f"pio-write-ns={p['pio_write']},pio-read-ns={p['pio_read']},"
            f"dma-rate={p['dma_rate']},dma-setup-ns={p['dma_setup']},desc-ns={p['desc']},"
            f"frame-ns={p['frame']}")


@dataclass
class Nic:
    p: dict
    dma_free: int = 0
    nic_free: int = 0
    log: list = field(default_factory=list)

    def dma(self, ready: int, nbytes: int) -> int:
        """One DMA transfer: dma-setup-ns and its bytes at dma-rate."""
        self.dma_free = max(ready, self.dma_free) + self.p["dma_setup"] + \
            ns(nbytes, self.p["dma_rate"])
        return self.dma_free

    def engine(self, ready: int, cost: int) -> int:
        self.nic_free = max(ready, self.nic_free) + cost
        return self.nic_free

    def fetch(self, ready: int, segs: int) -> int:
        """A descriptor's fetch (control segment and segments) and its check."""
        return self.engine(self.dma(ready, 32 + 16 * segs), self.p["desc"])

    def send(self, ready: int, length: int, segs: int = 1, copies: int = 1) -> list[int]:
        """The times each frame (each copy) of a message leaves, its post's store having
        ended at ready: fetch and check, then each piece's DMA, each frame's build."""
        start = self.fetch(ready, segs)
        out, off, t = [], 0, start
        while True:
            n = min(FRAME, length - off)
            t = self.dma(t, n) if n else t
            for _ in range(copies):
                out.append(self.engine(t, self.p["frame"]))
            off += n
            if off >= length:
                return out

    def error_send(self, ready: int, segs: int = 1) -> int:
        """A send that fails its check: its Status (4 bytes) written after the check."""
        return self.dma(self.fetch(ready, segs), 4)

    def ack(self, arrival: int) -> tuple[int, int]:
        """An ACK arrives: (its check's end, the send's Status written)."""
        c = self.engine(arrival, self.p["frame"])
        return c, self.dma(c, 4)

    def status(self, ready: int, receive: bool = False) -> int:
        return self.dma(ready, 12 if receive else 4)

    def cqe(self, ready: int) -> int:
        return self.dma(ready, 8)

    def receive(self, arrivals: list[tuple[int, int]], segs: int = 1) -> tuple[int, int]:
        """Frames (arrival, payload bytes) of one message: (its receive Status written,
        the ACK leaving)."""
        ready = 0
        end = 0
        for i, (at, n) in enumerate(arrivals):
            c = self.engine(at, self.p["frame"])
            if i == 0:
                ready = self.fetch(c, segs)
            end = self.dma(max(c, ready), n) if n else max(c, ready)
        w = self.status(end, receive=True)
        return w, self.engine(w, self.p["frame"])
