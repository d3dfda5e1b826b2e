"""qtest: the FC adapter in a snapshot (QMP migrate to a file, -incoming from it): its
registers, channel configuration, ring position, PIO buffer and resources' free times come
back; a stream with a bad index or length is refused by name; an adapter with a send in
flight refuses to be saved, naming it, and goes on. docs/boards/fc.md, "Snapshots"."""
import pytest
from fc_rig import CHAN, Rig, deliver_on_first_sync
from snapshots import load_patched, save, save_completed, wait_loaded

from retrolink import wire
from retrolink.qtest.fc_regs import R, parse_wire, pio_send, wire_frame

T = 2_000_000
SECTION = "retrolink-fc"


def registers(rig) -> dict:
    regs = {n: rig.reg(getattr(R, n)) for n in (
        "FC_REG_CTRL", "FC_REG_STATUS", "FC_REG_IRQ_STATUS", "FC_REG_IRQ_MASK", "FC_REG_ERROR",
        "FC_REG_PEERS_UP", "FC_REG_NUM_NODES", "FC_REG_MAC_LO")}
    for c in (0, 1):
        for n in ("FC_CH_STATUS", "FC_CH_DVMA_LO", "FC_CH_DVMA_PAGES", "FC_CH_RX_RING",
                  "FC_CH_RX_SLOTS", "FC_CH_TX_FRAMES", "FC_CH_RX_FRAMES", "FC_CH_ERRORS"):
            regs[f"{n}{c}"] = rig.ch(c, getattr(R, n))
        for n in ("FC_U_TX_LEN", "FC_U_TX_STATUS", "FC_U_TX_DONE", "FC_U_PIO_TAG"):
            regs[f"{n}{c}"] = rig.u(c, getattr(R, n))
    return regs


@pytest.fixture(scope="module")
def snapshot(artifacts, tmp_path_factory):
    """An adapter at T: both channels on, two frames in channel 1's ring, a DMA send done,
    a refused one, a PIO buffer filled; saved. The state file and its registers."""
    tmp = tmp_path_factory.mktemp("fc-snapshot")
    frames = [(1_500_000 + i * 10_000, wire_frame(1, 0, R.FC_TYPE_USER, bytes([i]) * 50))
              for i in range(2)]
    rig = Rig(artifacts, tmp, name="src", qmp=True, on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up()
        rig.dma_send(1, 0, 3000)
        rig.dma_send(0, 0, 0)                                   # refused: LENGTH
        rig.q.write(8, CHAN + R.FC_CHAN_PAGE_SIZE + R.FC_U_PIO_BUF, 0x0123456789ABCDEF)
        rig.set_u(1, R.FC_U_PIO_TAG, 0x5EED)
        rig.q.clock_set(T)
        assert rig.ch(1, R.FC_CH_RX_FRAMES) == 2 and rig.u(1, R.FC_U_TX_DONE) == 1
        regs = registers(rig)
        save_completed(rig.q, tmp / "fc.state", rig.log)
    finally:
        rig.close()
    return tmp / "fc.state", regs


def test_state_survives_a_snapshot(artifacts, tmp_path, snapshot):
    state, regs = snapshot
    frame = wire_frame(1, 0, R.FC_TYPE_USER, b"after" * 10)
    rig = Rig(artifacts, tmp_path, name="dst", qmp=True, incoming=state,
              on_sync=deliver_on_first_sync([(T + 100_000, frame)]))
    try:
        assert wait_loaded(rig.q) == "paused"
        assert rig.q.qmp("cont") == {"return": {}}
        rig.q.clock_set(T)
        assert registers(rig) == regs
        # the ring goes on at slot 2; the PIO buffer and tag send as saved
        rig.q.clock_set(T + 200_000)
        assert rig.slot(2)[32:82] == b"after" * 10 and rig.ch(1, R.FC_CH_RX_FRAMES) == 3
        rig.set_u(1, R.FC_U_PIO_SEND, pio_send(8, 1))
        rig.q.clock_set(T + 300_000)
        f = parse_wire(rig.fabric.wait_for(wire.FRAME)[0]["payload"])
        assert (f["payload"], f["tag"]) == ((0x0123456789ABCDEF).to_bytes(8, "little"), 0x5EED)
    finally:
        rig.close()


CORRUPTIONS = {
    "rx_next": (("fc", "ch", 1, "rx_next"), 2, 4, "the stream's channel 1 ring has next 4, free 2, "
                "host 2 for 4 slots"),
    "rx_host": (("fc", "ch", 1, "rx_host"), 2, 3, "the stream's channel 1 ring has next 2, free 2, "
                "host 3 for 4 slots"),
    "rx_slots": (("fc", "ch", 1, "rx_slots"), 4, 5000, "the stream's channel 1 is enabled with 96 "
                 "DVMA pages and 5000 ring slots"),
    "dvma_pages": (("fc", "ch", 0, "dvma", "pages"), 96, 0, "the stream's channel 0 is enabled with 0 "
                   "DVMA pages"),
    "ctrl": (("fc", "ctrl"), R.FC_CTRL_ENABLE, 3, "the stream's ctrl 0x3 has bits other than ENABLE"),
    "error": (("fc", "error"), 0, 99, "the stream's error 99 is not an FC_ERR_*"),
    "tx_status": (("fc", "ch", 0, "tx_status"), R.FC_ERR_LENGTH, 1000,
                  "the stream's channel 0 tx_status 1000 is not an FC_ERR_*"),
    "nodes": (("parent_obj.rl", "nodes"), 2, 100000, "the stream's nodes 100000 is not 1..256"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_a_stream_with_a_bad_index_or_length_is_refused(artifacts, tmp_path, snapshot, case):
    path, was, bad, said = CORRUPTIONS[case]
    log = load_patched(lambda state: Rig(artifacts, tmp_path, name="dst", incoming=state),
                       snapshot[0], tmp_path / "bad.state", SECTION, path, bad, was)
    assert "retrolink-fc node 0: " + said in log, log[-3000:]


def test_an_adapter_with_a_send_in_flight_refuses_a_save_and_goes_on(artifacts, tmp_path):
    rig = Rig(artifacts, tmp_path, name="src", qmp=True)
    try:
        rig.bring_up()
        rig.q.clock_set(T)
        rig.dma_send(1, 0, 5000)
        status = save(rig.q, tmp_path / "fc.state")
        assert status["status"] == "failed", status
        assert ("retrolink-fc node 0: cannot save the adapter with work in flight; channel 1's "
                "DMA send (0 of 5000 bytes read)") in rig.log.read_text()
        assert rig.q.qmp("cont") == {"return": {}}
        rig.q.clock_set(T + 1_000_000)
        assert len(rig.fabric.wait_for(wire.FRAME, 3)) == 3
        assert save(rig.q, tmp_path / "fc.state")["status"] == "completed"
    finally:
        rig.close()
