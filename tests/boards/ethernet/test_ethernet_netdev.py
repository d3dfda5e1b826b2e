"""qtest: the retrolink netdev (qemu/net/retrolink-net.c) behind QEMU's e1000, talking
to a scripted fake fabric. The virtual clock moves only when the test steps it, so every
time is exact: a frame leaves at the time of the register write that sent it plus the tx
latency and its DMA, enters the NIC at its arrival plus the rx latency and its DMA, the bus
serves one transfer at a time, destinations come from the MAC scheme, a NIC without a
free buffer drops and counts, and the promises and reaction time are the least costs."""
import re
import struct

import pytest
from helpers import byte_time_ns

from retrolink import wire
from retrolink.qtest.client import Qtest
from retrolink.qtest.fake_fabric import FakeFabric

NEVER = wire.NEVER
REGS = 0xC0000000
TX_RING, RX_RING, TX_BUF, RX_BUF = 0x100000, 0x101000, 0x200000, 0x300000
# e1000 registers (Intel 8254x manual; hw/net/e1000_regs.h)
RCTL, TCTL, RDBAL, RDLEN, RDH, RDT = 0x100, 0x400, 0x2800, 0x2808, 0x2810, 0x2818
TDBAL, TDLEN, TDH, TDT = 0x3800, 0x3808, 0x3810, 0x3818
RCTL_EN, RCTL_UPE, RCTL_MPE, RCTL_BAM, TCTL_EN = 1 << 1, 1 << 3, 1 << 4, 1 << 15, 1 << 1
TXD_EOP, TXD_IFCS, TXD_RS = 0x01, 0x02, 0x08
TX_LAT, RX_LAT, RATE = 1000, 2000, 100_000_000      # DMA: 10 ns per byte


def dma(n):
    return byte_time_ns(n, RATE)


TX_LEAST = TX_LAT + dma(14)             # the least frame routed: an Ethernet header
RX_LEAST = RX_LAT + dma(60)             # the least frame on the wire


def mac(net, node):
    return bytes([0x52, 0x54, 0x00, 0x52, net, node])


def eth(dst: bytes, size: int, fill: int = 0xAB) -> bytes:
    return dst + mac(0, 1) + b"\x08\x00" + bytes([fill]) * (size - 14)


def start(artifacts, tmp_path, first_grant, on_sync, nodes=2, link_up_ns=0, notice_nets=0):
    fabric = FakeFabric(tmp_path / "fabric.sock", nodes, first_grant, on_sync, notice_nets)
    q = Qtest(artifacts.qemu, [
        "-netdev", f"retrolink,id=n0,fabric={tmp_path / 'fabric.sock'},node=0,network=0,"
                   f"tx-latency-ns={TX_LAT},rx-latency-ns={RX_LAT},dma-rate={RATE},"
                   f"link-up-ns={link_up_ns}",
        "-device", "e1000,netdev=n0,mac=52:54:00:52:00:00,romfile="], tmp_path / "qemu.log")
    return fabric, q


def setup_nic(q, rx_buffers=0):
    """Memory decoding and bus mastering on; a tx ring of 8; an rx ring of 8 with
    rx_buffers given to the NIC, accepting every frame."""
    q.map_bars(q.find_pci(0x8086, 0x100E), {0: REGS})
    q.writel(REGS + TDBAL, TX_RING)
    q.writel(REGS + TDLEN, 8 * 16)
    q.writel(REGS + TDH, 0)
    q.writel(REGS + TDT, 0)
    q.writel(REGS + TCTL, TCTL_EN)
    for i in range(8):
        q.memwrite(RX_RING + 16 * i, struct.pack("<QHHBBH", RX_BUF + 2048 * i, 0, 0, 0, 0, 0))
    q.writel(REGS + RDBAL, RX_RING)
    q.writel(REGS + RDLEN, 8 * 16)
    q.writel(REGS + RDH, 0)
    q.writel(REGS + RDT, rx_buffers)
    q.writel(REGS + RCTL, RCTL_EN | RCTL_UPE | RCTL_MPE | RCTL_BAM)


