"""In the guest, on machines/puma-iii.toml: the raw protocol and Fast Messages (fc_test,
guest/bin/fc/fc_test.c; docs/boards/fm.md). One boot runs every case on both nodes; each
test below asserts its group of cases passed (a case missing from the output fails too)."""
import re

import pytest
from helpers import run_retrolink

GROUPS = {
    "argument errors": ["raw_alloc_zero", "raw_alloc_too_big", "raw_pio_too_long",
                        "raw_send_to_self", "raw_send_to_unknown_node", "raw_poll_null",
                        "fm_send_before_initialize", "fm_register_id_too_big",
                        "fm_send_bad_handler", "fm_send_to_self", "fm_end_message_no_stream"],
    "the DMA window's protection": ["raw_dma_from_plain_memory_refused",
                                    "raw_dma_from_freed_buffer_refused",
                                    "raw_dvma_past_buffer_end", "fm_dma_from_plain_memory_refused"],
    "raw delivery and order": ["raw_in_order_and_intact", "raw_receiver_checked",
                               "raw_full_ring_drops_and_counts", "raw_second_open_busy"],
    "FM delivery, order and handlers": ["fm_in_order_and_intact", "fm_sends_every_mode",
                                        "fm_partial_read_rest_skipped", "fm_quit_stops_extract",
                                        "fm_unknown_handler_reported", "fm_send_4",
                                        "fm_zc_send_returns_after_dma",
                                        "fm_split_request_returns_at_once", "fm_split_completion"],
    "FM flow control": ["fm_flow_control_sender_waits", "fm_flow_control_receiver_got_all",
                        "fm_flow_control_nothing_dropped", "fm_both_ways_no_deadlock"],
}


def run_fc_test(machine: str):
    """fc_test on every node of machine: the run, the cases passed, the failures."""
    r = run_retrolink("run", machine, "--timeout", "900", "--", "fc_test", timeout=1200)
    passed = set(re.findall(r"^\[node\d\] PASS (\S+)$", r.stdout, re.M))
    failed = re.findall(r"^\[node\d\] (FAIL .*)$", r.stdout, re.M)
    return r, passed, failed


def check_passed_on_both(run) -> None:
    r, _, failed = run
    assert not failed, failed
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def check_group(run, group: str) -> None:
    _, passed, _ = run
    missing = [c for c in GROUPS[group] if c not in passed]
    assert not missing, f"{group}: not passed: {missing}"


@pytest.fixture(scope="module")
def fc_test_run(artifacts):
    return run_fc_test("puma-iii")


def test_fc_test_passes_on_both_nodes(fc_test_run):
    check_passed_on_both(fc_test_run)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_group_passed(fc_test_run, group):
    check_group(fc_test_run, group)
