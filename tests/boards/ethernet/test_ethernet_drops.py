"""A NIC that cannot take a frame drops it and counts it, as hardware does: here node 1's
interface is down (the e1000 driver has turned its receiver off) while node 0 floods it
with UDP. Nothing hangs, the frames are counted as dropped by node 1's netdev, and once
node 1's interface is up again the two talk as before."""
from ethernet_runs import counters, eth_pair
from helpers import by_role

COUNT = 2000

# node 1: its interface down for 2 s of its time, then up again, then an echo server
RECEIVER = ("ip link set eth0 down && echo down && sleep 2 && ip link set eth0 up && "
            "while [ \"$(cat /sys/class/net/eth0/carrier)\" != 1 ]; do sleep 0.1; done && "
            "echo up && udp_pingpong echo")
# node 0: node 1's MAC known (no ARP while it cannot answer), a flood while it is down,
# then round trips once it is up again (udp_pingpong waits for the echo server)
SENDER = ("arp -i eth0 -s 198.18.0.2 52:54:00:52:00:01 && "
          f"sleep 0.5 && udp_pingpong flood --peer node1 --size 1000 --count {COUNT} && "
          "udp_pingpong ping --peer node1 --sizes 64 --iters 3")


def test_a_receiver_that_cannot_take_frames_drops_and_counts_them(artifacts):
    r = eth_pair(by_role(n0=SENDER, n1=RECEIVER))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[node1] down" in r.stdout and "[node1] up" in r.stdout
    assert f"[node0] RESULT flood size=1000 sent={COUNT}" in r.stdout, r.stdout
    assert "[node0] RESULT rtt_ns size=64" in r.stdout, r.stdout
    c = counters(r)
    assert c[0]["tx_frames"] >= COUNT, c
    dropped = c[1]["drop_rx_not_ready"]
    assert dropped > COUNT // 2, c
    # every frame node 0 sent reached node 1's netdev: taken by the NIC or counted
    assert c[0]["tx_frames"] == c[1]["rx_frames"] + dropped, c
    assert c[1]["drop_rx_refused"] == 0 and c[1]["drop_rx_no_link"] == 0, c
