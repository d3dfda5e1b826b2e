"""The perfect lock-step replay of docs/experiments/2026-11-26-lockstep-perfect-replay.md
(src/retrolink/bench/sync_timeline.py), on timelines whose answer is known."""
from retrolink.bench.sync_timeline import Timeline, by_window, from_records, ideal

POINTS, STEP, WORK, BURST = 20, 1000, 500, 10000


def _node(burst_at: int | None) -> Timeline:
    """A sync point every STEP virtual ns, WORK host ns of guest code before each, and
    BURST instead at one point."""
    work = [0] + [BURST if i == burst_at else WORK for i in range(1, POINTS)]
    return Timeline(virtual=[i * STEP for i in range(POINTS)], work=work,
                    hook=[0] * POINTS, host=sum(work))


def test_even_nodes_never_wait_for_each_other():
    a, b = _node(None), _node(None)
    assert ideal([a, b], 0) == [sum(a.work), sum(b.work)]


def test_a_burst_holds_the_peer_without_lookahead_and_not_with_enough():
    a, b = _node(3), _node(7)
    own = sum(a.work)                       # the same for both: one burst each
    # no lookahead: each node waits out the other's burst too
    assert max(ideal([a, b], 0)) == own + (BURST - WORK)
    # lookahead past the whole stretch: nobody waits
    assert ideal([a, b], POINTS * STEP) == [own, own]


def test_a_peer_is_reached_part_way_between_its_points():
    # node 1 is slow from the start (work 2000 a point); node 0 may lead it by half a
    # step, so it reaches its point i just as node 1 is half-way from i - 1 to i
    a = _node(None)
    slow = Timeline(virtual=a.virtual, work=[0] + [2000] * (POINTS - 1), hook=a.hook,
                    host=0)
    f0, f1 = ideal([a, slow], STEP // 2)
    assert f1 == 2000 * (POINTS - 1)
    assert f0 == 2000 * (POINTS - 2) + 1000


def test_records_split_into_work_and_time_in_the_hook():
    # (host in, host out, virtual, kind): 100 ns of work, then 30 in the hook, ...
    recs = [(0, 10, 5, 1), (110, 140, 1005, 1), (240, 250, 2005, 2), (900, 901, 9999, 0)]
    t = from_records(recs, 0, 3000)
    assert t.virtual == [5, 1005, 2005]
    assert t.work == [0, 100, 100]
    assert t.in_hook == 30 + 10
    assert t.host == 250 - 10


def test_windows_of_a_toggled_run_are_told_apart():
    # 4 windows of 2000 virtual ns; the setting (even windows) doubles the work
    virtual = list(range(0, 8001, 500))
    work = [0] + [200 if (v // 2000) % 2 == 0 else 100 for v in virtual[:-1]]
    t = Timeline(virtual=virtual, work=work, hook=[0] + [50] * (len(virtual) - 1), host=0)
    w = by_window(t, 2000)
    assert w[True]["syncs_per_virtual_s"] == w[False]["syncs_per_virtual_s"] == 2e6
    assert w[True]["work_per_virtual_s"] == 0.4 and w[False]["work_per_virtual_s"] == 0.2
    assert w[True]["hook_per_virtual_s"] == w[False]["hook_per_virtual_s"] == 0.1
