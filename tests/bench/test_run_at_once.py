"""bench.phase.run_at_once: jobs at the same time, each on a core of its own, results in
the jobs' order; a failure stops the others (their clusters' waits end) and is raised."""
import os
import time

import pytest

from retrolink.bench.phase import run_at_once
from retrolink.run.cluster import ABANDON


def test_results_come_in_the_jobs_order_each_job_on_one_core():
    cores = sorted(os.sched_getaffinity(0))

    def job(i):
        time.sleep(0.05 * (3 - i))          # the later ones end first
        return i, os.sched_getaffinity(0)

    found = run_at_once([lambda i=i: job(i) for i in range(3)])
    assert [i for i, _ in found] == [0, 1, 2]
    assert all(len(mask) == 1 and mask <= set(cores) for _, mask in found)
    assert os.sched_getaffinity(0) == set(cores)     # the caller is not pinned


def test_a_failure_abandons_the_others_and_is_raised():
    """With a core for each, the long job is running and is abandoned; with one core (a
    test worker's), it starts after the failure, if at all, and is abandoned then. Either
    way the failure comes at once."""
    ended = []

    def failing_job():
        time.sleep(0.2)
        raise RuntimeError("boot failed")

    def long_job():
        deadline = time.monotonic() + 30
        while not ABANDON.is_set():         # as a cluster's wait does
            assert time.monotonic() < deadline, "never abandoned"
            time.sleep(0.01)
        ended.append("abandoned")

    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="boot failed"):
        run_at_once([failing_job, long_job])
    assert time.monotonic() - t0 < 10
    assert ended == ["abandoned"] if len(os.sched_getaffinity(0)) > 1 else ended in ([], ["abandoned"])
    assert not ABANDON.is_set()             # cleared for the next benchmark
