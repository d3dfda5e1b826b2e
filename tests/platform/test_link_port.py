"""qtest: the link port (qemu/core/rl-link.c) inside an SX board talking to a scripted
fake fabric. The virtual clock moves only when the test steps it, so every time is exact:
the node stops at each grant (never past it), a delivered frame takes effect at its
arrival time, and a frame leaves at the virtual time of the work that made it."""
import struct

import pytest

from retrolink import lockstep, wire
from retrolink.qtest.client import Qtest
from retrolink.qtest.fake_fabric import FakeFabric
from retrolink.qtest.sx_regs import R

REGS, WIN = 0xC0000000, 0xC1000000
NEVER = wire.NEVER
# SXM at 1 MIPS: 100 instructions = 100 us; bus 10 MB/s: 64 bytes = 6400 ns
PROPS = "sxm-mips=1,fw-send-insns=50,fw-recv-insns=100,bus-channel-rate=10000000,start-us=0"
SEND_NS, RECV_NS, BUS_64_NS = 50_000, 100_000, 6_400


def sx_frame(kind, slot=0, tag=0, gen=0, payload=b"", length=None):
    head = struct.pack("<BBHIII", kind, slot, 0, tag, len(payload) if length is None else length,
                       gen)
    assert len(head) == R.SX_WIRE_HDR_SIZE
    return head + payload


def start(artifacts, tmp_path, first_grant, on_sync):
    fabric = FakeFabric(tmp_path / "fabric.sock", 2, first_grant, on_sync)
    q = Qtest(artifacts.qemu, ["-device", f"retrolink-sx,node=0,fabric={tmp_path / 'fabric.sock'},"
                               + PROPS], tmp_path / "qemu.log")
    dev = q.find_pci(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID)
    q.map_bars(dev, {0: REGS, 2: WIN})
    q.writel(REGS + R.SX_REG_IRQ_MASK, 0xF)
    q.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
    return fabric, q


def rx_desc(slot, field):
    return WIN + R.SX_RX_DESC_OFF + slot * R.SX_DESC_SIZE + field


def tx_desc(slot, field):
    return WIN + R.SX_TX_DESC_OFF + slot * R.SX_DESC_SIZE + field


def until(q, t):
    """Run the virtual clock to exactly t."""
    assert q.clock_set(t) == t


def test_node_stops_at_every_grant_and_never_past_it(artifacts, tmp_path, cleanup):
    grants = iter([3_000_000, 3_000_001, NEVER])
    fabric, q = start(artifacts, tmp_path, 1_000_000, lambda m: [wire.grant(0, next(grants))])
    cleanup((fabric, q))
    until(q, 5_000_000)
    assert [m["time"] for m in fabric.of_type(wire.SYNC)] == [1_000_000, 3_000_000, 3_000_001]
    assert all(m["promise"] >= m["time"] for m in fabric.of_type(wire.SYNC))


def test_delivered_message_appears_at_arrival_plus_firmware_plus_bus(artifacts, tmp_path,
                                                                     cleanup):
    arrival = 2_000_000
    msg = sx_frame(R.SX_WIRE_MSG, slot=3, tag=77, gen=5, payload=bytes(range(64)))
    fabric, q = start(artifacts, tmp_path, 1_000_000,
                      lambda m: [wire.deliver(0, arrival, 1, msg, seq=1), wire.grant(0, NEVER)])
    cleanup((fabric, q))
    visible = arrival + RECV_NS + BUS_64_NS
    until(q, visible - 1)
    assert q.readl(REGS + R.SX_REG_IRQ_STATUS) & R.SX_IRQ_RX == 0
    until(q, visible)
    assert q.readl(REGS + R.SX_REG_IRQ_STATUS) & R.SX_IRQ_RX
    pop = q.readl(REGS + R.SX_REG_RX_POP)
    assert pop & R.SX_RXP_VALID
    slot = pop & 0xFF
    assert q.readl(rx_desc(slot, R.SX_DESC_PEER)) == 1
    assert q.readl(rx_desc(slot, R.SX_DESC_TAG)) == 77
    assert q.memread(WIN + R.SX_RX_BUF_OFF + slot * R.SX_MAX_MSG, 64) == bytes(range(64))
    # the confirmation left as the message landed, echoing slot and generation
    confirm = fabric.wait_for(wire.FRAME)
    assert len(confirm) == 1 and confirm[0]["time"] == visible and confirm[0]["dst"] == 1
    kind, slot_, _, tag, _, gen = struct.unpack("<BBHIII", confirm[0]["payload"][:16])
    assert (kind, slot_, tag, gen) == (R.SX_WIRE_CONFIRM, 3, 77, 5)


