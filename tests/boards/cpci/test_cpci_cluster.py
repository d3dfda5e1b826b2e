"""The board in a booted cluster (machines/cpci.toml, 2 x Pentium III on the cpci_bus
backplane), without its driver (unbound first, which resets the board): each node sets bus
mastering and its export through /dev/mem (the first MiB, which the kernel keeps for itself), stores into the peer's window,
rings its doorbell, then both load from each other's window at once, 20 times (each load
holds the vCPU while the other node serves it, through the lock-step), and neither reads
its counters or leaves before the other has rung its doorbell 2 (done loading: a node
that left is no longer on the backplane): the data each stored comes back, the doorbells
and counters are right, nothing is refused."""
import re

import pytest
from helpers import kernel_checked, kernel_problems, run_retrolink

pytestmark = pytest.mark.usefixtures("artifacts")

LOADS = 20
# BAR0 and BAR2 as the BIOS places them (the board is device 00:01.0 on q35)
SCRIPT = f"""
N=$RETROLINK_NODE; P=$((1 - N)); C=0xfe800000; W=0xfe000000
echo 0000:00:01.0 > /sys/bus/pci/drivers/cpci/unbind
printf '\\006' | dd of=/sys/bus/pci/devices/0000:00:01.0/config bs=1 seek=4 conv=notrunc 2>/dev/null
devmem $((C + 0x18)) 32 0x70000
devmem $((C + 0x1c)) 32 0
devmem $((C + 0x20)) 32 0x1000
devmem $((C + 0x10)) 32 3
sleep 1
devmem $((W + P * 0x100000 + 0x10)) 32 $((0x11110000 + N))
devmem $((C + 0x28)) 32 $(((P << 16) | 1))
sleep 1
i=0; while [ $i -lt {LOADS} ]; do v=$(devmem $((W + P * 0x100000 + 0x10)) 32); i=$((i + 1)); done
db=$(devmem $((C + 0x2c)) 32)
devmem $((C + 0x28)) 32 $(((P << 16) | 2))
i=0; while [ $(($(devmem $((C + 0x2c)) 32) & (1 << (4 * P + 2)))) -eq 0 ] && [ $i -lt 100 ]; do
  sleep 0.1; i=$((i + 1)); done
echo "cpci-check load $v db $db err $(devmem $((C + 0x38)) 32)" \
     "rxw $(devmem $((C + 0x8c)) 32) rxr $(devmem $((C + 0x94)) 32)" \
     "txr $(devmem $((C + 0x88)) 32) rej $(devmem $((C + 0x98)) 32)"
"""


def test_stores_doorbells_and_mutual_loads_in_a_cluster():
    r = run_retrolink("run", "cpci", "--", "sh", "-c", kernel_checked(SCRIPT.strip()),
                      timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert not kernel_problems(r)
    got = dict(re.findall(r"\[node(\d)\] cpci-check (.*)", r.stdout))
    assert set(got) == {"0", "1"}, r.stdout[-3000:]
    for n in (0, 1):
        fields = dict(zip(*[iter(got[str(n)].split())] * 2))
        assert fields == {"load": f"0x1111000{n}",                 # what this node stored
                          "db": f"0x{1 << (4 * (1 - n) + 1):08X}",  # the peer's doorbell 1
                          "err": "0x00000000", "rxw": "0x00000001",
                          "rxr": f"0x{LOADS:08X}", "txr": f"0x{LOADS:08X}",
                          "rej": "0x00000000"}, (n, fields)