def send(q, frames, first=0):
    """Put frames on the tx ring from descriptor `first` and ring the doorbell once."""
    for i, f in enumerate(frames):
        q.memwrite(TX_BUF + 2048 * (first + i), f)
        q.memwrite(TX_RING + 16 * (first + i), struct.pack(
            "<QHBBBBH", TX_BUF + 2048 * (first + i), len(f), 0, TXD_EOP | TXD_IFCS | TXD_RS,
            0, 0, 0))
    q.writel(REGS + TDT, first + len(frames))


def until(q, t):
    assert q.clock_set(t) == t


def counters(tmp_path) -> dict[str, int]:
    m = re.search(r"retrolink-net n0 \(node 0\): (.*)", (tmp_path / "qemu.log").read_text())
    return {k: int(v) for k, v in (kv.split("=") for kv in m.group(1).split())}


def test_frames_leave_after_latency_and_dma_one_bus_transfer_at_a_time(artifacts, tmp_path,
                                                                       cleanup):
    fabric, q = start(artifacts, tmp_path, 1_000_000, lambda m: [wire.grant(0, NEVER)], nodes=3)
    cleanup((fabric, q))
    until(q, 2_000_000)
    setup_nic(q)
    t0 = 2_500_000
    until(q, t0)
    send(q, [eth(mac(0, 1), 100), eth(mac(0, 2), 1000, 0x11), eth(b"\xff" * 6, 30, 0x22)])
    frames = fabric.wait_for(wire.FRAME, 3)
    first = t0 + TX_LAT + dma(100)
    second = first + dma(1000)               # the bus was busy with the first
    third = second + dma(30)
    assert [(f["time"], f["dst"], f["len"]) for f in frames] == [
        (first, 1, 100), (second, 2, 1000),
        (third, wire.BROADCAST, 60)]         # broadcast: the fabric copies it, padded
    assert frames[0]["payload"] == eth(mac(0, 1), 100)
    assert frames[2]["payload"] == eth(b"\xff" * 6, 30, 0x22) + bytes(30)
    q.close()
    c = counters(tmp_path)
    assert (c["tx_frames"], c["tx_bytes"]) == (3, 1130)


def test_on_a_hub_the_next_frame_waits_for_the_notice_of_the_last(artifacts, tmp_path,
                                                                   cleanup):
    """A network that sends notices (a hub, docs/boards/ethernet.md "Deferral"): the
    netdev hands the fabric one frame and takes the next from QEMU's queue at the notice
    of the first, its costs starting then."""
    notice = []

    def on_sync(m):
        if not notice and fabric.of_type(wire.FRAME):
            notice.append(m["time"] + 100_000)
            return [wire.deliver(0, notice[0], 0, seq=0), wire.grant(0, m["time"] + 1_000_000)]
        return [wire.grant(0, m["time"] + 1_000_000)]

    fabric, q = start(artifacts, tmp_path, 1_000_000, on_sync, notice_nets=1)
    cleanup((fabric, q))
    until(q, 2_000_000)
    setup_nic(q)
    t0 = 2_500_000
    until(q, t0)
    send(q, [eth(mac(0, 1), 100), eth(mac(0, 1), 1000, 0x11)])
    until(q, 3_000_000)
    assert [f["time"] for f in fabric.wait_for(wire.FRAME)] == [t0 + TX_LAT + dma(100)]
    until(q, 4_000_000)
    frames = fabric.wait_for(wire.FRAME, 2)
    assert notice == [3_100_000]
    assert [(f["time"], f["len"]) for f in frames] == [
        (t0 + TX_LAT + dma(100), 100), (notice[0] + TX_LAT + dma(1000), 1000)]
    q.close()
    c = counters(tmp_path)
    assert (c["tx_frames"], c["tx_deferred"], c["causality_violations"]) == (2, 1, 0), c


@pytest.mark.parametrize("dst", [mac(0, 0), mac(0, 7), mac(1, 1), bytes.fromhex("020000000001")],
                         ids=["itself", "no-such-node", "other-network", "outside-the-scheme"])
def test_a_unicast_mac_of_no_other_station_is_dropped_and_counted(artifacts, tmp_path, cleanup,
                                                                 dst):
    fabric, q = start(artifacts, tmp_path, 1_000_000, lambda m: [wire.grant(0, NEVER)])
    cleanup((fabric, q))
    setup_nic(q)
    send(q, [eth(dst, 100), eth(mac(0, 1), 64)])
    frames = fabric.wait_for(wire.FRAME, 1)
    assert [(f["dst"], f["len"]) for f in frames] == [(1, 64)]
    q.close()
    c = counters(tmp_path)
    assert (c["tx_frames"], c["drop_tx_unknown_dest"]) == (1, 1), c