def test_send_leaves_after_bus_and_firmware_and_completes_at_the_confirmation(
        artifacts, tmp_path, cleanup):
    confirm_at = 900_000
    sent = []

    def on_sync(m):
        frames = fabric.of_type(wire.FRAME)
        if frames and not sent:           # confirm the first frame the board sent
            sent.append(frames[0])
            _, slot, _, tag, _, gen = struct.unpack("<BBHIII", frames[0]["payload"][:16])
            return [wire.deliver(0, confirm_at, 1, sx_frame(R.SX_WIRE_CONFIRM, slot, tag, gen)),
                    wire.grant(0, NEVER)]
        return [wire.grant(0, m["time"] + 100_000)]

    fabric, q = start(artifacts, tmp_path, 100_000, on_sync)
    cleanup((fabric, q))
    until(q, 10_000)
    q.memwrite(WIN + R.SX_TX_BUF_OFF + 2 * R.SX_MAX_MSG, b"\xAB" * 64)
    for off, val in ((R.SX_DESC_PEER, 1), (R.SX_DESC_LEN, 64), (R.SX_DESC_TAG, 9)):
        q.writel(tx_desc(2, off), val)
    q.writel(REGS + R.SX_REG_TX_DOORBELL, 2)
    # ringing a slot that is still being sent is refused with SX_ERR_BUSY
    q.writel(REGS + R.SX_REG_TX_DOORBELL, 2)
    assert q.readl(REGS + R.SX_REG_ERROR) == R.SX_ERR_BUSY
    assert q.readl(REGS + R.SX_REG_BAD_DOORBELLS) == 1
    until(q, confirm_at - 1)
    assert q.readl(REGS + R.SX_REG_TX_COMPLETE) == 0
    frame = fabric.of_type(wire.FRAME)[0]
    assert frame["time"] == 10_000 + BUS_64_NS + SEND_NS and frame["dst"] == 1
    assert frame["payload"][16:] == b"\xAB" * 64
    until(q, confirm_at)
    done = q.readl(REGS + R.SX_REG_TX_COMPLETE)
    assert done == R.SX_TXC_VALID | 2            # slot 2, status SX_ERR_NONE


def test_a_board_promises_no_frame_before_its_sxm_has_started(artifacts, tmp_path, cleanup):
    """Not enabled: no frame before now + start-us + send firmware; enabled at t: none
    before t + start-us + send firmware. This is what lets nodes boot with long grants."""
    grants = iter([2_000_000, NEVER])
    fabric = FakeFabric(tmp_path / "fabric.sock", 2, 1_000_000,
                        lambda m: [wire.grant(0, next(grants))])
    props = PROPS.replace("start-us=0", "start-us=5000")
    q = Qtest(artifacts.qemu, ["-device", f"retrolink-sx,node=0,fabric={tmp_path / 'fabric.sock'},"
                               + props], tmp_path / "qemu.log")
    cleanup((fabric, q))
    dev = q.find_pci(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID)
    q.map_bars(dev, {0: REGS, 2: WIN})
    until(q, 1_500_000)                     # the first sync point, at 1 ms, was before this
    q.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
    until(q, 3_000_000)
    syncs = fabric.of_type(wire.SYNC)
    assert [m["time"] for m in syncs] == [1_000_000, 2_000_000]
    assert syncs[0]["promise"] == 1_000_000 + 5_000_000 + SEND_NS
    assert syncs[1]["promise"] == 1_500_000 + 5_000_000 + SEND_NS


def test_a_frame_the_fabric_says_arrives_beyond_the_clock_never_does(artifacts, tmp_path,
                                                                     cleanup):
    """A DELIVER at 2^63 or later (the virtual clock is an int64) armed the board's event
    timer at a negative time: it fired at once, re-armed itself, and QEMU hung in the
    timer loop. Such an event is never due; what arrives in time still lands."""
    arrival = 2_000_000
    msg = sx_frame(R.SX_WIRE_MSG, slot=1, tag=5, payload=b"x" * 64)
    far = [wire.deliver(0, t, 1, msg, seq=i) for i, t in enumerate((1 << 63, NEVER - 1, NEVER))]
    fabric, q = start(artifacts, tmp_path, 1_000_000,
                      lambda m: [*far, wire.deliver(0, arrival, 1, msg, seq=9),
                                 wire.grant(0, NEVER)] if m["time"] == 1_000_000 else [])
    cleanup((fabric, q))
    q.conn.settimeout(20)
    until(q, arrival + RECV_NS + BUS_64_NS)
    assert q.readl(REGS + R.SX_REG_RX_POP) & R.SX_RXP_VALID
    assert q.readl(REGS + R.SX_REG_RX_POP) == 0
    q.clock_step(10**12)


