"""qtest: the interface's timing is the sum of its components (docs/boards/cenju3.md,
"Timing"). The expected times are computed here from that description, independently of
the C, and compared exactly: the fake fabric sees each packet's ready time, and every
event carries the virtual time it was written.

- Every register access books 'reg-access-ns' on the PE's bus (under qtest no vCPU is
  held, but the bus is, so a doorbell's end moves by the accesses before it); a cache
  operation then books 'cache-op-ns' + lines * 'cache-line-ns'.
- Send: REQ_TAIL store end + 'req-setup-ns', then per packet of <= 508 bytes the DMA read
  at 'dma-rate' into one of two transmit buffers and the packet stage
  ('packet-setup-ns'); the DMA of packet i + 1 overlaps the packet stage of packet i.
- Network (the fabric's `min`, tests/fabric/test_min_timing.py): (stages + 1) * prop_ns +
  stages * stage_delay_ns + ceil((24 + n + overhead_bytes) / rate) when unloaded.
- Receive: 'packet-setup-ns' + the DMA write at 'dma-rate' (a MSG: its 4-byte header
  word and the data), then the event."""
import pytest
from c3_rig import DATA, DEFAULTS, T0, TARGET, Rig, deliver_on_first_sync, ns, props, \
    send_model

from retrolink.qtest.cenju3_regs import R, packet, parse_packet

MSG, RDMA = R.C3_OP_MSG, R.C3_OP_RDMA
T = T0 + 1_000_000                      # the bus long idle
# the machine file's network (machines/cenju-3.toml)
NET = dict(rate=40_000_000, stage_delay=250, stages=4, prop=0, overhead=4)

PARAMS = [{}, {"dma": 20_000_000}, {"req_setup": 0, "packet_setup": 0},
          {"packet_setup": 7000}, {"reg": 1000, "dma": 333_333_333}]


def network_ns(n: int) -> int:
    """An unloaded packet of n data bytes through the `min` network."""
    return (NET["stages"] + 1) * NET["prop"] + NET["stages"] * NET["stage_delay"] + \
        ns(R.C3_WIRE_HDR_SIZE + n + NET["overhead"], NET["rate"])


def receive_ns(p: dict, kind: int, n: int) -> int:
    return p["packet_setup"] + ns((R.C3_SLOT_PAYLOAD if kind == R.C3_PKT_MSG else 0) + n,
                                  p["dma"])


@pytest.fixture
def started(artifacts, tmp_path, request):
    p = dict(DEFAULTS, **getattr(request, "param", {}))
    rig = Rig(artifacts, tmp_path, props=props(p), nodes=4)
    rig.bring_up(nodes=4)
    rig.q.clock_set(T)
    yield rig, p
    rig.close()


@pytest.mark.parametrize("started", PARAMS, indirect=True)
@pytest.mark.parametrize("length", [1, 508, 509, 1300, 20_000])
def test_packets_leave_when_the_pipeline_says(started, length):
    rig, p = started
    data = bytes((i * 5 + 3) & 0xFF for i in range(length))
    rig.q.memwrite(DATA, data)
    i = rig.write_req(RDMA, 2, length, raddr=TARGET, tag=4)
    rig.doorbell()
    model = send_model(p, T + p["reg"], length)
    rig.q.clock_set(model[-1][0] - 1)
    assert rig.status(i) == 0 and rig.events() == []
    rig.q.clock_set(model[-1][0])
    frames = rig.frames(len(model))
    assert [(f["time"], parse_packet(f["payload"])["len"]) for f in frames] == model
    assert b"".join(parse_packet(f["payload"])["data"] for f in frames) == data
    (ev,) = rig.events()
    assert (ev["kind"], ev["t_ns"]) == (R.C3_EV_DONE, model[-1][0])
    assert rig.status(i) == R.C3_ST_DONE


@pytest.mark.parametrize("started", PARAMS[:2], indirect=True)
def test_back_to_back_requests_queue_behind_each_other(started):
    """The next request is taken when the last one's last packet has been read."""
    rig, p = started
    rig.write_req(MSG, 1, 500)
    rig.write_req(MSG, 2, 100)
    rig.doorbell()
    first = send_model(p, T + p["reg"], 500)
    dma_end = T + p["reg"] + p["req_setup"] + ns(500, p["dma"])
    # the second: taken from the first's DMA end, its own buffer free, the stage after
    second_dma = dma_end + p["req_setup"] + ns(100, p["dma"])
    second = max(second_dma, first[0][0]) + p["packet_setup"]
    rig.q.clock_set(second + 1)
    assert [f["time"] for f in rig.frames(2)] == [first[0][0], second]


@pytest.mark.parametrize("started", PARAMS[:1] + PARAMS[4:], indirect=True)
@pytest.mark.parametrize("addr,length", [(DATA, 32), (DATA + 20, 100), (DATA, 16384),
                                         (DATA + 31, 2)])
