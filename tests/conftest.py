"""Shared fixtures: the built artifacts (retrolink test builds before pytest runs)."""
import pytest


@pytest.fixture(scope="session")
def artifacts():
    """QEMU, kernel, initramfs and fabric, built (incrementally) once per session."""
    from retrolink.build import build_all
    return build_all()


@pytest.fixture
def cleanup():
    """For qtest device tests: cleanup((fake_fabric, qtest)) stops that QEMU and its fake
    fabric when the test ends, and fails the test if the fabric saw a broken rule."""
    held = []
    yield held.append
    for fabric, q in held:
        q.close()
        fabric.join(timeout=10)
        assert fabric.error is None, fabric.error
        assert not fabric.violations, fabric.violations