@pytest.mark.parametrize("src", [0, 2, 0xFFFFFFFF])
def test_a_delivery_from_a_node_that_is_not_a_peer_is_refused(artifacts, tmp_path, cleanup,
                                                              src):
    """A frame 'from' the node itself or from beyond the cluster is a broken fabric: the
    board would have confirmed it to that node (a FRAME to itself, or to no node). The
    link port refuses it like any malformed message: the board leaves the ring."""
    msg = sx_frame(R.SX_WIRE_MSG, slot=1, tag=5, payload=b"x" * 16)
    fabric, q = start(artifacts, tmp_path, 1_000_000,
                      lambda m: [wire.deliver(0, 1_500_000, src, msg, seq=1),
                                 wire.grant(0, NEVER)])
    cleanup((fabric, q))
    until(q, 3_000_000)
    assert q.readl(REGS + R.SX_REG_RX_POP) == 0
    assert q.readl(REGS + R.SX_REG_STATUS) & R.SX_STATUS_LINK_UP == 0
    assert q.readl(REGS + R.SX_REG_PEERS_UP) == 0
    assert fabric.of_type(wire.FRAME) == []
    assert "DELIVER from a node that is not a peer" in (tmp_path / "qemu.log").read_text()


def bad_lockstep_file(sock, bad):
    """A lock-step file beside sock whose static part is not sane (the fake fabric makes
    none): what a corrupted or hostile writer could leave there."""
    ls = lockstep.ffi.new("struct rl_lockstep *")
    s = ls.s
    s.magic, s.version = lockstep.lib.RL_LS_MAGIC, lockstep.lib.RL_LS_VERSION
    s.nnodes, s.nnets, s.vm_nodes, s.stations[0] = 2, 1, 2, 2
    s.station_node[0][0], s.station_node[0][1] = 0, 1
    if bad == "nodes":
        s.nnodes = 0xFFFFFFFF
    elif bad == "networks":
        s.nnets = 17
    elif bad == "station":
        s.station_node[0][1] = 300
    elif bad == "welcome":
        s.nnodes = s.vm_nodes = 3
    path = lockstep.path_for(sock)
    path.write_bytes(bytes(lockstep.ffi.buffer(ls)))
    return path


@pytest.mark.parametrize("bad,why", [
    ("nodes", "4294967295 nodes, not 1 to 256"),
    ("networks", "17 networks, more than 16"),
    ("station", "network 0 station 1 is node 300 of 2"),
    ("welcome", "3 nodes, but WELCOME said 2"),
])
def test_a_lockstep_file_that_is_not_sane_leaves_the_grants_to_the_socket(artifacts, tmp_path,
                                                                         cleanup, bad, why):
    """The link port copies the file's static part once the cluster has started and
    computes only with the copy, if it passes rl_ls_static_check. One that does not is
    warned about once and every grant comes through the socket, exactly as without a
    file; the node's slot is still published. (Before the check, the first sync point
    read and wrote out of bounds: with 2^32 - 1 nodes QEMU crashed.)"""
    path = bad_lockstep_file(tmp_path / "fabric.sock", bad)
    grants = iter([3_000_000, 3_000_001, NEVER])
    fabric, q = start(artifacts, tmp_path, 1_000_000, lambda m: [wire.grant(0, next(grants))])
    cleanup((fabric, q))
    until(q, 5_000_000)
    assert [m["time"] for m in fabric.of_type(wire.SYNC)] == [1_000_000, 3_000_000, 3_000_001]
    log = (tmp_path / "qemu.log").read_text()
    assert log.count("is not sane") == 1, log
    assert (f"retrolink node 0: the lock-step file {path} is not sane ({why}); grants come "
            "through the socket for the rest of the run") in log, log
    ls = lockstep.ffi.from_buffer("struct rl_lockstep *", bytearray(path.read_bytes()))
    assert ls.node[0].active == 1 and ls.node[0].syncs >= 3
    assert ls.node[0].t == 3_000_001
