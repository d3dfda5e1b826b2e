"""One run on machines/sx-eth.toml uses both networks of a node: the SX ring (all three
nodes) and the point-to-point Ethernet link (nodes 0 and 1 only), each QEMU with one
lock-step connection for its two boards. The run is deterministic: twice, same output,
once with grants through the lock-step file (the default) and once with every grant a
round trip on the socket (RETROLINK_LOCKSTEP=socket, the transport before it): the
transport decides only when in host time a node runs, never what it computes."""
import re

import pytest
from helpers import by_role, run_retrolink

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")


# nodes 0 and 1 talk SX over the ring (3 stations: node 2's board is on it too) and UDP
# over the lan at once; node 2 has no Ethernet at all
CMD = by_role(
    n0="udp_pingpong ping --peer node1 --sizes 64,1024 --iters 10 > /tmp/udp.out & u=$!; "
       "sx_test --role sender --peer 1; s=$?; wait $u; udp=$?; cat /tmp/udp.out; "
       "echo \"rc udp=$udp sx=$s\"",
    n1="udp_pingpong echo & sx_test --role receiver --peer 0; r=$?; wait; "
       "ls /sys/class/net; exit $r",
    n2="[ -c /dev/sx0 ] && echo sx-present; ls /sys/class/net")


def sx_eth(cmd, env=None):
    return run_retrolink("run", "sx-eth", "--timeout", "900", "--", "sh", "-c", cmd,
                         timeout=1200, env=env)


def test_sx_and_ethernet_in_one_run_are_deterministic_whatever_the_transport():
    first = sx_eth(CMD)
    assert first.returncode == 0, first.stdout + first.stderr
    out = first.stdout
    # SX over the ring between nodes 0 and 1, while their UDP runs
    assert "[node0] rc udp=0 sx=0" in out and "[node0] PASS send_returns_after_delivery" in out, out
    assert not [l for l in out.splitlines() if re.match(r"\[node\d\] FAIL ", l)], out
    assert "[node1] PASS in_order_and_intact" in out, out
    # UDP over the Ethernet link between nodes 0 and 1
    assert len([l for l in out.splitlines() if l.startswith("[node0]") and " RESULT " in l]) == 4, out
    # node 1 has both boards, node 2 only the SX board (no Ethernet interface)
    assert "[node1] eth0  lo" in out and "[node2] sx-present" in out, out
    eth_lines = [l for l in out.splitlines() if l.startswith("[node2]") and l.split()[-1].startswith("eth")]
    assert eth_lines == [], out
    second = sx_eth(CMD, env={"RETROLINK_LOCKSTEP": "socket"})
    assert second.returncode == 0, second.stdout + second.stderr
    assert first.stdout == second.stdout
