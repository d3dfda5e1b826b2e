"""The suite on several cores: `./retrolink test` runs a pytest-xdist worker per core
(`--dist loadgroup`). This plugin (loaded by tests/conftest.py):
- keeps each worker, and every QEMU and fabric it starts, on a core of its own. A
  cluster's nodes wait on each other: on one core each hand-off is a yield to the node
  it waits for, the link ports see one core and do not spin (docs/fabric.md), and two
  workers' clusters do not take turns on both cores;
- sends the tests that share a module's fixture (a cluster run they all read) to one
  worker, and every other test on its own;
- starts the longest first, by the durations the last runs recorded in pytest's cache
  (`./retrolink test` keeps it in the build cache, outside the checkout); tests it has
  no duration for go first, in the order they were collected.
"""
import math
import os
import re

import pytest

DURATIONS = "retrolink/durations"
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_durations: dict[str, float] = {}          # this run's, by test


def pytest_configure(config):
    if WORKER.startswith("gw"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[int(WORKER[2:]) % len(cores)]})


def _shares_a_fixture(item) -> bool:
    return any(d.scope in ("class", "module", "package")
               for defs in item._fixtureinfo.name2fixturedefs.values() for d in defs)


@pytest.hookimpl(tryfirst=True)      # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    if not WORKER:
        return
    units = {}
    for item in items:
        if _shares_a_fixture(item):
            unit = item.nodeid.split("::")[0]
            item.add_marker(pytest.mark.xdist_group(re.sub(r"\W", "_", unit)))
        else:
            unit = item.nodeid
        units.setdefault(unit, []).append(item)
    known = config.cache.get(DURATIONS, {})

    def cost(unit_items) -> float:
        times = [known.get(i.nodeid) for i in unit_items]
        return math.inf if None in times else sum(times)
    order = sorted(units.values(), key=cost, reverse=True)     # stable: ties keep their order
    items[:] = [i for unit_items in order for i in unit_items]


def pytest_runtest_logreport(report):
    """On the controller (or a run without workers): each test's setup + call + teardown."""
    if not WORKER:
        nodeid = re.sub(r"@\w+$", "", report.nodeid)      # xdist's group suffix
        _durations[nodeid] = _durations.get(nodeid, 0) + report.duration


def pytest_sessionfinish(session):
    if WORKER or not _durations:
        return
    known = session.config.cache.get(DURATIONS, {})
    known.update({k: round(v, 2) for k, v in _durations.items()})
    session.config.cache.set(DURATIONS, known)