def test_frames_enter_the_nic_after_latency_and_dma_and_a_full_ring_drops(artifacts, tmp_path,
                                                                         cleanup):
    """Two receive buffers, three frames: the third finds none and is dropped (not queued:
    a buffer given back later does not bring it in)."""
    a = 1_200_000_000                        # after e1000's 1 s hold-off following RCTL
    frames = [eth(mac(0, 0), 100, fill) for fill in (1, 2, 3)]
    fabric, q = start(artifacts, tmp_path, 1_000_000,
                      lambda m: [wire.deliver(0, a + 10 * i, 1, f, seq=i)
                                 for i, f in enumerate(frames)] + [wire.grant(0, NEVER)])
    cleanup((fabric, q))
    setup_nic(q, rx_buffers=2)
    first = a + RX_LAT + dma(100)
    second = first + dma(100)                # the bus was busy with the first
    until(q, first - 1)
    assert q.readl(REGS + RDH) == 0
    until(q, first)
    assert q.readl(REGS + RDH) == 1
    assert q.memread(RX_BUF, 100) == frames[0]
    until(q, second - 1)
    assert q.readl(REGS + RDH) == 1
    until(q, second)
    assert q.readl(REGS + RDH) == 2
    until(q, second + dma(100) + 1000)
    q.writel(REGS + RDT, 6)                  # buffers again: the third is gone for good
    until(q, second + 10_000_000)
    assert q.readl(REGS + RDH) == 2
    assert q.memread(RX_BUF + 2048 * 2, 100) == bytes(100)
    q.close()
    c = counters(tmp_path)
    assert (c["rx_frames"], c["rx_bytes"], c["drop_rx_not_ready"]) == (2, 200, 1), c


def test_promise_and_reaction_are_the_least_costs(artifacts, tmp_path, cleanup):
    grants = iter([2_000_000, 3_000_000, NEVER])
    fabric, q = start(artifacts, tmp_path, 1_000_000, lambda m: [wire.grant(0, next(grants))])
    cleanup((fabric, q))
    setup_nic(q)
    until(q, 4_000_000)
    # a hub's notice lets a held frame go at once: no receive cost (ethernet.md)
    assert fabric.of_type(wire.HELLO)[0]["reaction"] == TX_LEAST
    syncs = fabric.of_type(wire.SYNC)
    assert [m["time"] for m in syncs] == [1_000_000, 2_000_000, 3_000_000]
    # under qtest the guest "runs": it could write the doorbell at the very sync point
    assert [m["promise"] - m["time"] for m in syncs] == [TX_LEAST] * 3


def test_no_link_before_the_driver_starts_the_nic_and_link_up_ns_after(artifacts, tmp_path,
                                                                      cleanup):
    """Bus mastering off: no frame before now + link-up-ns + the least send; switched on
    at t: none before t + link-up-ns, and what the NIC sends before is lost; then frames
    leave as usual. This is what lets the nodes boot with long grants."""
    link_up = 5_000_000
    grants = iter([2_000_000, NEVER])
    fabric, q = start(artifacts, tmp_path, 1_000_000, lambda m: [wire.grant(0, next(grants))],
                      link_up_ns=link_up)
    cleanup((fabric, q))
    until(q, 1_500_000)                      # the first sync, at 1 ms, saw no bus master
    setup_nic(q)                             # bus master on at 1.5 ms: link up at 6.5 ms
    until(q, 3_000_000)
    syncs = fabric.of_type(wire.SYNC)
    assert syncs[0]["promise"] == 1_000_000 + link_up + TX_LEAST
    assert syncs[1]["promise"] == 1_500_000 + link_up + TX_LEAST
    until(q, 1_500_000 + link_up - 1)
    send(q, [eth(mac(0, 1), 100)])           # no link yet: lost
    until(q, 1_500_000 + link_up)
    send(q, [eth(mac(0, 1), 200)], first=1)
    frames = fabric.wait_for(wire.FRAME, 1)
    assert [(f["time"], f["len"]) for f in frames] == [
        (1_500_000 + link_up + TX_LAT + dma(200), 200)]
    q.close()
    assert counters(tmp_path)["tx_frames"] == 1
