"""An MPI job across 4 nodes of the gigabit switch (docs/mpi.md): mpirun starts orted on
the other nodes through dropbear, the ranks reduce known values over TCP, and the same
job gives the same output twice."""
import pytest

from retrolink.model.machine import load_machine
from retrolink.run.runner import run_cluster

pytestmark = pytest.mark.usefixtures("artifacts")
MPI = {"guest.packages": ["mpi"], "cluster.memory_mib": 384}


def test_allreduce_on_four_nodes_twice(artifacts):
    machine = load_machine("eth-switch", MPI)
    runs = []
    for _ in range(2):
        result = run_cluster(machine, artifacts, {n: "mpi-run rl_mpi_sum" for n in range(4)},
                             "mpi-sum")
        assert result.ok, result.problems
        runs.append({r.node: r.lines for r in result.nodes})
    assert runs[0] == runs[1]
    out = runs[0][0]
    # rank r on node r, each contributing r + 1: 1 + 2 + 3 + 4
    assert [l for l in out if l.startswith("rank ")] == [f"rank {r} on node{r}" for r in range(4)]
    assert "RESULT mpi_sum ranks=4 sum=10 expected=10 all_ranks_agree=1" in out, out
    assert all(runs[0][n] == [] for n in (1, 2, 3)), runs[0]
