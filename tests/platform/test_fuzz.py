"""retrolink fuzz (docs/fuzzing.md): every registered board survives a bounded run on the
ASan/UBSan QEMU, and the fuzzer does find: a board description that makes QEMU abort is
reported with its seed and a reproducer, which replays to the same finding."""
import dataclasses
import re

import pytest
from helpers import run_retrolink

from retrolink.fuzz import boards, engine

SECONDS = 24            # for all the boards together: about 30 s with QEMU's start-up


@pytest.mark.parametrize("name", boards.names())
def test_every_board_survives_fuzzing(asan_qemu, name, tmp_path):
    r = run_retrolink("fuzz", name, "--seconds", str(SECONDS / len(boards.names())),
                      "--seed", "1", "--out", str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "findings: 0" in r.stdout, r.stdout
    done = re.search(r"(\d+) executions in [\d.]+ s \(([\d.]+) execs/s", r.stdout)
    assert done and int(done.group(1)) > 0, r.stdout


def abort_qemu(gen):
    """A qtest read without an address: qtest asserts, QEMU aborts."""
    gen.s.send("readl")


def test_the_fuzzer_finds_reports_and_replays(asan_qemu, tmp_path):
    broken = dataclasses.replace(boards.load("sx"), sequences=(abort_qemu,))
    lines = []
    sm = engine.fuzz(asan_qemu, broken, 120, "7", tmp_path, stop_on_finding=True,
                     report=lines.append)
    assert len(sm.findings) == 1, lines
    ex, path, _ = next(iter(sm.findings.values()))
    assert ex.finding.kind == "crash" and "SIGABRT" in ex.finding.summary, ex.finding
    assert ex.commands[-1] == "readl"
    k = ex.seed.split(":")[1]
    assert f"FINDING (seed 7, execution {k}" in lines[0] and str(path) in lines[0], lines
    # the reproducer alone brings it back, through the command
    r = run_retrolink("fuzz", "sx", "--replay", str(path), timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "crash: QEMU killed by SIGABRT" in r.stdout and "the same as recorded" in r.stdout
    # and so does the seed, for that one execution
    again = engine.fuzz(asan_qemu, broken, 120, "7", tmp_path / "again",
                        executions=range(int(k), int(k) + 1), report=lines.append)
    assert again.executions == 1 and list(again.findings) == list(sm.findings)


def test_usage_errors(tmp_path):
    r = run_retrolink("fuzz", "nosuch", timeout=60)
    assert r.returncode == 2 and "'sx'" in r.stderr, r.stderr
    (tmp_path / "other.json").write_text('{"board": "other", "seed": "1:0", "config": {}, '
                                         '"qtest": [], "fabric_replies": []}')
    r = run_retrolink("fuzz", "sx", "--replay", str(tmp_path / "other.json"), timeout=60)
    assert r.returncode == 2 and "for board other" in r.stderr, r.stderr


def test_the_e1000_description_makes_the_nic_send_through_the_netdev(asan_qemu, tmp_path):
    """The e1000 fuzzing reaches our backend: with a rule that refuses every frame, its
    driver sequences get one out of the NIC, through the netdev, to the fake fabric."""
    e1000 = boards.load("e1000")
    refuse_all = dataclasses.replace(e1000, check_frame=lambda v, m: "a frame was sent")
    lines = []
    sm = engine.fuzz(asan_qemu, refuse_all, 60, "3", tmp_path, stop_on_finding=True,
                     report=lines.append)
    assert len(sm.findings) == 1, lines
    (ex, _, _), = sm.findings.values()
    assert ex.finding.kind == "fabric" and "a frame was sent" in ex.finding.summary, ex.finding
