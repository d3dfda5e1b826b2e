"""bench.phase.run_at_once: jobs at the same time, each on a core of its own, results in
the jobs' order; a failure stops the others (their clusters' waits end) and is raised."""
import os
import threading
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
    started = threading.Event()

    def long_job():
        started.set()
        deadline = time.monotonic() + 30
        while not ABANDON.is_set():         # as a cluster's wait does
            assert time.monotonic() < deadline, "never abandoned"
            time.sleep(0.01)
        return "abandoned"

    def failing_job():
        started.wait(10)
        raise RuntimeError("boot failed")

    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="boot failed"):
        run_at_once([long_job, failing_job])
    assert time.monotonic() - t0 < 10
    assert not ABANDON.is_set()             # cleared for the next benchmark
