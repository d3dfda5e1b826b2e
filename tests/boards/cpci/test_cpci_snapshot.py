"""qtest: the CompactPCI bridge in a snapshot (QMP migrate to a file, -incoming from it),
saved quiet: its registers (the export, doorbells, errors, masks, counters) come back and
it goes on (a store goes, a peer's write lands, a doorbell rings); a stream with a bad
field is refused by post_load, naming it; a board with a transaction in flight refuses to
be saved, naming it, and goes on."""
import pytest
from cpci_rig import EXPORT, EXPORT_SIZE, Rig
from snapshots import corruption_test, resume, save, save_completed

from retrolink.qtest.cpci_regs import R, db_bit, db_ring_value, wire_frame

T = 3_000_000
SECTION = "retrolink-cpci"
REGS = ("CPCI_REG_CTRL", "CPCI_REG_STATUS", "CPCI_REG_NODES", "CPCI_REG_EXPORT_LO",
        "CPCI_REG_EXPORT_HI", "CPCI_REG_EXPORT_SIZE", "CPCI_REG_DB_STATUS", "CPCI_REG_DB_MASK",
        "CPCI_REG_IRQ_STATUS", "CPCI_REG_ERR_STATUS", "CPCI_REG_ERR_MASK",
        "CPCI_REG_ERR_ADDR", "CPCI_REG_TX_WRITES", "CPCI_REG_TX_BYTES", "CPCI_REG_RX_WRITES",
        "CPCI_REG_RX_BYTES", "CPCI_REG_RX_REJECTED", "CPCI_REG_DB_SENT",
        "CPCI_REG_DB_RECEIVED")


def registers(rig) -> dict:
    return {n: rig.reg(getattr(R, n)) for n in REGS}


@pytest.fixture(scope="module")
def snapshot(artifacts, tmp_path_factory):
    """A board at T: the export on, stores and a doorbell sent, a peer's write landed and
    one refused, a doorbell from node 2 pending (masked), an error pending; saved."""
    tmp = tmp_path_factory.mktemp("cpci-snapshot")
    frames = [(2_500_000, 1, wire_frame(R.CPCI_T_WRITE, 0x40, b"wxyz", src=1)),
              (2_500_000, 1, wire_frame(R.CPCI_T_WRITE, EXPORT_SIZE, b"no", src=1)),
              (2_600_000, 2, wire_frame(R.CPCI_T_DOORBELL, 3, src=2))]
    rig = Rig(artifacts, tmp, name="src", qmp=True, frames=frames)
    try:
        rig.bring_up()
        rig.set_reg(R.CPCI_REG_DB_MASK, 1 << db_bit(2, 3))
        rig.set_reg(R.CPCI_REG_ERR_MASK, R.CPCI_ERR_BAD_VALUE)
        rig.store(1, 0x10, 4, 0xDEADBEEF)
        rig.set_reg(R.CPCI_REG_DB_RING, db_ring_value(3, 2))
        rig.q.clock_set(T)
        regs = registers(rig)
        assert regs["CPCI_REG_RX_WRITES"] == 1 and regs["CPCI_REG_RX_REJECTED"] == 1
        assert regs["CPCI_REG_DB_STATUS"] == 1 << db_bit(2, 3)
        assert regs["CPCI_REG_ERR_STATUS"] == R.CPCI_ERR_INBOUND
        state = tmp / "cpci.state"
        save_completed(rig.q, state, rig.log)
    finally:
        rig.close()
    return state, regs


def test_state_survives_a_snapshot(artifacts, tmp_path, snapshot):
    state, regs = snapshot
    rig = Rig(artifacts, tmp_path, name="dst", qmp=True, incoming=state,
              frames=[(T + 100_000, 3, wire_frame(R.CPCI_T_WRITE, 0x80, b"\x01\x02", src=3)),
                      (T + 200_000, 1, wire_frame(R.CPCI_T_DOORBELL, 0, src=1))])
    try:
        resume(rig.q)
        rig.q.clock_set(T)
        assert registers(rig) == regs
        assert rig.q.memread(EXPORT + 0x40, 4) == b"wxyz"
        rig.store(2, 0x20, 8, 0x0102030405060708)
        rig.q.clock_set(T + 300_000)
        assert rig.q.memread(EXPORT + 0x80, 2) == b"\x01\x02"
        assert rig.reg(R.CPCI_REG_DB_STATUS) == 1 << db_bit(2, 3) | 1 << db_bit(1, 0)
        assert rig.reg(R.CPCI_REG_IRQ_STATUS) == R.CPCI_IRQ_DOORBELL | R.CPCI_IRQ_ERROR
        out = rig.wait_frames(1)
        assert [(f["dst"], f["kind"], f["offset"], f["data"]) for f in out] == \
            [(2, R.CPCI_T_WRITE, 0x20, bytes(range(8, 0, -1)))]
    finally:
        rig.close()


