"""In-guest tests of NORMA IPC/DE, norma.ko's transport (guest/kernel/norma/de_*.c;
docs/boards/norma.md), on machines/cenju-3.toml: node 1 runs the echo server, node 0 the
IPC layer's inline, OOL and accept-notification tests against it (mach_test), so every
kind of transfer crosses the network both ways. What the transport did is read from its
counters (/sys/kernel/debug/norma_de) and its breakdown trace (norma_trace), joined
across the two nodes by (sending node, xid).

Cluster runs: the defaults, traced; the paper's options (piggy-backed accept notices,
a dedicated page sender) with the first 3 allocations for arriving messages failing on
each node, so the receiver waits for memory and retries instead of dropping; 7 nodes
sending to one (machines/cenju-3-8.toml); a sender killed while its transfer waits."""
import re
from collections import defaultdict

import pytest
from helpers import kernel_checked, kernel_problems, run_retrolink
from mach_cases import ONLY_SAME_NODE

pytestmark = pytest.mark.usefixtures("artifacts")

# enum norma_step (norma.h)
SEND, REQ_RX, PERMIT_TX, PERMIT_RX, KMSG_TX, PAGES_TX, PAGES_RX, DELIVER, DONE_RX, DONE, \
    ACCEPT_TX, ACCEPT_RX = range(1, 13)

TESTS = "mach_test inline --node 1; mach_test ool --node 1; mach_test notify --node 1"


def node_cmd(setup: str) -> str:
    return kernel_checked(
        f"{setup}; case $RETROLINK_NODE in 1) mach_test serve --seconds 60;; "
        f"0) sleep 1; {TESTS};; esac; "
        "sed 's/^/stat /' /sys/kernel/debug/norma_de; "
        "sed 's/^/trace /' /sys/kernel/debug/norma_trace; "
        "echo \"stat cache_misses $(cat /sys/class/misc/cenju3/cache_misses)\"; "
        "echo \"stat irqs $(cat /sys/class/misc/cenju3/irqs)\"; "
        "echo \"stat irqs_hard $(cat /sys/class/misc/cenju3/irqs_hard)\"")


def cluster(cmd: str):
    r = run_retrolink("run", "cenju-3", "--timeout", "400", "--", "sh", "-c", cmd,
                      timeout=600)
    out = {}
    for node in (0, 1):
        prefix = f"[node{node}] "
        lines = [l.removeprefix(prefix) for l in r.stdout.splitlines()
                 if l.startswith(prefix)]
        out[node] = {
            "passed": {l.split()[1] for l in lines if l.startswith("PASS ")},
            "failed": [l for l in lines if l.startswith("FAIL ")],
            "stats": {m.group(1): int(m.group(2)) for l in lines
                      if (m := re.match(r"stat (\w+) (-?\d+)$", l))},
            "trace": [tuple(map(int, l.split()[1:])) for l in lines
                      if re.match(r"trace \d+ \d+ \d+ \d+$", l)],
        }
    return r, out


@pytest.fixture(scope="module")
def plain():
    return cluster(node_cmd("echo 1 > /sys/module/norma/parameters/trace"))


@pytest.fixture(scope="module")
def options():
    return cluster(node_cmd(
        "rmmod norma && modprobe norma piggyback_accept=1 page_sender=1 && "
        "echo 3 > /sys/module/norma/parameters/fail_allocs"))


def transfers(out) -> dict:
    """(sending node, xid) -> {step: [times]} over both nodes' traces (accept notices,
    named by sequence number, left out)."""
    t = defaultdict(lambda: defaultdict(list))
    for node in (0, 1):
        for t_ns, src, xid, step in out[node]["trace"]:
            if step not in (ACCEPT_TX, ACCEPT_RX):
                t[(src, xid)][step].append(t_ns)
    return t


def across_nodes_failures(failed: list) -> list:
    """FAIL lines but those of the cases that hold only with the server on this node."""
    same_node = set().union(*ONLY_SAME_NODE.values())
    return [l for l in failed if l.split()[1].rstrip(":") not in same_node]


def assert_ipc_tests_pass(r, out, names=("inline_4_bytes", "ool_409600_bytes",
                                           "ool_two_regions_a_right_and_inline",
                                           "msg_accepted_notification")):
    failed = across_nodes_failures(out[0]["failed"])
    assert not failed, failed
    for name in names:
        assert name in out[0]["passed"], (name, r.stdout[-3000:] + r.stderr[-2000:])


