"""sx_test's exchange with every ordered (sender, peer) pair on a 3- and a 4-station ring.

A send is complete when the destination has confirmed delivery into its host's memory
(sure-sx.md; docs/boards/sx.md, "The timing model"): on the ring that confirmation
travels back through the stations between, a distance that differs from pair to pair
(3 stations: 1 or 2 hops; 4 stations: 1, 2 or 3). One boot per ring size runs every
pair, in rounds of disjoint pairs started at the same guest uptime (the nodes run at one
speed, so their clocks agree: sx_test compares times taken on two nodes).

Two checks a pair, each able to fail:
- sx_test's own cases on both nodes, among them send_returns_after_delivery (the
  blocking send returned after the receiver's driver had the message);
- from the board's trace, in virtual time (one clock for the whole cluster): every
  confirmation reaches the sender no sooner than the confirmation frame's own ring time
  after its message was in the receiver's rx slot (end of the SXM -> PM DMA), one
  confirmation for each message, in order.
"""
import itertools
import re
from pathlib import Path

import pytest
from helpers import byte_time_ns, run_retrolink

from retrolink.model.machine import load_machine

pytestmark = pytest.mark.usefixtures("artifacts")

FIRST_ROUND_S = 14      # guest uptime after the boot snapshot is about 12.6 s
ROUND_S = 2             # one exchange takes about 1.1 s of guest time
SENDER_CASES = ("times_received", "send_returns_after_delivery", "async_sends")
RECEIVER_CASES = ("in_order_and_intact", "async_messages_received", "send_times_back")


def rounds(nodes: int) -> list[list[tuple[int, int]]]:
    """Every ordered pair, grouped greedily into rounds in which no node is in two."""
    left, out = list(itertools.permutations(range(nodes), 2)), []
    while left:
        busy, rnd = set(), []
        for pair in list(left):
            if not busy & set(pair):
                rnd.append(pair)
                busy |= set(pair)
                left.remove(pair)
        out.append(rnd)
    return out


def script(nodes: int) -> str:
    """Each node: wait for the round's uptime, play its part (or none), say if it ran over."""
    uptime = "$(cut -d. -f1 /proc/uptime)"
    parts = []
    for k, rnd in enumerate(rounds(nodes)):
        start = FIRST_ROUND_S + ROUND_S * k
        parts.append(f'until [ "{uptime}" -ge {start} ]; do sleep 0.05; done')
        cases = []
        for s, p in rnd:
            for node, role, other in ((s, "sender", p), (p, "receiver", s)):
                cases.append(f'{node}) {{ sx_test --role {role} --peer {other}; echo "rc=$?"; }}'
                             f' | sed "s/^/{s}-{p} /";;')
        parts.append("case $RETROLINK_NODE in " + " ".join(cases) + " esac")
        parts.append(f'[ "{uptime}" -lt {start + ROUND_S} ] || echo "round {k} ran over"')
    return "; ".join(parts)


def trace_times(run_dir: Path, nodes: int) -> tuple[dict, dict]:
    """Per ordered pair (sender, receiver): when each message was in the receiver's rx
    slot, and when each confirmation reached the sender (virtual ns)."""
    placed, confirmed = {}, {}
    for node in range(nodes):
        for line in (run_dir / f"node{node}-trace.txt").read_text().splitlines():
            if m := re.search(r"retrolink_sx_rx node (\d+): rx slot \d+ holds a message from "
                              r"node (\d+), \d+ bytes, at (\d+)", line):
                placed.setdefault((int(m[2]), int(m[1])), []).append(int(m[3]))
            elif m := re.search(r"retrolink_sx_frame_in node (\d+): frame from node (\d+), "
                                r"type 2, \d+ bytes, arrives at (\d+)", line):
                confirmed.setdefault((int(m[1]), int(m[2])), []).append(int(m[3]))
    return placed, confirmed


@pytest.mark.parametrize("nodes", [3, 4])
def test_every_pair_confirms_after_delivery(nodes):
    machine = load_machine("sure-sx", {"cluster.nodes": nodes})
    dev = machine.board_of_model("sx")
    ring = machine.network_of(dev)
    r = run_retrolink("run", "sure-sx", "--set", f"cluster.nodes={nodes}",
                      "--qemu-trace", "retrolink_sx_*", "--timeout", "900", "--", "sh", "-c",
                      script(nodes), timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " ran over" not in r.stdout, r.stdout
    assert " FAIL " not in r.stdout, r.stdout
    pairs = list(itertools.permutations(range(nodes), 2))
    for s, p in pairs:
        for node, cases in ((s, SENDER_CASES), (p, RECEIVER_CASES)):
            for case in cases:
                assert f"[node{node}] {s}-{p} PASS {case}\n" in r.stdout, (s, p, case, r.stdout)
            assert f"[node{node}] {s}-{p} rc=0\n" in r.stdout, (s, p, node, r.stdout)

    placed, confirmed = trace_times(Path(re.search(r"logs: (\S+)\)", r.stderr)[1]), nodes)
    frame = byte_time_ns(dev.sxm.confirm_bytes + ring.overhead_bytes, ring.rate)
    for s, p in pairs:
        # the messages s -> p: the exchange's, the asynchronous ones, p's times back to s
        # when p is the sender; at least the exchange's 20 + 8
        assert len(placed.get((s, p), [])) >= 28, (s, p, placed.get((s, p)))
        assert len(confirmed.get((s, p), [])) == len(placed[(s, p)]), (s, p)
        least = frame + (s - p) % nodes * ring.station_delay_ns
        early = [(i, c - d) for i, (d, c) in enumerate(zip(placed[(s, p)], confirmed[(s, p)]))
                 if c - d < least]
        assert not early, (f"{s} -> {p}: confirmations sooner than {least} ns after the "
                           f"delivery (message, ns): {early}")
