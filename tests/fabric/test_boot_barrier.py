"""The boot barrier in the fabric (fabric/core/barrier.c, state.c; docs/snapshots.md),
with fake nodes: held nodes do not hold the others up; the barrier's time is the latest
arrival and no grant passes it until every node is there; frames before it are refused;
the state saved there is read back, and a damaged one is refused; synthetic nodes start
only once it is passed."""
import pytest
from fakenode import NEVER, FakeNode, check_config

from retrolink import wire

TOPOLOGY = "topology p2p rate=1000000000 prop_ns=1000\n"


def barrier_at(node: FakeNode) -> dict:
    while True:
        m = node.recv()
        assert m["type"] != wire.ERROR, m
        if m["type"] == wire.BARRIER_AT:
            return m


def start(fabric, extra=""):
    f = fabric(f"nodes 2\nboot_barrier on\n{extra}" + TOPOLOGY)
    n = [FakeNode(f.sock, i, reaction_ns=500) for i in range(2)]
    for x in n:
        x.welcome()
    return f, n


def test_held_node_lets_the_other_run_and_the_barrier_is_the_latest_arrival(fabric, tmp_path):
    state = tmp_path / "fabric.state"
    f, (a, b) = start(fabric, f"save_state {state}\n")
    a.raw(wire.barrier(0, a.grant, wire.BARRIER_HELD))
    # node 1 is granted on and on past node 0's arrival: a held node promises nothing
    t = b.grant
    for _ in range(5):
        t = b.sync(t, t + 500)
    assert t > a.grant + 10_000
    b.raw(wire.barrier(1, t, wire.BARRIER_HELD))
    at = [barrier_at(x) for x in (a, b)]
    assert [m["time"] for m in at] == [t, t]
    assert all(m["flags"] == wire.BARRIER_SAVE for m in at)
    # node 0 runs to t and no further, whatever it promises
    assert a.sync(a.grant, a.grant + 10**9) <= t
    g = a.grant
    while g < t:
        g = a.sync(g, g + 10**9)
    assert g == t
    for x in (a, b):
        x.raw(wire.barrier(x.node, t, wire.BARRIER_STOPPED))
    # the fabric saves its state there, then grants past it
    assert a.sync(t, t + 10**9) > t
    assert state.read_text().splitlines()[:3] == ["retrolink-fabric-state 1", "nodes 2",
                                                  f"barrier {t}"]


def test_a_frame_before_the_barrier_is_refused(fabric, tmp_path):
    """...and the status file names the node cut off, so that the runner ends the run
    (its QEMU would wait at the barrier for ever)."""
    import json
    path = tmp_path / "status.json"
    f, (a, b) = start(fabric, f"status {path}\n")
    a.send(a.grant, 1, b"early")
    with pytest.raises(ConnectionError, match="before the boot barrier"):
        a.wait_grant()
    (d,) = json.loads(path.read_text())["disconnected"]
    assert d["node"] == 0 and d["name"] == "node0" and "before the boot barrier" in d["why"]


def test_barrier_without_one_configured_is_refused(fabric):
    f = fabric("nodes 2\n" + TOPOLOGY)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.raw(wire.barrier(0, 0, wire.BARRIER_HELD))
    with pytest.raises(ConnectionError, match="no boot barrier"):
        a.wait_grant()


def test_restored_nodes_start_at_their_saved_times(fabric, tmp_path):
    state = tmp_path / "fabric.state"
    state.write_text("retrolink-fabric-state 1\nnodes 2\nbarrier 5000000\n"
                     "node 0 t=5000000 syncs=3 sync_points=9\n"
                     "node 1 t=5000007 syncs=4 sync_points=8\n")
    f = fabric(f"nodes 2\nboot_barrier on\nrestore_state {state}\n" + TOPOLOGY)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    assert a.welcome() > 5_000_000 and b.welcome() > 5_000_000
    assert "started at the boot barrier, 5000000 ns" in open(f.log).read()


@pytest.mark.parametrize("text, why", [
    ("retrolink-fabric-state 2\n", "not a fabric state of this version"),
    ("retrolink-fabric-state 1\nnodes 3\n", "node count"),
    ("retrolink-fabric-state 1\nnodes 2\nbarrier 10\nnode 0 t=10 syncs=0 sync_points=0\n",
     "missing"),
    ("retrolink-fabric-state 1\nnodes 2\nbarrier 10\nnode 0 t=5 syncs=0 sync_points=0\n",
     "at or after the barrier"),
    ("retrolink-fabric-state 1\nnodes 2\nbarrier 10\nnode 0 t=10 syncs=0 sync_points=0 x\n",
     "node K"),
    ("retrolink-fabric-state 1\nnodes 2\nbarrier 10\nnode 7 t=10 syncs=0 sync_points=0\n",
     "node K"),
])
def test_a_damaged_state_is_refused_by_name(fabric, tmp_path, text, why):
    state = tmp_path / "fabric.state"
    state.write_text(text)
    f = fabric(f"nodes 2\nboot_barrier on\nrestore_state {state}\n" + TOPOLOGY)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    assert f.proc.wait(timeout=10) == 2
    log = open(f.log).read()
    assert str(state) in log and why in log and "--cold" in log