def test_every_transfer_arrives_and_nothing_is_dropped(plain):
    r, out = plain
    assert_ipc_tests_pass(r, out)
    for a, b in ((0, 1), (1, 0)):
        sa, sb = out[a]["stats"], out[b]["stats"]
        assert sa["sends"] > 10 and sa["sends"] == sb["delivered"], (sa, sb)
        assert sa["accepts_tx"] == sb["accepts_rx"], (sa, sb)
        assert sa["bad_msgs"] == 0 and sa["alloc_retries"] == 0 and sa["msgs_out"] == 0, sa
        assert sa["cache_misses"] == 0, sa


def test_protocol_message_completions_skip_the_interrupt_thread(plain):
    """A protocol message's completion only frees it: when nothing else waits, the
    driver's hard handler takes it and the interrupt thread is not woken; the other
    messages in (permits, receive complete, accept notices) still go to the thread."""
    _, out = plain
    for node in (0, 1):
        s = out[node]["stats"]
        assert 0 < s["irqs_hard"] < s["irqs"], (node, s)


def test_short_send_requests_are_delivered_from_the_hard_handler(plain, options):
    """A short send request with no OOL pages is taken in the driver's hard handler and
    its KMSG handed to the receiving task (norma_ipc_deliver_irq); the others, and every
    request when accept notices ride on protocol messages (they take the IPC lock), in
    the thread."""
    _, out = plain
    for node in (0, 1):
        s = out[node]["stats"]
        assert 0 < s["delivered_irq"] < s["delivered"], (node, s)
    _, out = options
    for node in (0, 1):
        s = out[node]["stats"]
        assert s["delivered_irq"] == 0 < s["delivered"], (node, s)


def test_the_short_path_is_two_network_messages(plain):
    """A KMSG of at most 440 bytes with no OOL: send request, receive complete; nothing
    is allocated or permitted in between."""
    _, out = plain
    short = [s for s in transfers(out).values() if PERMIT_TX not in s and PAGES_RX not in s]
    assert len(short) >= 5, len(short)
    for s in short:
        assert sorted(s) == [SEND, REQ_RX, DELIVER, DONE_RX, DONE], dict(s)
        assert s[SEND][0] < s[REQ_RX][0] < s[DELIVER][0] < s[DONE_RX][0] <= s[DONE][0], dict(s)


def test_long_transfers_reserve_first_and_go_8_pages_a_permit(plain):
    """Everything else: send permit before any data, one page copy done per permit, then
    receive complete. 9 and 25 OOL pages take 2 and 4 permits; a long KMSG alone, one
    permit and its remote DMA's notification."""
    _, out = plain
    permits = []
    for s in transfers(out).values():
        if PERMIT_TX not in s:
            continue
        n = len(s[PERMIT_TX])
        permits.append(n)
        assert len(s[PERMIT_RX]) == n and len(s[PAGES_RX]) == n, dict(s)
        assert len(s[PAGES_TX]) in (n, 0), dict(s)       # 0: a long KMSG alone
        assert len(s[REQ_RX]) == 1 and len(s[DELIVER]) == 1 and len(s[DONE]) == 1, dict(s)
        assert s[REQ_RX][0] < s[PERMIT_TX][0] < min(s[PAGES_RX]), dict(s)
        assert max(s[PAGES_RX]) < s[DELIVER][0] < s[DONE_RX][0], dict(s)
        if not s[PAGES_TX]:
            assert len(s[KMSG_TX]) == 1, dict(s)
    assert {1, 2, 4} <= set(permits), permits


def test_options_piggyback_page_sender_and_allocation_retries(options):
    """Piggy-backed accept notices ride on other messages; a receiver short of memory
    waits and retries; every transfer still arrives, none dropped."""
    r, out = options
    assert_ipc_tests_pass(r, out)
    s0, s1 = out[0]["stats"], out[1]["stats"]
    for a, b in ((s0, s1), (s1, s0)):
        assert a["sends"] == b["delivered"] and a["bad_msgs"] == 0, (a, b)
        assert a["alloc_retries"] >= 3, a
        # every notice went, on its own or riding on another message
        assert a["accepts_tx"] + a["piggybacked"] == b["accepts_rx"], (a, b)
    assert s0["piggybacked"] + s1["piggybacked"] > 0, (s0, s1)