def test_cache_operations_cost_their_lines(started, addr, length):
    """A flush of L lines holds the bus for cache-op-ns + L * cache-line-ns after its four
    register stores: the doorbell after it ends that much later, and the packet too."""
    rig, p = started
    lines = (addr + length - 1) // 32 - addr // 32 + 1
    rig.cache_op(R.C3_CACHE_FLUSH, addr, length)
    n = min(8, length)                  # inside the flushed range
    rig.post(MSG, 1, n, src=addr)
    doorbell_end = T + 5 * p["reg"] + p["cache_op"] + lines * p["cache_line"]
    (leave, _), = send_model(p, doorbell_end, n)
    rig.q.clock_set(leave)
    assert [f["time"] for f in rig.frames(1)] == [leave]
    assert rig.reg(R.C3_REG_CACHE_MISSES) == 0


@pytest.mark.parametrize("p", [DEFAULTS, dict(DEFAULTS, dma=10_000_000, packet_setup=50)])
@pytest.mark.parametrize("kind,length", [(R.C3_PKT_MSG, 4), (R.C3_PKT_MSG, 508),
                                         (R.C3_PKT_RDMA, 1), (R.C3_PKT_RDMA, 508)])
def test_one_way_time_is_the_sum_of_the_components(artifacts, tmp_path, p, kind, length):
    """A request on node 0; its packet reaches node 1 after the network's time (the
    formula the fabric's own test holds `min` to); node 1's event is written after its
    receive side. End to end: doorbell + req-setup + DMA + packet stage + network +
    packet stage + DMA into memory."""
    sender = Rig(artifacts, tmp_path, props=props(p), name="sender")
    try:
        sender.bring_up()
        sender.q.clock_set(T)
        sender.q.memwrite(DATA, b"\x5a" * length)
        op = MSG if kind == R.C3_PKT_MSG else RDMA
        flags = R.C3_REQF_NOTIFY if op == RDMA else 0
        sender.post(op, 1, length, raddr=TARGET if op == RDMA else 0, tag=3, flags=flags)
        (leave, _), = send_model(p, T + p["reg"], length)
        sender.q.clock_set(leave)
        (f,) = sender.frames(1)
        assert f["time"] == leave
    finally:
        sender.close()
    arrival = leave + network_ns(length)
    # the same packet as node 1 would send it to node 0 (each rig is node 0)
    w = parse_packet(f["payload"])
    again = packet(w["kind"], 1, 0, w["data"], raddr=w["raddr"], tag=w["tag"],
                   req_len=w["req_len"], flags=w["flags"])
    receiver = Rig(artifacts, tmp_path, props=props(p), name="receiver",
                   on_sync=deliver_on_first_sync([(arrival, again)]))
    try:
        receiver.bring_up()
        receiver.q.clock_set(arrival + 1_000_000)
        (ev,) = receiver.events()
        one_way = p["reg"] + p["req_setup"] + ns(length, p["dma"]) + p["packet_setup"] + \
            network_ns(length) + receive_ns(p, kind, length)
        assert ev["t_ns"] - T == one_way
        assert ev["kind"] == (R.C3_EV_MSG if kind == R.C3_PKT_MSG else R.C3_EV_RDMA)
    finally:
        receiver.close()


def test_the_receive_side_handles_one_packet_at_a_time(artifacts, tmp_path):
    """Packets arriving together are written one after the other."""
    p = DEFAULTS
    a = T
    frames = [(a, packet(R.C3_PKT_RDMA, 1, 0, b"x" * 508, raddr=TARGET + k * 508, tag=k,
                         flags=R.C3_PKTF_LAST | R.C3_PKTF_NOTIFY)) for k in range(3)]
    rig = Rig(artifacts, tmp_path, on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up()
        rig.q.clock_set(a + 100_000)
        step = receive_ns(p, R.C3_PKT_RDMA, 508)
        assert [e["t_ns"] for e in rig.events()] == [a + step, a + 2 * step, a + 3 * step]
    finally:
        rig.close()


def test_a_stalled_packet_goes_when_eventq_tail_is_written(artifacts, tmp_path):
    """The look again starts when the EVQ_TAIL store reaches the interface."""
    p = DEFAULTS
    frames = [(T + k, packet(R.C3_PKT_MSG, 1, 0, b"m" * 40, tag=k)) for k in range(2)]
    rig = Rig(artifacts, tmp_path, on_sync=deliver_on_first_sync(frames))
    try:
        rig.bring_up(slots=1)
        rig.q.clock_set(T + 1_000_000)
        (ev,) = rig.events()
        assert ev["t_ns"] == T + receive_ns(p, R.C3_PKT_MSG, 40)
        t = rig.q.clock_set(T + 2_000_000)
        rig.free_slot(1, 0)
        rig.consume()                               # 1 register read + 1 write
        rig.q.clock_set(T + 3_000_000)
        (ev,) = rig.events()
        assert ev["t_ns"] == t + 2 * p["reg"] + receive_ns(p, R.C3_PKT_MSG, 40)
    finally:
        rig.close()
