"""Fuzz the fabric's message checks (fabric/core/proto.c, the only code that reads bytes from
the nodes) with libFuzzer for a bounded time, starting from valid messages."""
import subprocess

from retrolink import wire
from retrolink.build.ours_build import build_fabric_variant
from retrolink.build.pipeline import build_log

FUZZ_SECONDS = 20


def test_parser_survives_fuzzing(artifacts, tmp_path):
    binary = build_fabric_variant("fuzz", {"fuzz": "true"}, "fabric/fuzz-proto", "clang-14",
                                  build_log())
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seeds = [wire.hello(0, 1000, 1, name="seed"), wire.sync(1, 5000, 9000),
             wire.frame(0, 100, 1, b"payload", 3), wire.bye(2, 7), b"", b"\0" * 64]
    for i, seed in enumerate(seeds):
        (corpus / f"seed{i}").write_bytes(seed)
    r = subprocess.run([str(binary), str(corpus), f"-max_total_time={FUZZ_SECONDS}", "-seed=1",
                        "-timeout=5", "-rss_limit_mb=2048", "-print_final_stats=1"],
                       capture_output=True, text=True, timeout=FUZZ_SECONDS + 120)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "Done" in r.stderr and "stat::number_of_executed_units" in r.stderr