CORRUPTIONS = {
    "ctrl": (("ctrl",), R.CPCI_CTRL_ENABLE | R.CPCI_CTRL_EXPORT, 0x80000003,
             "ctrl 0x80000003 has bits other than ENABLE and EXPORT"),
    "export address": (("export_lo",), EXPORT, EXPORT + 4, "export of 0x4000 bytes at 0x0"),
    "export size": (("export_size",), EXPORT_SIZE, 0x200000, "export of 0x200000 bytes"),
    "errors": (("err_status",), R.CPCI_ERR_INBOUND, 0x90, "err_status 0x90 or err_mask"),
    "error address": (("err_addr",), EXPORT_SIZE, 0x800000, "err_addr 0x800000 is beyond"),
    "peers": (("peers_up",), 0b1110, 0b11110, "peers_up 0x1e names nodes not on the"),
    "doorbells": (("db_status",), 1 << db_bit(2, 3), 1 << 17 | 1 << db_bit(2, 3),
                  "db_status 0x20800 has doorbells of nodes past 4"),
    "posted-write ring": (("txq.head",), 0, 512, "txq head 512, count 0, noticed 0: outside"),
    "posted-write frames": (("txq.count",), 0, 513, "txq head 0, count 513, noticed 0"),
    "posted-write notices": (("txq.noticed",), 0, 1, "txq head 0, count 0, noticed 1"),
    "posted-write bytes": (("txq.held",), 0, 4, "txq held 4 bytes, its entries 0, the "
                           "buffer 256"),
}


test_a_stream_with_a_bad_field_is_refused = corruption_test(CORRUPTIONS, SECTION, Rig)


def test_a_board_with_a_transaction_in_flight_refuses_a_save_and_goes_on(artifacts,
                                                                        tmp_path):
    frames = [(T + 50_000, 1, wire_frame(R.CPCI_T_WRITE, 0x40, b"abcd", src=1))]
    rig = Rig(artifacts, tmp_path, name="src", qmp=True, frames=frames)
    try:
        rig.bring_up()
        rig.q.clock_set(T)
        status = save(rig.q, tmp_path / "cpci.state")
        assert status["status"] == "failed", status
        assert f"retrolink-cpci node 0: cannot save the board with transactions in flight; " \
            f"a transaction (event kind 0) at {T + 50_000} ns" in rig.log.read_text()
        assert rig.q.qmp("cont") == {"return": {}}
        rig.q.clock_set(T + 100_000)
        assert rig.q.memread(EXPORT + 0x40, 4) == b"abcd"
        assert save(rig.q, tmp_path / "cpci.state")["status"] == "completed"
    finally:
        rig.close()


def test_a_store_not_yet_carried_by_the_backplane_refuses_a_save(artifacts, tmp_path):
    """On a backplane that sends notices: a store holds its entry of the posted-write
    buffer until its notice; saved once that has come and passed."""
    rig = Rig(artifacts, tmp_path, name="src", qmp=True, notice_nets=1, step=10_000)
    try:
        rig.bring_up()
        rig.q.clock_set(T)
        rig.store(1, 0x10, 4, 0x12345678)
        assert save(rig.q, tmp_path / "cpci.state")["status"] == "failed"
        assert "cannot save the board with transactions in flight; 1 frames not yet " \
            "carried by the backplane" in rig.log.read_text()
        assert rig.q.qmp("cont") == {"return": {}}
        rig.deliver(T + 1000, 0, b"")                   # its notice
        rig.q.clock_set(T + 20_000)
        assert save(rig.q, tmp_path / "cpci.state")["status"] == "completed"
    finally:
        rig.close()