def test_no_kernel_problems(plain, options):
    for r, _ in (plain, options):
        assert not kernel_problems(r), kernel_problems(r)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


# ---- many to one -------------------------------------------------------------------------

MANY = ("case $RETROLINK_NODE in 0) mach_test serve --seconds 30;; "
        "*) sleep 1; mach_test inline --node 0; mach_test ool --node 0;; esac; "
        "sed 's/^/stat /' /sys/kernel/debug/norma_de; "
        "echo \"stat cache_misses $(cat /sys/class/misc/cenju3/cache_misses)\"")


@pytest.fixture(scope="module")
def many():
    r = run_retrolink("run", "cenju-3-8", "--timeout", "900", "--", "sh", "-c",
                      kernel_checked(MANY), timeout=1200)
    nodes = {}
    for node in range(8):
        prefix = f"[node{node}] "
        lines = [l.removeprefix(prefix) for l in r.stdout.splitlines()
                 if l.startswith(prefix)]
        nodes[node] = {
            "passed": {l.split()[1] for l in lines if l.startswith("PASS ")},
            "failed": [l for l in lines if l.startswith("FAIL ")],
            "stats": {m.group(1): int(m.group(2)) for l in lines
                      if (m := re.match(r"stat (\w+) (-?\d+)$", l))},
        }
    return r, nodes


def test_seven_nodes_send_to_one_at_once(many):
    """7 nodes run the inline and OOL cases against one echo server at the same time:
    every case passes on every node, every send is delivered, nothing is dropped."""
    r, nodes = many
    assert r.returncode == 0 and not kernel_problems(r), r.stdout[-3000:] + r.stderr[-2000:]
    senders = range(1, 8)
    for node in senders:
        failed = across_nodes_failures(nodes[node]["failed"])
        assert not failed, (node, failed)
        assert {"inline_4_bytes", "ool_409600_bytes"} <= nodes[node]["passed"], node
    s0 = nodes[0]["stats"]
    assert s0["delivered"] == sum(nodes[n]["stats"]["sends"] for n in senders), s0
    assert s0["sends"] == sum(nodes[n]["stats"]["delivered"] for n in senders), s0
    for node in range(8):
        s = nodes[node]["stats"]
        assert s["bad_msgs"] == 0 and s["cache_misses"] == 0 and s["msgs_out"] == 0, (node, s)


# ---- a sender killed while its transfer waits --------------------------------------------

# node 1 is short of memory for its first 50 tries (10 ms apart), so node 0's first OOL
# send waits for its permit; node 0 kills the sending task 200 ms in, then runs the OOL
# cases again; both nodes then unload norma.ko (its exit warns if a transfer is left)
KILLED = ("case $RETROLINK_NODE in "
          "1) echo 50 > /sys/module/norma/parameters/fail_allocs; mach_test serve --seconds 20;; "
          "0) sleep 1; mach_test ool --node 1 > /dev/null & P=$!; usleep 200000; kill -9 $P; "
          "wait $P; mach_test ool --node 1;; esac; sleep 2; "
          "sed 's/^/stat /' /sys/kernel/debug/norma_de; rmmod norma && echo unloaded")


@pytest.fixture(scope="module")
def killed():
    return cluster(kernel_checked(KILLED))


def test_a_killed_sender_cancels_and_the_receiver_frees(killed):
    r, out = killed
    assert_ipc_tests_pass(r, out, ("ool_409600_bytes", "ool_two_regions_a_right_and_inline"))
    s0, s1 = out[0]["stats"], out[1]["stats"]
    assert s0["cancels"] == 1 and s1["cancels_rx"] == 1, (s0, s1)
    assert s0["sends"] == s1["delivered"] + 1, (s0, s1)       # all but the cancelled one
    assert s1["alloc_retries"] == 50 and s0["bad_msgs"] == s1["bad_msgs"] == 0, (s0, s1)
    for node in (0, 1):
        assert f"[node{node}] unloaded" in r.stdout, r.stdout[-3000:]
    assert not kernel_problems(r) and r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
