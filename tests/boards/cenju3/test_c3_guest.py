"""In a guest on machines/cenju-3.toml, without any driver (unloaded; c3_regs_time maps
BAR0 through sysfs): the node boots with the interface, and every register access and cache operation holds
the vCPU for its modelled time. Two runs that differ only in reg-access-ns and
cache-line-ns differ, as the interface's own NOW register measures, by exactly
(accesses x the reg-access-ns difference) and (lines x the cache-line-ns difference): the
guest's instructions are the same in both (docs/boards/cenju3.md, "Timing"). Exactly but
for the rounding of instruction times: at 75 MIPS an instruction is 13.33 ns, rounded to
the ns, so each end of an interval may move by 1 ns (ROUNDING). Each figure is the least
of the program's 5 timings: a timer interrupt inside one adds the kernel's time to it.

Measured (defaults): 1000 reads take 253.8 us, 200 ns of bus and 53.8 ns of loop each;
a flush of 16 KB (512 lines) 22.0 us."""
import json
import re
from pathlib import Path

from helpers import by_role, byte_time_ns, run_retrolink

from retrolink.model.machine import load_machine

READS, CACHE_LEN, CACHE_ADDR = 1000, 16384, 0x100000
ROUNDING = 2
# the programs drive the interface themselves: the driver (loaded at boot) lets go first
NO_DRIVER = "rmmod norma 2>/dev/null; rmmod cenju3 2>/dev/null; "


def measure(*sets) -> dict:
    args = [x for s in sets for x in ("--set", s)]
    r = run_retrolink("run", "cenju-3", "--node", "0", *args, "--",
                      NO_DRIVER + f"c3_regs_time --reads {READS} --cache-addr {CACHE_ADDR} "
                      f"--cache-len {CACHE_LEN}", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    got = {m.group(1): int(m.group(2))
           for m in re.finditer(r"RESULT c3_(\w+) size=\d+ value=(\d+)", r.stdout)}
    assert set(got) == {"reads", "cache"}, r.stdout
    return got


def test_accesses_and_cache_operations_hold_the_vcpu_for_their_time(artifacts):
    slow = measure("boards.cenju3.pe.reg_access_ns=200", "boards.cenju3.pe.cache_line_ns=40")
    fast = measure("boards.cenju3.pe.reg_access_ns=1", "boards.cenju3.pe.cache_line_ns=0")
    # NOW is the time an access starts: from the first NOW_LO's start to the second's,
    # the first NOW_LO, NOW_HI and the READS reads
    assert abs(slow["reads"] - fast["reads"] - (READS + 2) * (200 - 1)) <= ROUNDING
    lines = CACHE_LEN // 32
    # NOW_LO, NOW_HI, the flush's 4 stores, and its lines (cache-op-ns is the same)
    assert abs(slow["cache"] - fast["cache"] - (6 * (200 - 1) + lines * 40)) <= ROUNDING
    # and with the defaults the costs are those: at least 200 ns an access
    assert slow["reads"] >= (READS + 2) * 200
    assert slow["cache"] >= 6 * 200 + 200 + lines * 40


SIZES = (4, 100, 508)


def test_messages_between_two_guests_take_the_network_and_receive_time(artifacts):
    """c3_raw on both nodes of cenju-3, the real fabric between them: node 0 sends a
    message of each size to node 1. The sender's C3_EV_DONE says when the packet left its
    interface, the receiver's C3_EV_MSG when it was in the slot; between them the `min`
    network (stages x stage_delay_ns, then 24 + n + overhead_bytes at 40 MB/s) and the
    receive side (packet-setup-ns, (4 + n) bytes of DMA). Exact but for the timers'
    firing at instruction boundaries (13.3 ns at 75 MIPS; two timers on the way)."""
    machine = load_machine("cenju-3", {})
    (board,) = machine.boards.values()
    net = machine.networks[board.network]
    iface = board.interface
    r = run_retrolink("run", "cenju-3", "--", by_role(
        n0=NO_DRIVER + f"c3_raw --role send --peer 1 --sizes {','.join(map(str, SIZES))}",
        n1=NO_DRIVER + f"c3_raw --role recv --count {len(SIZES)}"), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    done = {int(m.group(1)): int(m.group(2)) for m in
            re.finditer(r"\[node0\] RESULT c3_done size=(\d+) value=(\d+)", r.stdout)}
    arrive = {int(m.group(1)): int(m.group(2)) for m in
              re.finditer(r"\[node1\] RESULT c3_arrive size=(\d+) value=(\d+)", r.stdout)}
    assert set(done) == set(arrive) == set(SIZES), r.stdout
    for n in SIZES:
        network = net.stages * net.stage_delay_ns + (net.stages + 1) * net.prop_ns + \
            byte_time_ns(24 + n + net.overhead_bytes, net.rate)
        receive = iface.packet_setup_ns + byte_time_ns(4 + n, iface.dma_rate)
        assert 0 <= arrive[n] - done[n] - (network + receive) <= 2 * 14, (n, done, arrive)
    # the interface's promises held: the fabric never had to move a packet to a promise
    logs = Path(re.search(r"\(logs: (\S+)\)", r.stdout + r.stderr).group(1))
    stats = json.loads((logs / "fabric-stats.json").read_text())
    assert stats["causality_violations"] == 0, stats
