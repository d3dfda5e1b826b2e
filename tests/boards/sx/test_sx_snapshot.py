"""qtest: the SX board in a snapshot (QMP migrate to a file, -incoming from it). Its state
comes back whole: the registers, the FIFOs, a message the bus is reading (its bytes and its
wire header), the event queue and the time each stage ends. A stream whose indexes or
lengths are out of range is refused by name, and QEMU exits without reaching past an
array. A board with a message in flight refuses to be saved, naming it, and goes on.
docs/boards/sx.md, "Snapshots"."""
import struct

import pytest
from snapshots import Stream, load_refused, save, wait_loaded

from retrolink import wire
from retrolink.qtest.client import Qtest
from retrolink.qtest.fake_fabric import FakeFabric
from retrolink.qtest.sx_regs import R

REGS, WIN = 0xC0000000, 0xC1000000
NEVER = wire.NEVER
# SXM at 1 MIPS: send firmware 50 us; bus 10 MB/s: 64 bytes = 6400 ns; started 100 us
# after ENABLE; a send unconfirmed for 500 us fails
PROPS = ("sxm-mips=1,fw-send-insns=50,fw-recv-insns=100,bus-channel-rate=10000000,"
         "start-us=100,confirm-timeout-us=500")
SEND_NS, BUS_64_NS, START_NS, TIMEOUT_NS = 50_000, 6_400, 100_000, 500_000
T = 150_000                     # the doorbell, then the snapshot
TAG = 0x5A17C0DE
MESSAGE, LATER = bytes(range(64)), b"\xEE" * 64
# the registers that read without side effects
REGISTERS = ("SX_REG_ID", "SX_REG_VERSION", "SX_REG_NODE_ID", "SX_REG_NUM_NODES",
             "SX_REG_CTRL", "SX_REG_STATUS", "SX_REG_IRQ_STATUS", "SX_REG_IRQ_MASK",
             "SX_REG_ERROR", "SX_REG_PEERS_UP", "SX_REG_TX_MSGS", "SX_REG_RX_MSGS",
             "SX_REG_TX_ERRORS", "SX_REG_BAD_DOORBELLS")


def start(artifacts, tmp_path, name, on_sync=None, incoming=None, qmp=True):
    """A node-0 board on a 2-node fake fabric, under qtest; with incoming, loading that
    state file (the same command line but for the fabric's socket)."""
    sock = tmp_path / f"{name}.sock"
    fabric = FakeFabric(sock, 2, 1_000_000, on_sync or (lambda m: [wire.grant(0, NEVER)]))
    args = ["-device", f"retrolink-sx,node=0,fabric={sock},{PROPS}"]
    q = Qtest(artifacts.qemu, args + (["-incoming", f"file:{incoming}"] if incoming else []),
              tmp_path / f"{name}.log", qmp=qmp)
    return fabric, q


def reg(q, name):
    return q.readl(REGS + getattr(R, name))


def tx_desc(slot, field):
    return WIN + R.SX_TX_DESC_OFF + slot * R.SX_DESC_SIZE + field


def send(q, slot, dst, length, tag=7):
    for field, val in ((R.SX_DESC_PEER, dst), (R.SX_DESC_LEN, length), (R.SX_DESC_TAG, tag)):
        q.writel(tx_desc(slot, field), val)
    q.writel(REGS + R.SX_REG_TX_DOORBELL, slot)


def until(q, t):
    assert q.clock_set(t) == t


def drive(q):
    """At T: a refused doorbell, two sends refused by destination (one completion popped,
    one left in the FIFO), and slot 2 sending MESSAGE to node 1, its bus DMA running until
    T + BUS_64_NS; the window's slot 2 then holds LATER (the board copied MESSAGE)."""
    q.map_bars(q.find_pci(R.SX_PCI_VENDOR_ID, R.SX_PCI_DEVICE_ID), {0: REGS, 2: WIN})
    q.writel(REGS + R.SX_REG_IRQ_MASK, R.SX_IRQ_RX | R.SX_IRQ_TXDONE | R.SX_IRQ_LINK)
    q.writel(REGS + R.SX_REG_CTRL, R.SX_CTRL_ENABLE)
    until(q, T)
    q.writel(REGS + R.SX_REG_TX_DOORBELL, R.SX_TX_SLOTS)        # SX_ERR_SLOT
    send(q, 3, 0, 64)                                           # itself: SX_ERR_DEST
    send(q, 4, 5, 64)                                           # no node 5: SX_ERR_DEST
    assert reg(q, "SX_REG_TX_COMPLETE") == R.SX_TXC_VALID | 3 | R.SX_ERR_DEST << 8
    q.memwrite(WIN + R.SX_TX_BUF_OFF + 2 * R.SX_MAX_MSG, MESSAGE)
    send(q, 2, 1, len(MESSAGE), TAG)
    q.memwrite(WIN + R.SX_TX_BUF_OFF + 2 * R.SX_MAX_MSG, LATER)
    return {name: reg(q, name) for name in REGISTERS}


