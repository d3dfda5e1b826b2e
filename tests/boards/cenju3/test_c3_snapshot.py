"""qtest: the Cenju-3 interface in a snapshot (QMP migrate to a file, -incoming from it),
taken mid-transfer: a remote DMA half sent, a message waiting for its slot and another
behind it in the FIFO, a request's DONE waiting for room in the event ring. The restored
interface goes on exactly as one never saved (the same packets at the same times, the
same events); a stream with a bad index or length is refused by name; packets still in
the network refuse a save, naming them. docs/boards/cenju3.md, "Snapshots"."""
import pytest
from c3_rig import T0, TARGET, Rig, deliver_on_first_sync
from snapshots import Stream, load_patched, save, save_completed, wait_loaded

from retrolink import wire
from retrolink.qtest.cenju3_regs import R, packet

SECTION = "retrolink-cenju3"
S = T0 + 20_000                         # the save: mid-transfer
ARRIVALS = [(T0 + 1_000 + k * 500, packet(R.C3_PKT_MSG, 1, 0, bytes([0x30 + k]) * 64, tag=k))
            for k in range(3)]


def setup(artifacts, tmp, name: str, qmp: bool = False) -> Rig:
    """Up to S: one slot per peer and an event ring of 2; three messages arrive (the
    first fills the slot, the others wait); a message request and a remote DMA of 40
    packets are posted; the DMA is under way at S."""
    rig = Rig(artifacts, tmp, name=name, qmp=qmp, on_sync=deliver_on_first_sync(ARRIVALS))
    rig.bring_up(slots=1, evq_size=2)
    rig.q.memwrite(0x00200000, bytes(range(256)) * 80)
    rig.write_req(R.C3_OP_MSG, 1, 16, tag=0x51)
    rig.write_req(R.C3_OP_RDMA, 1, 40 * 508, raddr=TARGET, tag=0x52,
                  flags=R.C3_REQF_EVENT | R.C3_REQF_NOTIFY)
    rig.doorbell()
    rig.q.clock_set(S)
    return rig


def go_on(rig) -> dict:
    """From S: run, let the waiting message in, run to the end; what happened (the frames
    sent: sent_frames, once the rig is closed)."""
    rig.q.clock_set(S + 100_000)
    seen = [(e["kind"], e["tag"], e["t_ns"], e["flags"]) for e in rig.events()]
    rig.free_slot(1, 0)
    rig.consume()
    rig.q.clock_set(S + 200_000)
    seen += [(e["kind"], e["tag"], e["t_ns"], e["flags"]) for e in rig.events()]
    rig.free_slot(1, 0)
    rig.consume()
    rig.q.clock_set(S + 400_000)
    seen += [(e["kind"], e["tag"], e["t_ns"], e["flags"]) for e in rig.events()]
    regs = {n: rig.reg(getattr(R, n)) for n in (
        "C3_REG_STATUS", "C3_REG_REQ_HEAD", "C3_REG_EVQ_HEAD", "C3_REG_TX_PACKETS",
        "C3_REG_RX_PACKETS", "C3_REG_STALLS", "C3_REG_CACHE_MISSES")}
    return dict(events=seen, regs=regs, slot=rig.slot(1, 0))


def sent_frames(rig) -> list:
    """The frames the interface sent after S, from the fake fabric once the rig is closed:
    its thread reads the socket apart from the test, and only QEMU's exit says it has
    read them all (a busy host once left the last ones unread at the end of go_on)."""
    return [(f["time"], f["payload"]) for f in rig.fabric.of_type(wire.FRAME) if f["time"] > S]


@pytest.fixture(scope="module")
def snapshot(artifacts, tmp_path_factory):
    """The state at S, and what an interface never saved does from S on."""
    tmp = tmp_path_factory.mktemp("c3-snapshot")
    rig = setup(artifacts, tmp, "reference")
    try:
        reference = go_on(rig)
    finally:
        rig.close()
    reference["frames"] = sent_frames(rig)
    rig = setup(artifacts, tmp, "src", qmp=True)
    try:
        assert rig.reg(R.C3_REG_STATUS) & R.C3_STATUS_RX_STALLED
        assert 0 < rig.reg(R.C3_REG_TX_PACKETS) < 41
        save_completed(rig.q, tmp / "c3.state", rig.log)
    finally:
        rig.close()
    return tmp / "c3.state", reference


