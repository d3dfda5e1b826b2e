"""`retrolink run --hosts H1,H2,...` (docs/fabric.md, "Shards on several hosts"): a shard
of the fabric on each host with its nodes' QEMUs, started by mpirun through each host's
host_shard.py. Every host here is this machine (by two names, and one name twice), so
what is tested is everything but ssh: mpirun's launch of the hosts' processes, the
nodes started beside their shard, their statuses read back through the run's folder,
the one fabric's output byte for byte, a dead shard named with its host, and the checks
made before anything boots."""
import re
import socket
import subprocess

import pytest
from helpers import by_role, run_and_kill_a_shard, run_retrolink

pytestmark = pytest.mark.usefixtures("artifacts")

PINGPONG = by_role(n0="udp_pingpong ping --peer node1 --sizes 64,1024 --iters 10",
                   n1="udp_pingpong echo",
                   n2="udp_pingpong ping --peer node3 --sizes 1472 --iters 10",
                   n3="udp_pingpong echo")


def run(*args, timeout=1200):
    return run_retrolink("run", "eth-hub", *args, "--", PINGPONG, timeout=timeout)


@pytest.mark.parametrize("hosts", [f"localhost,{socket.gethostname()}", "localhost,localhost"])
def test_a_shard_a_host_gives_the_one_fabrics_output(hosts):
    one = run()         # (from the snapshot: the same output as cold, test_snapshots.py)
    assert one.returncode == 0, one.stdout[-3000:] + one.stderr[-3000:]
    assert one.stdout.count("RESULT") == 6, one.stdout
    r = run("--hosts", hosts)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    first, second = hosts.split(",")
    assert (f"the fabric in 2 shard(s) on {first} (nodes 0-1), {second} (nodes 2-3)"
            in r.stderr), r.stderr
    assert r.stdout == one.stdout
    run_dir = re.search(r"logs: (\S+)\)", r.stderr).group(1)
    for n in range(4):
        where = open(f"{run_dir}/node{n}.host").read()
        assert where.startswith(f"{socket.gethostname()} pid "), where
        assert open(f"{run_dir}/node{n}.exit").read() == "85\n"    # the guest's own end


@pytest.mark.parametrize("args, message", [
    (["--hosts", "a,b,c,d,e"], "--hosts a,b,c,d,e: 5 shards for 4 nodes"),
    (["--hosts", "a,b,a"], "--hosts a,b,a: a appears apart: list a host's shards together "
                           "(a,a,b)"),
    (["--hosts", "a,-x"], "--hosts a,-x: '-x' is not a host name"),
    (["--hosts", "a,b", "--shards", "2"], "--hosts a,b: a shard a host; leave out --shards"),
    (["--hosts", "a,b", "--gdb", "0"], "--hosts a,b: --gdb needs the node's QEMU on this host"),
])
def test_bad_host_lists_are_refused_before_booting(args, message):
    r = run_retrolink("run", "eth-hub", *args, "--", "true", timeout=120)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "booting" not in r.stderr and "Traceback" not in r.stderr


def test_a_machine_without_a_fabric_has_no_hosts():
    r = run_retrolink("run", "plain", "--hosts", "localhost", "--", "true", timeout=120)
    assert r.returncode == 2 and "has no fabric to share out" in r.stderr, r.stderr


def test_a_killed_shard_is_named_with_its_host_and_its_nodes_stop():
    code, err = run_and_kill_a_shard("eth-hub", "--hosts", "localhost,localhost", settle_s=10)
    assert code != 0
    assert re.search(r"fabric shard 1 \(on \S+\) was killed by signal 9", err), err[-3000:]
    run_dir = re.search(r"logs: (\S+)\)", err).group(1)
    qemus = subprocess.run(["pgrep", "-f", f"{run_dir}/node"], capture_output=True,
                           text=True).stdout.split()
    assert not qemus, "a node's QEMU outlived its run"
