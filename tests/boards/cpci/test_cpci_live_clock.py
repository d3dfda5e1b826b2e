"""The backplane board's lead and pending floor (docs/fabric.md "Live time") on
machines/cpci.toml: the raw ping-pong through the windows (a stream of posted 32-bit
stores each way, polling and with doorbells), then both nodes' loads of each other's
export at once (each node's vCPU waits in its load while its own events serve the
peer's), print the same bytes with the live clock as without it, and no board counts a
frame delivered late; a lead too long is caught."""
from helpers import a_lead_too_long_is_caught, same_output_with_and_without_the_live_clock

SCRIPT = ("cpci_pingpong --sizes 4,1024 --reps 3 --warmup 1 && "
          "cpci_pingpong --doorbell --sizes 4,1024 --reps 3 --warmup 1 && "
          "cpci_test load-time --reps 50")
SCRIPTS = {0: SCRIPT, 1: SCRIPT}


def test_ping_pong_and_loads_print_the_same_bytes_with_or_without_the_live_clock(artifacts):
    lines = same_output_with_and_without_the_live_clock("cpci", SCRIPTS, artifacts,
                                                        "retrolink-cpci")
    for node in lines:
        assert sum(l.startswith("RESULT cpci_load ") for l in node) == 1, node
    assert sum(l.startswith("RESULT cpci_latency ") for l in lines[0]) == 4, lines[0]


def test_a_lead_too_long_is_caught(artifacts):
    a_lead_too_long_is_caught("cpci", SCRIPTS, artifacts, "retrolink-cpci")
