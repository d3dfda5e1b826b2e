"""The suite's pytest-xdist plugin (tests/lib/parallel.py): the tests that share a
module's fixture run on one worker, so the fixture (often a cluster run of minutes) is set
up once, not once per worker."""
import os
import subprocess
import sys
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib"

SHARED = '''
import os, pytest

@pytest.fixture(scope="module")
def cluster_run():
    with open(os.environ["SETUPS"], "a") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")
    return 1
''' + "".join(f"\ndef test_shared_{i}(cluster_run):\n    pass\n" for i in range(6))

ALONE = "".join(f"\ndef test_alone_{i}():\n    pass\n" for i in range(6))


def test_a_modules_shared_fixture_is_set_up_on_one_worker(tmp_path):
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["parallel"]\n')
    (tmp_path / "test_shared.py").write_text(SHARED)
    (tmp_path / "test_alone.py").write_text(ALONE)
    setups = tmp_path / "setups"
    env = {**os.environ, "SETUPS": str(setups), "PYTHONPATH": str(LIB)}
    env.pop("PYTEST_XDIST_WORKER", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", f"cache_dir={tmp_path / 'cache'}",
                        "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder",
                        "-c", os.devnull, "--rootdir", str(tmp_path), str(tmp_path)],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "12 passed" in r.stdout, r.stdout
    assert len(setups.read_text().split()) == 1, \
        f"the module's fixture was set up on {setups.read_text().split()}"
