"""qtest: the adapter's timing is the sum of its components (docs/boards/fc.md, "Timing").

- PIO: every access to either BAR costs its bytes at 'pio-rate' on the SBus; a PIO send's
  frame enters the adapter when the bus transfer of its PIO_SEND store ends.
- DMA send: TX_GO (timed from the end of its store) + 'send-setup-ns', then per frame of
  up to 2112 bytes: SBus DMA at 'dma-rate' into a transmit buffer slot
  ('tx-queue-frames'), the adapter stage ('frame-setup-ns' + payload at 'adapter-rate'),
  the DMA of frame i overlapping the adapter stage of frame i - 1.
- Receive: the adapter stage, then the SBus DMA of the 32-byte slot header and the
  payload into the ring.
The expected times are computed here from that description, independently of the C,
and compared exactly (the fake fabric sees each frame's ready time)."""
import pytest
from fc_rig import CHAN, DATA, Rig, deliver_on_first_sync, dma_send_model, ns

from retrolink import wire
from retrolink.qtest.fc_regs import RX_SLOT, R, irq_rx, irq_txdone, parse_wire, pio_send, \
    wire_frame

DEFAULTS = dict(dma=61_000_000, pio=20_000_000, adapter=58_000_000, send_setup=500,
                frame_setup=200, queue=2)


def props(p):
    return (f"dma-rate={p['dma']},pio-rate={p['pio']},adapter-rate={p['adapter']},"
            f"send-setup-ns={p['send_setup']},frame-setup-ns={p['frame_setup']},"
            f"tx-queue-frames={p['queue']}")


@pytest.fixture
def started(artifacts, tmp_path, request):
    p = dict(DEFAULTS, **getattr(request, "param", {}))
    rig = Rig(artifacts, tmp_path, props=props(p))
    rig.bring_up()
    rig.q.clock_set(2_000_000)           # past the first grant; the bus long idle
    yield rig, p
    rig.close()


@pytest.mark.parametrize("started", [{}, {"pio": 10_000_000}], indirect=True)
def test_pio_costs_its_bytes_at_the_pio_rate(started):
    """N bytes of PIO move the bus on by exactly N / pio-rate: 8- and 4-byte stores into
    the PIO buffer, a register read, then PIO_SEND; the frame enters the adapter when the
    PIO_SEND store ends."""
    rig, p = started
    t0 = 2_000_000
    payload = bytes(range(256)) * 4 + bytes(range(20))          # 1044 bytes
    n_bytes = 0
    for off in range(0, 1040, 8):
        rig.q.write(8, CHAN + R.FC_CHAN_PAGE_SIZE + R.FC_U_PIO_BUF + off,
                    int.from_bytes(payload[off:off + 8], "little"))
        n_bytes += 8
    rig.q.write(4, CHAN + R.FC_CHAN_PAGE_SIZE + R.FC_U_PIO_BUF + 1040,
                int.from_bytes(payload[1040:1044], "little"))
    assert rig.u(1, R.FC_U_TXQ_FREE) == 2
    rig.set_u(1, R.FC_U_PIO_SEND, pio_send(len(payload), 1))
    n_bytes += 4 + 4 + 4
    bus_end = t0 + n_bytes * 10**9 // p["pio"]
    assert n_bytes * 10**9 % p["pio"] == 0
    on_link = bus_end + p["frame_setup"] + ns(len(payload), p["adapter"])
    rig.q.clock_set(on_link - 1)
    assert rig.fabric.of_type(wire.FRAME) == []
    rig.q.clock_set(on_link)
    frames = rig.fabric.wait_for(wire.FRAME)
    assert [f["time"] for f in frames] == [on_link]
    assert parse_wire(frames[0]["payload"])["payload"] == payload


@pytest.mark.parametrize("started", [{}, {"queue": 1}, {"queue": 4, "adapter": 30_000_000},
                                     {"send_setup": 0, "frame_setup": 0}], indirect=True)
