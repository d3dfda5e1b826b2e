"""Model test: the latency measured in the guest is the sum of the component times.

On an idle point-to-point link, one way of a message of n bytes takes
    bus(n) + send firmware + wire(n) + receive firmware + bus(n)
where bus(n) = n / 10 MB/s (PM-SXM DMA), firmware = instructions / MIPS, and
wire(n) = (16-byte SX header + n + 28 bytes FDDI overhead) / 12.5 MB/s + 5 us.
What the guest measures is that plus the guest's own software on its 125 MIPS CPU:
per direction two system calls, an interrupt and a wake-up (about 60 us), and four
copies of the message (user -> kernel -> window, window -> kernel -> user). The
tolerance is therefore [0, 80 us + 15 us per KB]: at most 10,000 + 1,900 guest
instructions per KB. It never goes below 0 (the model cannot be beaten), and it is far
below any one component (313 us of firmware, 410 us of bus DMA at 4 KB), so a wrong or
missing stage fails the test. Timers fire at most one instruction (8 ns) late.
"""

import pytest
from helpers import byte_time_ns as ns
from helpers import check_model, run_retrolink

from retrolink.model.machine import load_machine

SX_HEADER = 16


def guest_software_allowance_us(n: int) -> float:
    return 80 + 15 * n / 1024


def model_one_way_us(machine, n: int) -> float:
    dev = machine.board_of_model("sx")
    link = machine.network_of(dev)
    bus = ns(n, dev.pm_bus.channel_rate)
    send_fw = round(dev.sxm.send_insns * 1000 / dev.sxm.mips)
    recv_fw = round(dev.sxm.recv_insns * 1000 / dev.sxm.mips)
    wire = ns(SX_HEADER + n + link.overhead_bytes, link.rate) + link.prop_ns
    return (2 * bus + send_fw + wire + recv_fw) / 1000


@pytest.mark.parametrize("mips", [1.9, 20])
def test_one_way_latency_is_the_sum_of_the_components(artifacts, mips):
    sizes = [64, 4096]
    machine = load_machine("sx-pair", {"sxm.mips": mips})
    cmd = (f"case $RETROLINK_NODE in 0) sx_bench pingpong --peer 1 --sizes 64,4096 "
           f"--iters 5 --warmup 1;; 1) sx_bench echo;; esac")
    r = run_retrolink("run", "sx-pair", "--set", f"sxm.mips={mips}", "--", "sh", "-c", cmd)
    assert r.returncode == 0, r.stdout + r.stderr
    check_model(r.stdout, "latency_us", sizes, lambda n: model_one_way_us(machine, n),
                guest_software_allowance_us)
