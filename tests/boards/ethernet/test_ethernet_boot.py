"""An e100 cluster boots as an e1000 one does: cold boots of machines/eth-hub.toml on
the 100 Mb/s hub with each NIC, compared by the fabric's count of sync points. Two of
its four nodes: what is compared is each node's grants while its link is down, which
two nodes show as four do, at half the host time of a cold boot.

While a NIC's link is down its node promises link-up-ns (docs/boards/ethernet.md, "The
link"), so the nodes boot with grants of a second; a node whose NIC had its link from
power on would boot in microsecond lock-step, millions of sync points (four e100 nodes
did not boot in 10 minutes that way)."""
import json
import time

import pytest
from ethernet_runs import run_dir
from helpers import run_retrolink

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")


def cold_boot(model: str) -> tuple[int, float]:
    """Sync points of every node over a cold boot of eth-hub with model, and wall seconds."""
    start = time.monotonic()
    r = run_retrolink("run", "eth-hub", "--cold", "--set", f"eth.model={model}",
                      "--set", "cluster.nodes=2", "--timeout", "300", "--", "true",
                      timeout=400)
    wall = time.monotonic() - start
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    stats = json.loads((run_dir(r) / "fabric-stats.json").read_text())
    return sum(n["syncs"] for n in stats["nodes"] if n["kind"] == "vm"), wall


def test_an_e100_cluster_boots_in_the_time_of_an_e1000_one():
    e1000_syncs, e1000_wall = cold_boot("e1000")
    e100_syncs, e100_wall = cold_boot("e100")
    print(f"cold boot of eth-hub: e1000 {e1000_syncs} syncs {e1000_wall:.1f} s, "
          f"e100 {e100_syncs} syncs {e100_wall:.1f} s")
    # measured 2026-11-28 on 2 nodes: 137,946 (e1000) and 162,034 (e100); on all 4,
    # 502,376 and 325,196; in lock-step from power on, tens of millions
    assert e100_syncs < 2 * e1000_syncs, (e100_syncs, e1000_syncs)
