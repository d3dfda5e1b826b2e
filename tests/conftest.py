"""Shared fixtures: the built artifacts (retrolink test builds before pytest runs)."""
import os

import pytest


def pytest_configure(config):
    """Under pytest-xdist (`./retrolink test` runs a worker per core), each worker, and
    every QEMU and fabric it starts, keeps to a core of its own. A cluster's nodes wait on
    each other: on one core each hand-off is a yield to the node it waits for, the link
    ports see one core and do not spin (docs/fabric.md), and two workers' clusters never
    take turns on both cores."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[int(worker[2:]) % len(cores)]})


@pytest.fixture(scope="session")
def artifacts():
    """QEMU, kernel, initramfs and fabric, built (incrementally) once per session."""
    from retrolink.build.pipeline import build_all
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


# The ASan/UBSan build of QEMU for the fuzzer and the tests that need a sanitizer. The
# first use builds it (several minutes on a cold cache): its progress is shown even though
# pytest captures output.
@pytest.fixture(scope="session")
def asan_qemu(request, artifacts):
    from retrolink.fuzz.cli import asan_qemu as build
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        return build()