def test_barrier_configuration_is_checked(fabric_binary, tmp_path):
    r = check_config(fabric_binary, tmp_path, f"nodes 2\nsave_state {tmp_path}/s\n" + TOPOLOGY)
    assert r.returncode == 2 and "need 'boot_barrier on'" in r.stderr


def test_a_state_that_cannot_be_written_is_said_and_the_cluster_runs_on(fabric, tmp_path):
    # the snapshot maker gave up and removed its folder before the fabric wrote its state
    state = tmp_path / "gone" / "fabric.state"
    f, (a, b) = start(fabric, f"save_state {state}\n")
    a.raw(wire.barrier(0, a.grant, wire.BARRIER_HELD))
    b.raw(wire.barrier(1, b.grant, wire.BARRIER_HELD))
    t = max(m["time"] for m in [barrier_at(x) for x in (a, b)])
    for x in (a, b):
        g = x.grant
        while g < t:
            g = x.sync(g, g + 10**9)
        x.raw(wire.barrier(x.node, t, wire.BARRIER_STOPPED))
    # granted past the barrier all the same, and no state anywhere
    assert a.sync(t, t + 10**9) > t
    assert b.sync(t, t + 10**9) > t
    assert not state.exists() and not state.parent.exists()
    assert f.proc.poll() is None                    # still running
    assert ("cannot write the fabric's state" in f.log.read_text()
            and "no snapshot is made, the cluster runs on" in f.log.read_text())


# a 100 Mb/s hub: a 1000-byte frame holds the wire W = (8 + 1004) bytes = 80960 ns
HUB = "topology hub rate=12500000 prop_ns=1500\n"
W_1000 = 80960


@pytest.mark.parametrize("start_ns", [1000, 3_000_000])
def test_a_synthetic_node_starts_after_the_barrier_never_during_the_boot(fabric, start_ns):
    # node 2 would send to node 0 from start_ns; nodes 0 and 1 boot until about 2 ms
    f = fabric("nodes 3\nboot_barrier on\nsynthetic 2 name=gen dst=0 size=1000 "
               f"interval_ns=200000 start_ns={start_ns} count=1\n" + HUB)
    a, b = (FakeNode(f.sock, i, reaction_ns=500) for i in range(2))
    for x in (a, b):
        x.welcome()
    a.raw(wire.barrier(0, a.grant, wire.BARRIER_HELD))
    # node 1 boots on to 2 ms: neither the held node nor the synthetic one holds it back
    t, g = 2_000_000, b.grant
    while g < t:
        g = b.sync(g, g + 10**9)
    b.raw(wire.barrier(1, t, wire.BARRIER_HELD))
    assert [barrier_at(x)["time"] for x in (a, b)] == [t, t]
    g = a.grant
    while g < t:
        g = a.sync(g, g + 10**9)
    assert not a.delivered
    # past the barrier: the frame goes at its start_ns, or at the barrier's time if
    # that is later, and arrives a frame and the hub's delay after
    ready = max(start_ns, t)
    for x in (a, b):
        x.report(t, t + 10**9)
    while not a.delivered:
        a.step()
    assert a.delivered[0]["time"] == ready + W_1000 + 1500


def test_a_released_node_s_held_slot_grants_nothing_past_the_barrier(fabric):
    """A node that publishes in its slot said "never" there when held. Once released,
    until it publishes again the fabric keeps its promise at its time and the barrier's
    cap in the file: a peer reading that slot would otherwise run on unbounded, and a
    frame the released node then sends would reach it in its past."""
    from test_lockstep_file import LockstepFile
    f = fabric("nodes 2\nboot_barrier on\n" + TOPOLOGY)
    file = LockstepFile(f.sock)
    file.use_slot(1)
    a, b = FakeNode(f.sock, 0, reaction_ns=500), FakeNode(f.sock, 1, reaction_ns=500)
    a.welcome(), b.welcome()
    a.raw(wire.barrier(0, a.grant, wire.BARRIER_HELD))
    t = b.grant
    while t < 50_000:
        t = b.sync(t, t + 500)
    file.publish(1, t=t, promise=NEVER, grant=t)     # b, the last to arrive
    b.raw(wire.barrier(1, t, wire.BARRIER_HELD))
    assert [barrier_at(x)["time"] for x in (a, b)] == [t, t]
    g = a.grant
    while g < t:
        g = a.sync(g, NEVER)
    assert g == t
    # a is at t, b's slot still says "never": nothing past t, in the socket or the file
    a.report(t, NEVER)
    with pytest.raises(TimeoutError):
        a.wait_grant()
    assert file.ls.fab.cap == t
    # b publishes from t: a may go to b's promise plus the link's latency
    file.publish(1, t=t, promise=t + 7000, grant=t)
    b.raw(wire.progress(1, t))
    assert a.wait_grant() == t + 7000 + file.ls.s.latency[0]
