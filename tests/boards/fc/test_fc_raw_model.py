"""A raw-protocol transfer of N bytes, measured in the guest (fc_bench's ping-pong on
machines/puma-iii.toml), takes the sum of its components' times plus a little guest
software, never less (docs/boards/fc.md, "Timing"):
  the TX_GO store (its SBus PIO time)
  + the adapter's send pipeline (send setup; per frame: SBus DMA, adapter stage, the DMA
    of a frame overlapping the stage of the one before), to the last frame on the link
  + the FC switch for that frame (node -> switch serialization with the frame overhead,
    propagation, the switch's decision, switch -> node serialization, propagation)
  + the receiving adapter's stage and the SBus DMA of the slot header and payload.
The allowance is the guest's own work at each end (the sender's register stores before
TX_GO, the receiver's poll of the ring and its copy of each frame) and the guest kernels'
timer interrupts (250 Hz) that land on the critical path: 20 us + 10% of the model.
Measured (57 MIPS): 13 us over the model for one frame, 121 us for 64 KB, 66 us for 1 MB.
A missing stage makes the transfer beat the model (the lower bound fails); the exact
per-stage times are checked to the ns without a guest in test_fc_model.py."""
import re

from fc_rig import dma_send_model, ns
from helpers import run_retrolink

from retrolink.boards.fc import FcBoard
from retrolink.model.machine import load_machine
from retrolink.qtest.fc_regs import R

SIZES = (2112, 65536, 1048576)
FC_WIRE_HDR = 24


def one_way_model_us(machine, n: int) -> float:
    (board,) = [b for b in machine.boards.values() if isinstance(b, FcBoard)]
    props = board.qemu_props()
    p = dict(dma=int(float(props["dma-rate"])), pio=int(float(props["pio-rate"])),
             adapter=int(float(props["adapter-rate"])),
             send_setup=int(props["send-setup-ns"]), frame_setup=int(props["frame-setup-ns"]),
             queue=int(props["tx-queue-frames"]))
    link = machine.networks[board.network]
    go_end = ns(4, p["pio"])                       # the TX_GO store
    out, _, last, _ = dma_send_model(p, go_end, n)[-1]
    wire_bytes = FC_WIRE_HDR + last + link.overhead_bytes
    hop = ns(wire_bytes, int(link.rate)) + link.prop_ns
    arrive = out + hop + link.switch_delay_ns + hop
    in_ring = arrive + p["frame_setup"] + ns(last, p["adapter"]) + ns(R.FC_RX_PAYLOAD + last, p["dma"])
    return in_ring / 1000


def allowance_us(model_us: float) -> float:
    return 20.0 + 0.10 * model_us


def test_raw_transfer_is_the_sum_of_its_components(artifacts):
    machine = load_machine("puma-iii", {})
    r = run_retrolink("run", "puma-iii", "--timeout", "600", "--",
                      f"fc_bench --protocols raw --sizes {','.join(map(str, SIZES))} "
                      "--reps-bytes 2097152", timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    measured = {int(m.group(1)): float(m.group(2)) for m in re.finditer(
        r"RESULT pingpong protocol=raw size=(\d+) \S+ latency_us=([\d.]+)", r.stdout)}
    assert set(measured) == set(SIZES), r.stdout
    for n in SIZES:
        model = one_way_model_us(machine, n)
        overhead = measured[n] - model
        assert 0 <= overhead <= allowance_us(model), (n, measured[n], model)
