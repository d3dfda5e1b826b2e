"""Synthetic stations on the hub (docs/fabric.md, "hub"; `[[networks.NAME.synthetic]]`):
traffic generators inside the fabric contend for the medium like any station, collide,
back off with their seeded generators, and the run is the same every time."""
from fakenode import NEVER, FakeNode, finish

# three generators start together: every first attempt collides
CONFIG = "nodes 4\n" + "".join(
    f"synthetic {s} name=gen{s} dst=0 size=1000 interval_ns=200000 start_ns=1000 count=5\n"
    for s in (1, 2, 3)) + "topology hub rate=12500000\n"


def run(fabric) -> tuple[list[tuple[int, int]], dict]:
    f = fabric(CONFIG)
    a = FakeNode(f.sock, 0)
    a.welcome()
    while a.grant != NEVER:
        a.sync(a.grant, NEVER)
    return [(d["time"], d["src"]) for d in a.delivered], finish(f, [a])


def test_synthetic_stations_collide_and_repeat_exactly(fabric):
    first, stats = run(fabric)
    again, _ = run(fabric)
    assert first == again
    hub = {l["name"]: l for l in stats["links"]}
    collisions = sum(hub[f"hub:station{s}"]["collisions"] for s in (1, 2, 3))
    sent = sum(hub[f"hub:station{s}"]["frames"] for s in (1, 2, 3))
    assert collisions >= 3                      # at least the first three-way collision
    assert sent + stats["drops"]["excess collisions"] == 15 == len(first) + \
        stats["drops"]["excess collisions"]
    assert sorted({src for _, src in first}) == [1, 2, 3]
