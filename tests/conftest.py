"""Shared fixtures: the built artifacts (retrolink test builds before pytest runs)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retrolink import paths

REPO = paths.REPO


@pytest.fixture(scope="session")
def artifacts():
    """QEMU, kernel, initramfs and fabric, built (incrementally) once per session."""
    from retrolink.build import build_all
    return build_all()


def run_retrolink(*args, timeout=600, env=None):
    """Run the retrolink command as a user would; returns CompletedProcess (text)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([str(REPO / "retrolink"), *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=REPO, stdin=subprocess.DEVNULL)
