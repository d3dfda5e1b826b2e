"""`retrolink run --shards K` (docs/fabric.md, "Shards"): the fabric as K processes under
mpirun, each serving a block of the nodes, gives the guests the one fabric's results,
byte for byte, on a token ring, a hub and a switch; a shard that dies is named, with its
host; --shards is checked before anything boots. The fabric's own tests compare every
topology's deliveries, trace and counters at 1, 2 and 4 shards with scripted nodes
(tests/fabric/test_shards.py), the multistage network among them: a cenju-3 cluster in
shards takes a minute of this host for any command (docs/fabric.md, "What it costs"),
so its guests' run is measured there, not tested here."""
import re

import pytest
from helpers import by_role, run_and_kill_a_shard, run_retrolink

pytestmark = pytest.mark.usefixtures("artifacts")

RUNS = {
    # FDDI token ring, 3 nodes: SX messages between nodes of different shards
    "sure-sx": (by_role(n0="sx_bench pingpong --peer 1 --sizes 64,4096 --iters 4 --warmup 1 "
                        "&& sx_bench stream --dst 2 --size 4096 --count 16 --window 8",
                        n1="sx_bench echo --peer 0", n2="sx_bench sink --count 16 --size 4096"),
                [2, 3]),
    # Ethernet hub, 4 nodes: two UDP flows contending on the one medium
    "eth-hub": (by_role(n0="udp_pingpong ping --peer node1 --sizes 64,1024 --iters 10",
                        n1="udp_pingpong echo",
                        n2="udp_pingpong ping --peer node3 --sizes 1472 --iters 10",
                        n3="udp_pingpong echo"), [4]),
    # a switch, 3 nodes
    "sx-switch": (by_role(n0="sx_bench pingpong --peer 2 --sizes 64,4096 --iters 4 --warmup 1",
                          n2="sx_bench echo --peer 0"), [3]),
}


def run(machine: str, shards: int):
    return run_retrolink("run", machine, "--shards", str(shards), "--", RUNS[machine][0],
                         timeout=1200)


@pytest.mark.parametrize("machine", list(RUNS))
def test_shards_give_the_one_fabrics_output(machine):
    one = run(machine, 1)
    assert one.returncode == 0, one.stdout[-3000:] + one.stderr[-3000:]
    assert one.stdout.count("RESULT") >= 2, one.stdout
    for shards in RUNS[machine][1]:
        r = run(machine, shards)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        assert f"the fabric in {shards} shards under mpirun" in r.stderr
        assert r.stdout == one.stdout, shards


def test_a_cold_boot_in_shards_passes_the_boot_barrier():
    """Every shard releases the barrier at the exchange that tells it the last arrival:
    a shard that released when its own node arrived last unheld that node before the
    other shards had heard it was held, and they waited for it for ever."""
    r = run_retrolink("run", "eth-hub", "--shards", "2", "--cold", "--", "hostname",
                      timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == [f"[node{n}] node{n}" for n in range(4)]


@pytest.mark.parametrize("shards, message", [
    (0, "--shards 0: 1 to 2 (one node a shard at most)"),
    (3, "--shards 3: 1 to 2 (one node a shard at most)"),
])
def test_bad_shard_counts_are_refused_before_booting(shards, message):
    r = run_retrolink("run", "cenju-3", "--shards", str(shards), "--", "true", timeout=120)
    assert r.returncode != 0 and message in r.stderr, r.stderr
    assert "booting" not in r.stderr


def test_a_machine_without_a_fabric_has_no_shards():
    r = run_retrolink("run", "plain", "--shards", "2", "--", "true", timeout=120)
    assert r.returncode != 0 and "has no fabric to shard" in r.stderr, r.stderr


def test_a_killed_shard_is_named_and_the_run_ends():
    code, err = run_and_kill_a_shard("eth-hub", "--shards", "2")
    assert code != 0
    assert re.search(r"fabric shard 1 \(on \S+\) was killed by signal 9", err), err[-3000:]
