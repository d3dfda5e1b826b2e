"""Fuzz the lock-step file (include/retrolink/lockstep.h) with libFuzzer for a bounded time:
anything that can open the file can write all of it, and whatever it holds, a node's grant
computation (rl_ls_static_check, then rl_ls_compute_grant, as qemu/core/rl-lockstep.c) and
the fabric's reading of the slots (fabric/core/lockstep.c) stay in bounds
(fabric/fuzz/lockstep_fuzzer.c). The same target built as the code before the check
(-DRL_LS_FUZZ_UNCHECKED) must crash, on files made to and by fuzzing: the target is not
vacuous."""
import struct
import subprocess
from pathlib import Path

import pytest

from retrolink import lockstep
from retrolink.build.ours_build import build_fabric_variant
from retrolink.build.pipeline import build_log

FUZZ_SECONDS = 20
UNCHECKED_SECONDS = 60      # it crashes within seconds; the bound is for a busy machine
NEVER = 2**64 - 1
ffi = lockstep.ffi
INPUT_SIZE = 6 + ffi.sizeof("struct rl_lockstep")    # the target's header, then the file


def fuzz_input(nodes: int, nets: list[list[int]], node: int = 0, synthetic=(), flags: int = 3,
               granularity: int = 1, edit=None) -> bytes:
    """A sane file for a cluster of nodes on nets (each a list of its stations' nodes), as
    the fabric writes it and the nodes publish, with the target's header: node id, flags
    (1: the node has read every message, 2: the fabric has every FRAME), granularity."""
    ls = ffi.new("struct rl_lockstep *")
    s = ls.s
    s.magic, s.version = lockstep.lib.RL_LS_MAGIC, lockstep.lib.RL_LS_VERSION
    s.nnodes, s.nnets, s.vm_nodes = nodes, len(nets), nodes - len(synthetic)
    for i, stations in enumerate(nets):
        s.latency[i], s.stations[i] = 7240 + i, len(stations)
        for st, k in enumerate(stations):
            s.station_node[i][st] = k
    b = ls.fab
    b.seq, b.cap = 2, NEVER
    for k in range(nodes):
        s.reaction[k] = NEVER if k in synthetic else 300_000
        b.floor[k], b.alive[k], b.sent[k] = NEVER if k % 2 else 5_000_000, k not in synthetic, 1
        slot = ls.node[k]
        slot.active, slot.seq, slot.syncs = k not in synthetic, 2, 1
        slot.t, slot.promise, slot.grant = 1000 * k, 7_000_000 + k, 1_000_000
    for i in range(len(nets)):
        b.caused[i] = NEVER
    if edit:
        edit(ls)
    return struct.pack("<IBB", node, flags, granularity - 1) + bytes(ffi.buffer(ls))


def live_clocks(ls):
    """Both nodes run with a live clock (docs/fabric.md, "Live time"), node 1 with a frame
    pending on its board."""
    for k, pending in ((0, NEVER), (1, 7_500_000)):
        lv = ls.live[k]
        lv.t0, lv.insns, lv.extra, lv.decr, lv.ns_mult = 1000 * k, 70_000, 10_000, 4_999, 8 << 32
        lv.lead, lv.pending = 400, pending


SEEDS = [
    fuzz_input(2, [[0, 1]]),
    fuzz_input(2, [[0, 1]], edit=live_clocks),
    fuzz_input(2, [[0, 1]], node=1, granularity=100),
    fuzz_input(4, [[0, 1, 2, 3], [3, 1]], node=2, synthetic=(2,)),
    fuzz_input(256, [list(range(256))] * 16, node=255),
    fuzz_input(3, [[2, 0, 1]], flags=0),
    # released from the boot barrier at their slots' counts (odd nodes one sync before)
    fuzz_input(3, [[0, 1, 2]], flags=3 | 8),
]


def set_nodes(n):
    def edit(ls):
        ls.s.nnodes = n
    return edit


def set_nets(n):
    def edit(ls):
        ls.s.nnets = n
    return edit


def set_station_node(k):
    def edit(ls):
        ls.s.station_node[0][1] = k
    return edit


# what the code before the check read or wrote out of bounds with
BAD = {
    "nodes": fuzz_input(2, [[0, 1]], edit=set_nodes(100_000)),
    "networks": fuzz_input(2, [[0, 1]], edit=set_nets(17)),
    "station": fuzz_input(2, [[0, 1]], edit=set_station_node(300)),
}


def fuzzer(target: str):
    return build_fabric_variant("fuzz", {"fuzz": "true"}, f"fabric/{target}", "clang-14",
                                build_log())


def run(binary, args, seconds):
    return subprocess.run([str(binary), *map(str, args), "-seed=1", "-timeout=5",
                           "-rss_limit_mb=2048", f"-max_len={INPUT_SIZE}", "-print_final_stats=1"],
                          capture_output=True, text=True, timeout=seconds + 120)


def corpus(tmp_path, seeds):
    d = tmp_path / "corpus"
    d.mkdir()
    for i, seed in enumerate(seeds):
        (d / f"seed{i}").write_bytes(seed)
    return d


def write_corpus(directory):
    """The seeds and the bad files, for runs by hand (docs/fuzzing.md)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(SEEDS):
        (directory / f"seed{i}").write_bytes(seed)
    for name, data in BAD.items():
        (directory / f"bad-{name}").write_bytes(data)


def test_the_lockstep_file_survives_fuzzing(artifacts, tmp_path):
    binary = fuzzer("fuzz-lockstep")
    r = run(binary, [corpus(tmp_path, SEEDS + list(BAD.values())),
                     f"-max_total_time={FUZZ_SECONDS}", f"-artifact_prefix={tmp_path}/"],
            FUZZ_SECONDS)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "Done" in r.stderr and "stat::number_of_executed_units" in r.stderr


@pytest.mark.parametrize("bad", sorted(BAD))
def test_a_bad_static_part_is_refused_where_the_unchecked_code_overran(artifacts, tmp_path,
                                                                      bad):
    path = tmp_path / bad
    path.write_bytes(BAD[bad])
    r = run(fuzzer("fuzz-lockstep"), [path], 10)
    assert r.returncode == 0, r.stderr[-4000:]
    r = run(fuzzer("fuzz-lockstep-unchecked"), [path], 10)
    assert r.returncode != 0 and "ERROR: AddressSanitizer: heap-buffer-overflow" in r.stderr, \
        r.stderr[-4000:]


def test_fuzzing_finds_the_unchecked_code_out_of_bounds(artifacts, tmp_path):
    """From sane files only, libFuzzer finds what the code before the check overran."""
    r = run(fuzzer("fuzz-lockstep-unchecked"),
            [corpus(tmp_path, SEEDS), f"-max_total_time={UNCHECKED_SECONDS}",
             f"-artifact_prefix={tmp_path}/"], UNCHECKED_SECONDS)
    assert r.returncode != 0 and "ERROR: AddressSanitizer" in r.stderr, r.stderr[-4000:]
    assert list(tmp_path.glob("crash-*"))