@pytest.fixture(scope="module")
def snapshot(artifacts, tmp_path_factory):
    """The board driven to T and saved: the state file and its registers at T."""
    tmp = tmp_path_factory.mktemp("sx-snapshot")
    fabric, q = start(artifacts, tmp, "src")
    try:
        regs = drive(q)
        status = save(q, tmp / "sx.state")
        assert status["status"] == "completed", (status, (tmp / "src.log").read_text()[-2000:])
    finally:
        q.close()
        fabric.stop()
    assert not fabric.violations, fabric.violations
    return tmp / "sx.state", regs


def test_registers_fifos_and_a_message_on_the_bus_survive_a_snapshot(artifacts, tmp_path,
                                                                     cleanup, snapshot):
    state, regs = snapshot
    assert regs["SX_REG_ERROR"] == R.SX_ERR_DEST and regs["SX_REG_BAD_DOORBELLS"] == 1
    assert regs["SX_REG_TX_ERRORS"] == 2 and regs["SX_REG_STATUS"] & R.SX_STATUS_READY
    fabric, q = start(artifacts, tmp_path, "dst", incoming=state)
    cleanup((fabric, q))
    assert wait_loaded(q) == "paused"
    assert q.qmp("cont") == {"return": {}}
    until(q, T)             # qtest's clock is not in the stream: the loaded one starts at 0
    assert {name: reg(q, name) for name in REGISTERS} == regs
    # the FIFO, from its saved head: the second refusal, then nothing
    assert reg(q, "SX_REG_TX_COMPLETE") == R.SX_TXC_VALID | 4 | R.SX_ERR_DEST << 8
    assert reg(q, "SX_REG_TX_COMPLETE") == 0
    assert q.memread(WIN + R.SX_TX_BUF_OFF + 2 * R.SX_MAX_MSG, 64) == LATER   # window RAM
    # the bus DMA and the send firmware run on from the saved queue, with the saved
    # message and header (not the window's bytes)
    sent = T + BUS_64_NS + SEND_NS
    until(q, sent - 1)
    assert fabric.of_type(wire.FRAME) == []
    until(q, sent)
    frames = fabric.wait_for(wire.FRAME)
    assert [(f["time"], f["dst"]) for f in frames] == [(sent, 1)]
    kind, slot, _, tag, length, _ = struct.unpack("<BBHIII", frames[0]["payload"][:16])
    assert (kind, slot, tag, length) == (R.SX_WIRE_MSG, 2, TAG, 64)
    assert frames[0]["payload"][16:] == MESSAGE
    # nobody confirms it: the timeout, an event the loaded board added itself
    until(q, sent + TIMEOUT_NS - 1)
    assert reg(q, "SX_REG_TX_COMPLETE") == 0
    until(q, sent + TIMEOUT_NS)
    assert reg(q, "SX_REG_TX_COMPLETE") == R.SX_TXC_VALID | 2 | R.SX_ERR_LINK_DOWN << 8


