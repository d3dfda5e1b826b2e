"""The instruction profile (docs/profile.md) on the Cenju-3 pair: PE 0's timed 4-byte
remote round trips, profiled twice, count the same instructions function by function;
the count fits in the measured round trip at the node's MIPS; norma.ko, the interface's
driver and the system call path are where a message's software runs."""
import json
import re
from pathlib import Path

import pytest
from helpers import run_retrolink

pytestmark = pytest.mark.usefixtures("artifacts")

REPS = 20
SCRIPT = ("case $RETROLINK_NODE in "
          f"0) mach_bench client --server-node 1 --sizes 4 --reps {REPS} --warmup 2 "
          "--ool-pages 1 --ool-runs 1 --ool-warmup 0 --mark 1;; "
          "1) mach_bench serve;; esac")


def profiled_run() -> tuple[dict, float, str]:
    r = run_retrolink("run", "cenju-3", "--insn-profile", "0", "--insn-per", str(REPS), "--",
                      SCRIPT, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(re.search(r"\(logs: (\S+)\)", r.stderr)[1])
    rtt = float(re.search(r"RESULT latency where=remote size=4 .* rtt_us=([\d.]+)", r.stdout)[1])
    assert " T _text" not in r.stdout               # the symbol lines are not output
    return json.loads((run_dir / "node0-insns.json").read_text()), rtt, r.stdout


def test_profiled_round_trips_count_the_same_instructions_twice():
    (a, rtt_a, out), (b, rtt_b, _) = profiled_run(), profiled_run()
    assert a == b and rtt_a == rtt_b
    assert a["windows"] == 1 and a["per"] == REPS
    assert "instruction profile of node 0" in out and "by category" in out
    # node 0 runs its part of every round trip (a send, a receive, the accept notices),
    # and idles (hlt: no instructions) while the network and node 1 work: less than the
    # round trip's time at 75 MIPS, and more than a tenth of it
    mips = 75.0
    assert rtt_a / 10 < a["instructions"] / mips < rtt_a, (a["instructions"], rtt_a)
    cats = a["categories"]
    for where in ("module norma", "module cenju3", "system call entry and exit", "user space"):
        assert cats.get(where, 0) > 0, (where, cats)
    assert sum(cats.values()) == pytest.approx(a["instructions"])