@pytest.mark.parametrize("length", [1, 2112, 10_000])
def test_dma_send_frames_leave_when_the_pipeline_says(started, length):
    rig, p = started
    t0 = 2_000_000
    data = bytes((i * 7 + 3) & 0xFF for i in range(length))
    rig.q.memwrite(DATA + 4096 - 100, data)                      # DVMA 4096 - 100 on
    rig.dma_send(1, 4096 - 100, length, tag=0xABC)
    go_end = t0 + 5 * 4 * 10**9 // p["pio"]                      # the five stores
    model = dma_send_model(p, go_end, length)
    rig.q.clock_set(model[-1][0] - 1)
    assert rig.u(1, R.FC_U_TX_DONE) == 0 and rig.u(1, R.FC_U_TX_BUSY) == 0
    frames = rig.fabric.wait_for(wire.FRAME, len(model) - 1)
    rig.q.clock_set(model[-1][0])
    frames = rig.fabric.wait_for(wire.FRAME, len(model))
    got = [(f["time"], parse_wire(f["payload"])["offset"], len(parse_wire(f["payload"])["payload"]))
           for f in frames]
    assert got == [m[:3] for m in model]
    whole = b"".join(parse_wire(f["payload"])["payload"] for f in frames)
    assert whole == data
    w = parse_wire(frames[-1]["payload"])
    assert (w["tag"], w["msg_len"], w["type"], w["d_id"]) == (0xABC, length, R.FC_TYPE_USER, 1)
    assert parse_wire(frames[0]["payload"])["f_ctl"] & R.FC_FCTL_FIRST
    assert w["f_ctl"] & R.FC_FCTL_LAST
    assert rig.u(1, R.FC_U_TX_DONE) == 1 and rig.reg(R.FC_REG_IRQ_STATUS) & irq_txdone(1)


def test_tx_busy_drops_when_the_last_frame_is_read(started):
    rig, p = started
    t0 = 2_000_000
    rig.dma_send(1, 0, 3 * 2112)
    model = dma_send_model(p, t0 + 5 * 4 * 10**9 // p["pio"], 3 * 2112)
    last_read = model[-1][3]
    # reading TX_BUSY costs bus time but does not move the clock under qtest
    rig.q.clock_set(last_read - 1)
    assert rig.u(1, R.FC_U_TX_BUSY) == 1
    rig.q.clock_set(last_read)
    assert rig.u(1, R.FC_U_TX_BUSY) == 0
    assert rig.u(1, R.FC_U_TX_DONE) == 0                # the last frame is still inside


@pytest.mark.parametrize("length", [1, 100, R.FC_MAX_PAYLOAD])
def test_arriving_frame_is_in_the_ring_after_adapter_and_dma(artifacts, tmp_path, length):
    p = DEFAULTS
    arrival = 2_000_000
    payload = bytes((i * 13) & 0xFF for i in range(length))
    frame = wire_frame(1, 0, R.FC_TYPE_USER, payload, tag=0x77)
    rig = Rig(artifacts, tmp_path, props=props(p),
              on_sync=deliver_on_first_sync([(arrival, frame)]))
    try:
        rig.bring_up()
        done = arrival + p["frame_setup"] + ns(length, p["adapter"]) + \
            ns(R.FC_RX_PAYLOAD + length, p["dma"])
        rig.q.clock_set(done - 1)
        assert RX_SLOT.unpack_from(rig.slot(0))[0] == 0
        assert rig.reg(R.FC_REG_IRQ_STATUS) & irq_rx(1) == 0
        rig.q.clock_set(done)
        flags, n, src, tag, off, msg_len = RX_SLOT.unpack_from(rig.slot(0))
        assert flags & R.FC_RXS_VALID and (n, src, tag, off, msg_len) == (length, 1, 0x77, 0,
                                                                           length)
        assert rig.slot(0)[32:32 + length] == payload
        assert rig.reg(R.FC_REG_IRQ_STATUS) & irq_rx(1)
    finally:
        rig.close()


def test_a_peer_down_refuses_sends_with_link_down(artifacts, tmp_path):
    def on_sync(m):
        if m["time"] < 1_500_000:
            return [wire.link_status(0, 1_200_000, 1, False), wire.grant(0, wire.NEVER)]
        return [wire.grant(0, wire.NEVER)]

    rig = Rig(artifacts, tmp_path, on_sync=on_sync)
    try:
        rig.bring_up()
        rig.q.clock_set(2_000_000)
        assert rig.reg(R.FC_REG_PEERS_UP) == 0
        assert rig.reg(R.FC_REG_IRQ_STATUS) & R.FC_IRQ_LINK
        rig.dma_send(1, 0, 64)
        assert rig.u(1, R.FC_U_TX_STATUS) == R.FC_ERR_LINK_DOWN
        rig.set_u(1, R.FC_U_PIO_SEND, pio_send(4, 1))
        assert rig.u(1, R.FC_U_TX_STATUS) == R.FC_ERR_LINK_DOWN
        assert rig.ch(1, R.FC_CH_ERRORS) == 2
    finally:
        rig.close()
