"""The fabric fixture: start a real fabric with a given configuration."""
import pytest

from fakenode import Fabric


@pytest.fixture
def fabric(artifacts, tmp_path):
    started = []

    def start(config: str) -> Fabric:
        f = Fabric(artifacts.fabric, tmp_path, config)
        started.append(f)
        return f
    yield start
    for f in started:
        f.stop()
