"""Shared fixtures: the built artifacts (retrolink test builds before pytest runs)."""
import pytest

# the suite on several cores: pinning, grouping, longest first
pytest_plugins = ["parallel"]



@pytest.fixture(scope="session")
def artifacts():
    """QEMU, kernel, initramfs and fabric, built (incrementally) once per session; the
    commands tests run take this build as it is (helpers.run_retrolink)."""
    import helpers
    from retrolink.build.pipeline import NO_BUILD, build_all
    art = build_all()
    helpers.session_env[NO_BUILD] = "1"
    return art


@pytest.fixture(scope="session")
def sparc():
    """The sparc32 build (QEMU's sparc target, the kernel, klibc, the SBus cards' PROMs):
    cached, built the first time (docs/sparc.md has the times). Skipped only where the
    cross toolchain cannot be installed (not root, and deps/apt-sparc.txt's packages
    missing)."""
    import os

    from retrolink.build.pipeline import build_for
    from retrolink.model.machine import load_machine
    from retrolink.progress import StepFailed
    try:
        return build_for(load_machine("sparc-plain"))
    except StepFailed as e:
        if "missing Debian packages" in str(e) and os.geteuid() != 0:
            pytest.skip(f"the sparc32 cross toolchain is not installed and cannot be: {e}")
        raise


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