def test_a_snapshot_mid_transfer_goes_on_as_if_never_saved(artifacts, tmp_path, snapshot):
    state, reference = snapshot
    rig = Rig(artifacts, tmp_path, name="dst", qmp=True, incoming=state)
    try:
        assert wait_loaded(rig.q) == "paused"
        assert rig.q.qmp("cont") == {"return": {}}
        rig.req_size, rig.evq_size, rig.tail = 8, 2, 2     # the rig's bookkeeping at S
        rig.consumed = 0
        rig.q.clock_set(S)
        after = go_on(rig)
    finally:
        rig.close()
    assert {**after, "frames": sent_frames(rig)} == reference
    kinds = [k for k, *_ in reference["events"]]
    assert kinds.count(R.C3_EV_MSG) == 3 and R.C3_EV_RDMA not in kinds   # all 3 came in
    assert len(reference["frames"]) > 10                                  # sent after S


CORRUPTIONS = {
    "ctrl": (("ctrl",), R.C3_CTRL_ENABLE, 3, "ctrl 0x3 has bits other than ENABLE"),
    "error": (("error",), 0, 99, "error 99 or rx_err 0 is not a C3_ERR_*"),
    "nodes": (("parent_obj.rl", "nodes"), 2, 100000, "nodes 100000 is not 1..256"),
    "req_tail": (("req_tail",), 2, 11, "rings have request head 2 tail 11 of 8"),
    "evq_size": (("evq_size",), 2, 3, "interface is enabled with rings of 8 and 3 entries"),
    "rx_next_slot": (("rx_next_slot", 1), 0, 1, "next slot 1 of peer 1 is not below 1"),
    "evq_wait_n": (("evq_wait_n",), 0, 17, "event wait list has 17 events"),
    "ledger_next": (("ledger_next",), 0, 64, "flush ledger has 0 entries, next 64"),
    "fifo_count": (("vm_fifo_count",), 2, 5000, "the stream's FIFO holds 5000 packets"),
    "txbuf_len": (("txbuf", "BUSY", "len"), 508, 509, "holds a bad packet (kind 2, 509 bytes"),
    "cur_off": (("cur", "off"), None, 40 * 508, "request under way has op 2, 20320 of 20320"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_a_stream_with_a_bad_index_or_length_is_refused(artifacts, tmp_path, snapshot, case):
    path, was, bad, said = CORRUPTIONS[case]
    if "BUSY" in path:                  # the transmit buffer in use at S
        stream = Stream(snapshot[0])
        busy = [b for b in (0, 1) if stream.read(SECTION, "txbuf", b, "state") != 0]
        path = tuple(busy[0] if x == "BUSY" else x for x in path)
    log = load_patched(lambda state: Rig(artifacts, tmp_path, name="dst", incoming=state),
                       snapshot[0], tmp_path / "bad.state", SECTION, path, bad, was)
    assert "retrolink-cenju3 node 0: " in log and said in log, log[-3000:]


def test_packets_still_in_the_network_refuse_a_save_and_it_goes_on(artifacts, tmp_path):
    late = (S + 50_000, packet(R.C3_PKT_MSG, 1, 0, b"late", tag=9))
    rig = Rig(artifacts, tmp_path, name="src", qmp=True,
              on_sync=deliver_on_first_sync([late]))
    try:
        rig.bring_up()
        rig.q.clock_set(S)
        status = save(rig.q, tmp_path / "c3.state")
        assert status["status"] == "failed", status
        assert ("retrolink-cenju3 node 0: cannot save the interface; a packet from node 1 in "
                f"the network until {S + 50_000} ns") in rig.log.read_text()
        assert rig.q.qmp("cont") == {"return": {}}
        rig.q.clock_set(S + 100_000)
        assert [e["tag"] for e in rig.events()] == [9]
        assert save(rig.q, tmp_path / "c3.state")["status"] == "completed"
    finally:
        rig.close()
