"""`bench mpi`'s report when one machine fails: the others' tables are kept, the failed
one is named with why, and the command fails (docs/mpi.md)."""
from retrolink.bench import mpi, mpi_report
from retrolink.progress import StepFailed

PARAMS = {"machine": "eth-switch", "nodes": 4, "cpu_mips": 100.0,
          "boards": {"eth0": {"model": "e1000"}},
          "networks": {"lan": {"topology": "switch", "rate": 12.5e6}}}


def figures() -> dict:
    one = {"1": 50.0, "2": 51.5}
    return {"latency_us": one, "bw_MBps": one, "bibw_MBps": one,
            "allreduce_us": {"4": 80.0}, "alltoall_us": one,
            "ranks": 4, "parameters": PARAMS}


def test_a_failed_machine_loses_no_other_machines_tables(monkeypatch):
    def measure(machine, art, d):
        if machine == "cpci":
            raise StepFailed("node 1 was disconnected by the fabric (fabric.log)")
        return figures()
    monkeypatch.setattr(mpi, "with_mpi", lambda name, overrides: name)
    monkeypatch.setattr(mpi, "measure", measure)
    result = mpi.run_mpi({"ethernet": "eth-switch", "cpci": "cpci"}, {}, None, quick=True)
    assert result["ethernet"] == figures()
    assert mpi.failures(result) == ["cpci: node 1 was disconnected by the fabric (fabric.log)"]
    text = mpi_report.table(result)
    assert "      51.50" in text and "ethernet" in text
    assert "cpci: failed, no figures (node 1 was disconnected" in text
    headers = [line.split() for line in text.splitlines() if line.startswith("  size_B")]
    assert headers and all(h == ["size_B", "ethernet"] for h in headers)  # no cpci column


def test_no_failures_in_a_whole_result():
    # (the JSON's host time sits beside the machines)
    assert mpi.failures({"ethernet": figures(), "host_wall_s": 12.5}) == []
