"""Shared fixtures: the built artifacts (retrolink test builds before pytest runs)."""
import pytest


@pytest.fixture(scope="session")
def artifacts():
    """QEMU, kernel, initramfs and fabric, built (incrementally) once per session."""
    from retrolink.build import build_all
    return build_all()
