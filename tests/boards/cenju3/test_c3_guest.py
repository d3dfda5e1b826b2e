"""In a guest on machines/cenju-3.toml, without any driver (c3_regs_time maps BAR0 through
sysfs): the node boots with the interface (its modules load once they are built, and a
node boots without them meanwhile), and every register access and cache operation holds
the vCPU for its modelled time. Two runs that differ only in reg-access-ns and
cache-line-ns differ, as the interface's own NOW register measures, by exactly
(accesses x the reg-access-ns difference) and (lines x the cache-line-ns difference): the
guest's instructions are the same in both (docs/boards/cenju3.md, "Timing"). Exactly but
for the rounding of instruction times: at 75 MIPS an instruction is 13.33 ns, rounded to
the ns, so each end of an interval may move by 1 ns (ROUNDING).

Measured (defaults): 1000 reads take 253.8 us, 200 ns of bus and 53.8 ns of loop each;
a flush of 16 KB (512 lines) 22.0 us."""
import re

from helpers import run_retrolink

READS, CACHE_LEN, CACHE_ADDR = 1000, 16384, 0x100000
ROUNDING = 2


def measure(*sets) -> dict:
    args = [x for s in sets for x in ("--set", s)]
    r = run_retrolink("run", "cenju-3", "--node", "0", *args, "--",
                      f"c3_regs_time --reads {READS} --cache-addr {CACHE_ADDR} "
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
