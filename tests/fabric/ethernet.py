"""Formulas and checks shared by the Ethernet topologies' tests (docs/fabric.md,
"Ethernet")."""
from fakenode import NEVER, cluster, finish


def wire_ns(length: int, byte_ns: int) -> int:
    """A frame of `length` bytes (no FCS) on the wire: preamble and SFD, the frame padded
    to 64 bytes with its 4-byte FCS, at byte_ns a byte."""
    return (8 + max(length + 4, 64)) * byte_ns


def times(node) -> list[int]:
    """When each frame delivered to a fake node arrived."""
    return [d["time"] for d in node.delivered]


def check_grant_stops_at_the_arrival(fabric, topology: str, pending: int, arrival: int):
    """Node 0's empty frame for node 1, ready at 0, leaves a topology event pending at
    `pending`; node 0 promises it may send then, so the event stays pending. Node 1's
    grant must reach the frame's arrival (the event's own lookahead) and not pass it."""
    f, (a, b) = cluster(fabric, 2, topology)
    a.send(0, 1, b"")
    a.report(0, pending)
    assert b.sync(0, NEVER) == arrival
    a.report(pending, NEVER)
    while not b.delivered:
        b.sync(b.grant, NEVER)
    assert times(b) == [arrival]
    assert finish(f, [a, b])["causality_violations"] == 0
