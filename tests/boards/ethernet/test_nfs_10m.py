"""NFS over the timed 10 Mb/s Ethernet (machines/nfs-10m.toml, docs/nfs.md): QEMU's
PCnet-PCI under the stock pcnet32 driver on a 10BASE-T hub, the kernel's NFSv4 server and
client with Debian's tools. One run of the two nodes: node 0 writes a 1 MiB pattern file
and exports its directory (nfs-serve), node 1 mounts it (nfs-mount) and reads the file
twice (file_time: the first read cold, right after the mount; the second from its page
cache), then tells node 0 over TCP that it is done."""
import json
import re

import pytest
from ethernet_runs import counters, run_dir
from helpers import by_role, run_retrolink

from retrolink.model.machine import load_machine

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")

SIZE = 1 << 20
COMMAND = by_role(
    n0=f"mkdir -p /srv && file_time write /srv/data --bytes {SIZE} && md5sum /srv/data && "
       "nfs-serve /srv && nc -l -p 7000 && dmesg | grep pcnet32",
    n1="nfs-mount node0:/srv /mnt && grep ' /mnt ' /proc/mounts && "
       "file_time read /mnt/data && file_time read /mnt/data && md5sum /mnt/data; rc=$?; "
       "echo done | nc node0 7000; dmesg | grep pcnet32; exit $rc",
)


@pytest.fixture(scope="module")
def nfs_run():
    r = run_retrolink("run", "nfs-10m", "--timeout", "900", "--", COMMAND, timeout=1000)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    return r


def reads_ns(stdout: str) -> list[int]:
    return [int(m.group(1)) for m in re.finditer(
        rf"\[node1\] RESULT file_read bytes={SIZE} block=65536 ns=(\d+)", stdout)]


def test_the_client_reads_the_servers_file_over_nfsv4_on_tcp(nfs_run):
    out = nfs_run.stdout
    assert "[node0] nfs-serve: /srv exported (NFSv4 over TCP)" in out, out
    mount = re.search(r"\[node1\] node0:/srv /mnt nfs4 (\S+)", out)
    assert mount and {"vers=4.2", "proto=tcp", "sec=sys"} <= set(mount.group(1).split(",")), out
    sums = re.findall(r"\[node(\d)\] ([0-9a-f]{32})  /(?:srv|mnt)/data", out)
    assert [n for n, _ in sums] == ["0", "1"] and sums[0][1] == sums[1][1], out
    assert len(reads_ns(out)) == 2, out


def test_a_cold_read_takes_the_wire_time_at_10_mbps_and_a_warm_one_does_not(nfs_run):
    """1 MiB of payload alone is 0.84 s at 10 Mb/s; in full frames (1448 bytes of TCP
    payload in 1514, with preamble, FCS and the gap) 0.89 s; what the guests' software
    adds at 28.5 MIPS stays below half of that. The second read is from the client's
    page cache."""
    rate = load_machine("nfs-10m").networks["ether"].rate
    cold, warm = reads_ns(nfs_run.stdout)
    payload_ns = SIZE * 1e9 / rate
    frames_ns = -(-SIZE // 1448) * (1514 + 8 + 4 + 12) * 1e9 / rate
    assert payload_ns < frames_ns < cold < 1.5 * frames_ns, (cold, frames_ns)
    assert warm < cold / 10, (warm, cold)


def test_the_pcnet_nics_and_the_hub_lose_nothing(nfs_run):
    """The pcnet32 driver found QEMU's 79C970A and saw its link come up; the file crossed
    the hub as at least a frame per 1448 bytes, and no frame was dropped at a NIC or in
    the hub (collisions, which a half-duplex medium has, are retried)."""
    out = nfs_run.stdout
    for node in (0, 1):
        assert re.search(rf"\[node{node}\] \[ *[\d.]+\] pcnet32: eth0: registered as "
                         r"PCnet/PCI II 79C970A", out), out
        assert re.search(rf"\[node{node}\] \[ *[\d.]+\] pcnet32 \S+ eth0: link up", out), out
    c = counters(nfs_run)
    assert all(v == 0 for n in c.values() for k, v in n.items() if k.startswith("drop_")), c
    assert c[0]["tx_frames"] > SIZE // 1448 and c[0]["tx_bytes"] > SIZE, c
    hub = json.loads((run_dir(nfs_run) / "fabric-stats.json").read_text())
    assert len(hub["links"]) == 2 and hub["drops"] == dict.fromkeys(hub["drops"], 0), hub
    assert all(l["drops_excess_collisions"] == l["drops_queue_full"] == 0
               for l in hub["links"]), hub