# each: the field (its value in the snapshot, checked first), a bad value, what is said
# after "retrolink-sx node 0: " (or the whole message, for the channel pool's own check)
CORRUPTIONS = {
    "txc_head": (("txc", "head"), 1, 32, "the stream's TX_COMPLETE FIFO has head 32 and count 1, "
                 "not below 32 and at most 32"),
    "txc_count": (("txc", "count"), 1, 33, "the stream's TX_COMPLETE FIFO has head 1 and count 33"),
    "txc_entry": (("txc", "entry", 1), R.SX_TXC_VALID | 4 | R.SX_ERR_DEST << 8, R.SX_TXC_VALID | 200,
                  "the stream's TX_COMPLETE FIFO entry 0 is 0x800000c8, not one the board puts there"),
    "rxp_head": (("rxp", "head"), 0, 16, "the stream's RX_POP FIFO has head 16 and count 0"),
    "rxp_count": (("rxp", "count"), 0, 17, "the stream's RX_POP FIFO has head 0 and count 17"),
    "tx_state": (("tx_state", 2), 1, 3, "the stream's tx_state[2] 3 is not a tx slot state"),
    "rx_state": (("rx_state", 5), 0, 1,
                 "the stream's rx_state[5] 1 is not free or held by the host"),
    "tx_dst": (("tx_dst", 2), 1, 1000, "the stream's tx_dst[2] 1000 is not a node below 2"),
    "tx_wire_len": (("tx_wire", 2, "len"), 64, R.SX_MAX_MSG + 1,
                    "the stream's tx_wire[2].len 4097 is more than 4096"),
    "nodes": (("parent_obj.rl", "nodes"), 2, 100000, "the stream's nodes 100000 is not 1..256"),
    "bus_channels": (("bus", "n"), 4, 17,
                     "retrolink channels: the stream has 17 channels, not 1..16"),
    "bus_channels_other": (("bus", "n"), 4, 3,
                           "the stream's bus has 3 channels, this board bus-channels=4"),
    "ctrl": (("ctrl",), R.SX_CTRL_ENABLE, 0x80000001,
             "the stream's ctrl 0x80000001 has bits other than ENABLE"),
    "event_slot": (("parent_obj.rl", "sched", "vm_events", 0, "arg"), 2, R.SX_TX_SLOTS,
                   "event 0 of 1 (kind 0, arg 8): class 0, tx slot 8: not an internal event "
                   "of a slot below 8"),
    "event_kind": (("parent_obj.rl", "sched", "vm_events", 0, "kind"), 0, 1, "event 0 of 1 (kind 1, arg 2): not "
                   "a kind of event a snapshot holds (those carry a message)"),
    "event_class": (("parent_obj.rl", "sched", "vm_events", 0, "cls"), 0, 7,
                    "event 0 of 1 has class 7, not one of the queue's"),
    "event_key": (("parent_obj.rl", "sched", "vm_events", 0, "key"), 0, 99, "internal event 0 of 1 is numbered "
                  "99, not below the queue's counter 1"),
    "event_count": (("parent_obj.rl", "sched", "vm_count"), 1, 10**8, "the stream has 100000000 events, "
                    "not 0..65536"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_a_stream_with_a_bad_index_or_length_is_refused(artifacts, tmp_path, cleanup, snapshot,
                                                        case):
    path, was, bad, said = CORRUPTIONS[case]
    stream = Stream(snapshot[0])
    assert stream.read("retrolink-sx", *path) == was        # the right bytes
    stream.patch("retrolink-sx", *path, value=bad)
    state = stream.write(tmp_path / "bad.state")
    fabric, q = start(artifacts, tmp_path, "dst", incoming=state, qmp=False)
    cleanup((fabric, q))
    log = load_refused(q, tmp_path / "dst.log")
    if not said.startswith("retrolink"):
        said = "retrolink-sx node 0: " + said
    assert said in log, log[-3000:]
    assert "error while loading state for instance 0x0 of device '0000:00:01.0/retrolink-sx'" \
        in log, log[-3000:]


def test_the_unchanged_stream_loads(artifacts, tmp_path, cleanup, snapshot):
    """The other half of the test above: the copy it corrupts loads when it is not."""
    state = Stream(snapshot[0]).write(tmp_path / "copy.state")
    fabric, q = start(artifacts, tmp_path, "dst", incoming=state)
    cleanup((fabric, q))
    assert wait_loaded(q) == "paused"


def test_a_board_with_a_message_in_its_firmware_refuses_a_save_and_goes_on(artifacts,
                                                                          tmp_path, cleanup):
    fabric, q = start(artifacts, tmp_path, "src")
    cleanup((fabric, q))
    drive(q)
    until(q, T + BUS_64_NS)             # read from the bus: in the send firmware
    status = save(q, tmp_path / "sx.state")
    assert status["status"] == "failed", status
    sent = T + BUS_64_NS + SEND_NS
    said = ("retrolink-sx node 0: cannot save the board with messages in flight: a send job "
            f"in the SXM firmware until {sent} ns (tx slot 2)")
    assert said in (tmp_path / "src.log").read_text(), (tmp_path / "src.log").read_text()[-2000:]
    # nothing was lost: the message leaves on time, and then a save succeeds (the slot
    # waits for its confirmation: only a timeout is pending)
    assert q.qmp("cont") == {"return": {}}
    until(q, sent)
    assert [(f["time"], f["payload"][16:]) for f in fabric.wait_for(wire.FRAME)] == [
        (sent, MESSAGE)]
    assert save(q, tmp_path / "sx.state")["status"] == "completed"


def test_a_board_with_a_message_arriving_refuses_a_save(artifacts, tmp_path, cleanup):
    msg = struct.pack("<BBHIII", R.SX_WIRE_MSG, 3, 0, 77, 64, 5) + MESSAGE
    fabric, q = start(artifacts, tmp_path, "src",
                      lambda m: [wire.deliver(0, 1_500_000, 1, msg, seq=1), wire.grant(0, NEVER)])
    cleanup((fabric, q))
    drive(q)
    until(q, 1_200_000)                 # past the sync that announced it
    status = save(q, tmp_path / "sx.state")
    assert status["status"] == "failed", status
    log = (tmp_path / "src.log").read_text()
    assert ("cannot save the board with messages in flight: a message from node 1 arriving "
            "at 1500000 ns") in log, log[-2000:]
