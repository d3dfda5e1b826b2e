"""`retrolink up` keeps a cluster running; push copies a file in; SIGTERM stops it all."""
import os
import signal
import subprocess
import time

import pytest
from helpers import REPO, run_retrolink, session_env, shell_run

from retrolink import paths


def test_up_push_shell_and_stop(artifacts, tmp_path):
    proc = subprocess.Popen([str(REPO / "retrolink"), "up", "plain"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, **session_env))
    try:
        sock = paths.runs_dir() / "latest-up" / "node1-shell.sock"
        ready = paths.runs_dir() / "latest-up" / "node1-console.log"
        deadline = time.monotonic() + 120
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sock.exists(), "up did not create the shell socket"
        # no wait for the boot: push waits for the node's shell to answer
        payload = tmp_path / "module.bin"
        payload.write_bytes(bytes(range(256)) * 64)
        r = run_retrolink("push", "1", str(payload), timeout=120)
        assert r.returncode == 0, r.stderr
        out = shell_run(sock, "md5sum /tmp/module.bin; hostname", "@@done")
        import hashlib
        assert hashlib.md5(payload.read_bytes()).hexdigest() in out
        assert "node1" in out
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    assert "stopping the cluster" in out
    assert proc.returncode == 0
    leftover = subprocess.run(["pgrep", "-f", "qemu-system-x86_64.*plain-up"], capture_output=True)
    assert leftover.returncode == 1, "a QEMU of the interactive cluster was left running"
