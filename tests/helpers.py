"""Helpers for tests: run the retrolink command as a user would."""
import os
import subprocess

from retrolink import paths

REPO = paths.REPO


def run_retrolink(*args, timeout=600, env=None):
    """Run ./retrolink with args; returns the CompletedProcess (text)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([str(REPO / "retrolink"), *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=REPO, stdin=subprocess.DEVNULL)


def by_role(**roles) -> str:
    """A shell command that runs a different program on each node (n0=..., n1=...; the
    others run true)."""
    cases = " ".join(f"{node.removeprefix('n')}) {cmd};;" for node, cmd in roles.items())
    return f"case $RETROLINK_NODE in {cases} *) true;; esac"
