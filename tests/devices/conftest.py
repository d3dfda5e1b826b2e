"""The ASan/UBSan build of QEMU for the fuzzer and the tests that need a sanitizer. The
first use builds it (several minutes on a cold cache): its progress is shown even though
pytest captures output."""
import pytest


@pytest.fixture(scope="session")
def asan_qemu(request, artifacts):
    from retrolink.fuzz.cli import asan_qemu as build
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        return build()
