"""min_frame_bytes on the topologies that count framing in overhead_bytes (p2p, switch,
min, token_ring): a frame shorter than the protocol's least frame holds every link as
long as the least frame, and the network's least latency, each node's first grant (the
lock-step's lookahead), counts that frame. Times computed here from the parameters."""
import pytest
from fakenode import FakeNode, check_config

NEVER = 2**64 - 1
NS_PER_BYTE = 10                # rate=100000000
OVERHEAD = 8
LEAST = 24                      # min_frame_bytes
HOP = 1000 + 11 * NS_PER_BYTE   # the ring's token: station delay and 11 token bytes


def on_wire(length: int, least: int) -> int:
    return (max(length, least) + OVERHEAD) * NS_PER_BYTE


# each topology's line, a frame's arrival when node 0 sends it to node 1 at t=0 on an
# idle network (on_wire time -> arrival), and what of that is no latency: the token's
# way to the sender. The least latency is an empty frame's arrival less that wait.
TOPOLOGIES = {
    "p2p": ("topology p2p prop_ns=500", lambda w: w + 500, 0),
    "switch": ("topology switch prop_ns=500 switch_delay_ns=1000",
               lambda w: 2 * (w + 500) + 1000, 0),
    "min": ("topology min stage_delay_ns=250 k=2 stages=1", lambda w: 250 + w, 0),
    # the token leaves station 1 at 0 and reaches station 0 a hop later
    "token_ring": ("topology token_ring station_delay_ns=1000", lambda w: HOP + w + 1000, HOP),
}
CASES = [(kind, least, length) for kind in sorted(TOPOLOGIES) for least, length in
         ((0, 1), (LEAST, 1), (LEAST, LEAST), (LEAST, 100))]


@pytest.mark.parametrize("kind,least,length", CASES)
def test_a_short_frame_holds_the_wire_as_long_as_the_least_frame(fabric, kind, least, length):
    line, arrival, token_wait = TOPOLOGIES[kind]
    f = fabric(f"nodes 2\n{line} rate=100000000 overhead_bytes={OVERHEAD} "
               f"min_frame_bytes={least}\n")
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome()
    # the first grant is the least latency: an empty frame, padded to the least frame
    assert b.welcome() == arrival(on_wire(0, least)) - token_wait
    a.send(0, 1, b"x" * length)
    a.report(0, NEVER)
    while not b.delivered:
        b.sync(b.grant, NEVER)
    assert b.delivered[0]["time"] == arrival(on_wire(length, least))
    assert b.delivered[0]["payload"] == b"x" * length    # padding is time on the wire only


@pytest.mark.parametrize("kind", sorted(TOPOLOGIES))
def test_a_least_frame_longer_than_the_mtu_is_a_configuration_error(fabric_binary, tmp_path,
                                                                    kind):
    line = TOPOLOGIES[kind][0]
    r = check_config(fabric_binary, tmp_path,
                     f"nodes 2\n{line} rate=100000000 mtu=100 min_frame_bytes=101\n")
    assert r.returncode == 2
    assert f"{kind}: min_frame_bytes=101 is larger than mtu=100" in r.stderr
