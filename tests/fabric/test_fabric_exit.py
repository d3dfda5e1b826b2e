"""The fabric's exit status (docs/fabric.md, "Exit status"): 0 only after a normal end with
its stats written; else nonzero, the last line on stderr saying why."""
import json
import os
import resource
import signal
import subprocess
import time

import pytest
from fakenode import FakeNode

from retrolink import wire

P2P = "nodes 2\ntopology p2p rate=12500000 prop_ns=5000 overhead_bytes=28\n"


def run(binary, tmp_path, config, limits=(), timeout=10):
    conf = tmp_path / "f.conf"
    conf.write_text(f"socket {tmp_path}/s\n" + config)

    def limit():
        for what, value in limits:
            resource.setrlimit(what, (value, value))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    return subprocess.run([str(binary), str(conf)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit, env=env)


def last_line(stderr: str) -> str:
    return stderr.rstrip("\n").splitlines()[-1]


def test_all_nodes_gone_is_a_normal_end(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.s.sendall(wire.bye(0, 0))
    b.s.sendall(wire.bye(1, 0))
    assert f.proc.wait(timeout=10) == 0
    assert json.loads(f.stats.read_text())["topology"] == "p2p"


def test_sigterm_is_a_normal_end(fabric):
    f = fabric(P2P)
    a = FakeNode(f.sock, 0)           # the cluster has not even started
    f.proc.send_signal(signal.SIGTERM)
    assert f.proc.wait(timeout=10) == 0
    assert json.loads(f.stats.read_text())["nodes"][0]["id"] == 0
    a.close()


def test_stats_it_cannot_write_fail_the_run(fabric, tmp_path):
    f = fabric(P2P.replace("nodes 2", f"stats {tmp_path}/no/such/dir/stats.json\nnodes 2"))
    a, b = FakeNode(f.sock, 0), FakeNode(f.sock, 1)
    a.welcome(), b.welcome()
    a.s.sendall(wire.bye(0, 0))
    b.s.sendall(wire.bye(1, 0))
    assert f.proc.wait(timeout=10) == 1
    assert "cannot write" in last_line(f.log.read_text())


def test_a_poll_failure_is_fatal(fabric_binary, tmp_path):
    # poll() refuses more descriptors than RLIMIT_NOFILE allows: 256 nodes, limit 64
    r = run(fabric_binary, tmp_path,
            "nodes 256\ntopology token_ring rate=12500000 station_delay_ns=1000\n",
            limits=[(resource.RLIMIT_NOFILE, 64)])
    assert r.returncode == 1, r.stderr
    assert last_line(r.stderr).startswith("fabric: poll failed:"), r.stderr


def test_cannot_listen_is_fatal(fabric_binary, tmp_path):
    conf = tmp_path / "f.conf"
    conf.write_text(f"socket {tmp_path}/no/such/dir/s\n" + P2P)
    r = subprocess.run([str(fabric_binary), str(conf)], capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 1
    assert "cannot listen on" in last_line(r.stderr)


def test_too_little_lookahead_is_a_configuration_error(fabric):
    f = fabric(P2P)
    a, b = FakeNode(f.sock, 0, granularity_ns=1 << 16), FakeNode(f.sock, 1)
    assert f.proc.wait(timeout=10) == 2
    assert "least latency" in last_line(f.log.read_text())
    assert not f.sock.exists()


def test_out_of_memory_is_fatal(artifacts, tmp_path):
    # a 65536-port network needs ~29 MB of link state: more than the 16 MB it may map
    r = run(artifacts.fabric, tmp_path,
            "nodes 2\ntopology min k=16 stages=4 rate=1000 stage_delay_ns=10\n",
            limits=[(resource.RLIMIT_AS, 16 << 20)], timeout=5)
    assert r.returncode == 1, r.stderr
    assert last_line(r.stderr).startswith("fabric: out of memory"), r.stderr
