"""`retrolink bench mpi --quick` (docs/mpi.md): every measurement on every default
machine, every size, a figure that can be one."""
import pytest
from helpers import quick_bench

from retrolink.bench.mpi import PROGRAMS, load_definition

pytestmark = pytest.mark.usefixtures("artifacts")


def sizes(lo: int, hi: int) -> list[str]:
    out, s = [], lo
    while s <= hi:
        out.append(str(s))
        s *= 2
    return out


def test_quick_bench_reports_every_figure(tmp_path):
    table, r = quick_bench("mpi", tmp_path, timeout=3000)
    d = load_definition(quick=True)
    assert set(r) - {"host_wall_s"} == set(d["machines"])
    top = d["sizes"]["max"]
    for machine in d["machines"]:
        m = r[machine]
        for _, key in PROGRAMS.values():
            lo = 4 if key == "allreduce_us" else 1
            assert sorted(m[key], key=int) == sizes(lo, top), (machine, key, m[key])
            # (OSU's format has 2 decimals: 1 B at a few ms is 0.00 MB/s)
            assert all(v >= 0 for v in m[key].values()) and m[key][str(top)] > 0, \
                (machine, key, m[key])
        # a larger message takes longer, and moves more bytes a second
        assert m["latency_us"][str(top)] > m["latency_us"]["1"], m["latency_us"]
        assert m["bw_MBps"][str(top)] > m["bw_MBps"]["1"], m["bw_MBps"]
        # no faster than the network's rate: one way, and both ways at once
        rate = max(n["rate"] for n in m["parameters"]["networks"].values()) / 1e6
        assert max(m["bw_MBps"].values()) < rate and max(m["bibw_MBps"].values()) < 2 * rate
        assert m["ranks"] == m["parameters"]["nodes"]
    for key in ("latency", "MPI_Allreduce", "MPI_Alltoall", "bidirectional bandwidth"):
        assert key in table, table
