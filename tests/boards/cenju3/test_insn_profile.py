"""The instruction profile (docs/profile.md) on the Cenju-3 pair: PE 0's timed 4-byte
remote round trips, profiled twice, count the same instructions function by function
and step by step (norma.ko's step marks); the count fits in the measured round trip at
the node's MIPS; norma.ko, the interface's driver and the system call path are where a
message's software runs; every step of the breakdown runs once a round trip."""
import json
import re
from pathlib import Path

import pytest
from helpers import run_retrolink

pytestmark = pytest.mark.usefixtures("artifacts")

REPS = 20
SCRIPT = ("case $RETROLINK_NODE in "
          "0) echo 1 > /sys/module/norma/parameters/step_marks; "
          f"mach_bench client --server-node 1 --sizes 4 --reps {REPS} --warmup 2 "
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


@pytest.fixture(scope="module")
def profiles():
    return profiled_run(), profiled_run()


def test_profiled_round_trips_count_the_same_instructions_twice(profiles):
    (a, rtt_a, out), (b, rtt_b, _) = profiles
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


def test_every_step_runs_once_a_round_trip_and_the_steps_add_up(profiles):
    """One round trip on PE 0: its send's steps, the receive complete and accept notice
    coming back, then the echo's receive; every instruction in the window is in one
    step."""
    (a, _, _), (b, _, _) = profiles
    assert a["segments"] == b["segments"] and a["steps"] == b["steps"]
    pairs = {(g["from"], g["to"]): g for g in a["segments"]}
    path = ["send_begin", "send_copied", "send_queued", "de_send", "de_done_rx", "de_done",
            "send_done", "de_accept_rx", "de_request_rx", "de_deliver", "rcv_arrived",
            "rcv_queued", "rcv_taken", "de_accept_tx", "rcv_done", "send_begin"]
    for step, after in zip(path, path[1:]):
        assert pairs[(step, after)]["passes"] == pytest.approx(1, abs=0.1), (step, after)
    total = sum(g["instructions"] for g in a["segments"])
    assert total == pytest.approx(a["instructions"])
    assert sum(s["instructions"] for s in a["steps"].values()) == pytest.approx(total)
