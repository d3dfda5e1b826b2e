"""The fabric fixture: start a real fabric with a given configuration.

Every fabric test runs twice: against the fabric retrolink uses, and against the same
sources built with AddressSanitizer and UBSan (meson -Dsanitize_fabric=true), where any
memory error or undefined behaviour the test provokes fails it. The fabric in shards
(retrolink-fabric-mpi) is built beside each."""
import pytest
from fakenode import Fabric

SANITIZER_ERRORS = ("ERROR: AddressSanitizer", "runtime error:")


@pytest.fixture(scope="session", params=["release", "asan"])
def fabric_binary(request, artifacts):
    if request.param == "release":
        return artifacts.fabric
    from retrolink.build.ours_build import build_fabric_variant
    from retrolink.build.pipeline import build_log
    # and the fabric in shards beside it (test_shards.py)
    build_fabric_variant("asan", {"sanitize_fabric": "true"}, "fabric/retrolink-fabric-mpi",
                         None, build_log())
    return build_fabric_variant("asan", {"sanitize_fabric": "true"}, "fabric/retrolink-fabric",
                                None, build_log())


@pytest.fixture
def fabric(fabric_binary, tmp_path):
    started = []

    def start(config: str) -> Fabric:
        f = Fabric(fabric_binary, tmp_path, config)
        started.append(f)
        return f
    yield start
    for f in started:
        log = f.stop()
        found = [e for e in SANITIZER_ERRORS if e in log]
        assert not found, f"the fabric hit {found}:\n{log}"
