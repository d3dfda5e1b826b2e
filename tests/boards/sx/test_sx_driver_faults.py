"""Hostile use of the SX driver and programs (the fault kit): user memory the kernel
cannot write, a receive ring left full, the board unbound under open files, arguments
that make no sense. Each test asserts what the user is told and that nothing is lost or
sent twice; no run may leave an Oops, BUG or WARNING in a kernel log."""
import pytest
from helpers import by_role
from sx_helpers import guest, kernel_checked, kernel_problems, results

# every test here boots guests: build (incrementally) first, once per session
pytestmark = pytest.mark.usefixtures("artifacts")


# Bad arguments, on node 2 (idle in the faults run; node 0 never reads what it is sent):
# (command, exit status, what the message must say). Each runs under a guest `timeout`,
# so a program that waits forever is an exit status of 143, not a hung test.
BAD_ARGUMENTS = [
    ("sx_bench stream --dst 0 --size 64 --count 20 --window 9", 2,
     "sx_bench stream: --window 9 is out of range: it must be 1..8 (the board has 8 send slots)"),
    ("sx_bench stream --dst 0 --size 64 --count 20 --window 64", 2, "--window 64 is out of range"),
    ("sx_bench fanout --dsts 0,1 --size 64 --count 5 --window 0", 2,
     "--window 0 is out of range"),
    ("sx_bench stream --dst 0 --size 64 --count 20 --window eight", 2,
     "--window 'eight' is not a whole number"),
    ("sx_bench stream --dst 0 --size 4097 --count 20", 2,
     "--size 4097 is out of range: it must be 0..4096"),
    ("sx_bench stream --dst 0 --size 64 --count 1x", 2, "--count '1x' is not a whole number"),
    ("sx_bench stream --dst 0 --size 64 --count 1", 2, "--count 1 is out of range"),
    ("sx_bench stream --dst 2 --size 64 --count 20", 2,
     "--dst 2 is this node: it must be another node of the ring"),
    ("sx_bench stream --dst 3 --size 64 --count 20", 2,
     "--dst 3 is out of range: it must be 0..2"),
    ("sx_bench stream --dst 0 --size 64 --count 20 --speed 3", 2, "unknown option '--speed'"),
    ("sx_bench stream --dst 0 --size 64 --count", 2, "--count needs a value"),
    ("sx_bench stream --size 64 --count 20", 2, "missing --dst"),
    ("sx_bench stream --dst 0 --size 64 --count 20 --window 8 --window 4", 2,
     "--window given twice"),
    ("sx_bench pingpong --peer 0 --sizes 64,,4096", 2,
     "--sizes '64,,4096': expected numbers separated by commas"),
    ("sx_bench pingpong --peer 0 --sizes 64 --iters 0", 2, "--iters 0 is out of range"),
    ("sx_bench fanout --dsts 0,2 --size 64 --count 5", 2, "--dsts 2 is this node"),
    ("sx_bench warp", 2, "sx_bench: unknown mode 'warp'"),
    ("sx_bench sink --count 3 --timeout 1", 1,
     "ERROR sink: waiting for message 1 of 3: nothing within 1 s"),
    ("sx_bench echo --timeout 1", 1, "ERROR echo: waiting for message 1: nothing within 1 s"),
    ("sx_test --role sender --peer 2", 2, "--peer 2 is this node"),
    ("sx_test --role bogus --peer 0", 2, "sx_test: unknown --role 'bogus'"),
    ("sx_test --role sender --peer x", 2, "--peer 'x' is not a whole number"),
    ("sx_test --role sender --peer 0 --verbose 1", 2, "unknown option '--verbose'"),
    ("sx_test --role sender", 2, "missing --peer"),
]


def bad_argument_script() -> str:
    return "; ".join(f'out=$(timeout 10 {cmd} 2>&1); echo "case{i} rc=$? $out"'
                     for i, (cmd, _, _) in enumerate(BAD_ARGUMENTS))


@pytest.fixture(scope="module")
def faults_run():
    """One boot: node 0 'faults' against node 1 'faults-peer', node 2 the bad arguments."""
    return guest(by_role(n0=kernel_checked("sx_test --role faults --peer 1"),
                         n1=kernel_checked("sx_test --role faults-peer --peer 0"),
                         n2=kernel_checked(bad_argument_script())))


def check(r, node: int, names: tuple):
    passed, failed = results(r, node)
    assert not kernel_problems(r), kernel_problems(r)
    missing = [n for n in names if n not in passed]
    assert not missing, (missing, failed, r.stdout[-3000:], r.stderr[-2000:])


def test_async_send_with_an_unwritable_ticket_sends_nothing(faults_run):
    """SEND_ASYNC with the request in read-only memory (9 times, one more than the board's
    8 slots): EFAULT every time, nothing sent (the board's counter and the receiver
    agree), no slot left busy; then 8 sends in flight work. WAIT whose status cannot be
    written fails with EFAULT and keeps the ticket: a second WAIT reaps it."""
    check(faults_run, 0, ("async_unwritable_ticket_fails",
                          "async_unwritable_ticket_leaves_no_slot_busy",
                          "async_after_unwritable_tickets", "wait_unwritable_status_fails",
                          "wait_unwritable_status_keeps_the_ticket", "async_sends_confirmed",
                          "async_unwritable_ticket_sent_nothing"))
    check(faults_run, 1, ("async_messages_once_each",))


def test_receive_into_bad_buffers_loses_nothing(faults_run):
    """RECV into NULL, a kernel address, read-only memory, a buffer running into an
    unmapped page, or with the request itself read-only: EFAULT, and the message stays
    queued (POLLIN); then all 5 messages arrive in order, intact, once."""
    check(faults_run, 1, ("bad_buffer_phase_message", "recv_null_buffer", "recv_kernel_buffer",
                          "recv_read_only_buffer", "recv_buffer_runs_off_the_end",
                          "recv_read_only_request", "recv_efault_keeps_the_message_queued",
                          "recv_efault_loses_nothing"))
    check(faults_run, 0, ("bad_buffer_phase_sends",))


def test_fill_a_receive_ring(faults_run):
    """Node 1 stops reading while node 0 streams 40 messages: its 16 receive slots fill
    and stay full for 50 ms (no more is handed over); node 0, on a non-blocking
    descriptor, is told EAGAIN (and sends nothing) when all 8 slots wait for
    confirmations, and waits over 25 ms for one; once node 1 reads, all 40 arrive in
    order, once each, nothing after them, and all 40 sends are confirmed."""
    check(faults_run, 1, ("fill_ring_fills", "fill_ring_holds_no_more", "fill_ring_nothing_lost",
                          "fill_ring_nothing_more"))
    check(faults_run, 0, ("fill_ring_sender_told_eagain", "fill_ring_every_send_confirmed",
                          "fill_ring_sender_held_back"))


def test_faults_run_has_no_failures(faults_run):
    for node in (0, 1):
        assert not results(faults_run, node)[1], faults_run.stdout
    assert faults_run.returncode == 0, faults_run.stdout + faults_run.stderr


def test_programs_validate_their_arguments(faults_run):
    """Every bad argument is refused with a message naming it and a nonzero status,
    before anything is sent; a wait that runs out names what it waited for."""
    out = {}
    for line in faults_run.stdout.splitlines():
        if line.startswith("[node2] case"):
            case, rc, msg = line.removeprefix("[node2] ").split(" ", 2)
            out[int(case.removeprefix("case"))] = (int(rc.removeprefix("rc=")), msg)
    for i, (cmd, rc, says) in enumerate(BAD_ARGUMENTS):
        assert i in out, (cmd, faults_run.stdout[-2000:])
        assert out[i][0] == rc and says in out[i][1], (cmd, out[i])
    assert not kernel_problems(faults_run), kernel_problems(faults_run)


def test_unbind_with_files_open():
    """The PCI driver is unbound while /dev/sx0 is open, with a recv, a send (all 8 slots
    hold unreaped sends) and a poll blocked in it, and the window mapped: the three are
    woken with ENODEV / POLLERR|POLLHUP; every ioctl, poll and mmap on the file then fails
    with ENODEV (read fails), the old mapping is SIGBUS, /dev/sx0 is gone. Rebinding with
    the old file still open gives a working /dev/sx0 (a send and a receive) while the old
    file stays removed; its state is freed when it is closed, not before; the module then
    unloads. The peer got each message once, and the blocked send never went out. The
    guest runs with slab poisoning, so a use after free would show."""
    r = guest(by_role(n0=kernel_checked("sx_test --role unbind --peer 1 && rmmod sx && "
                                        "echo unloaded"),
                      n1=kernel_checked("sx_test --role unbind-peer --peer 0")),
              settings=["cluster.kernel_cmdline=slub_debug=FZP"])
    check(r, 0, ("unbind_setup_sends", "unbind_wakes_a_blocked_recv",
                 "unbind_wakes_a_blocked_send", "unbind_wakes_a_blocked_poll",
                 "unbind_with_files_open", "blocked_call_returned",
                 "removed_info_enodev", "removed_send_enodev", "removed_send_async_enodev",
                 "removed_wait_enodev", "removed_recv_enodev", "removed_poll_hup",
                 "removed_mmap_enodev", "removed_read_fails", "removed_window_mapping_revoked",
                 "removed_device_node_gone", "rebind_with_the_old_file_open",
                 "rebound_board_opens", "old_file_still_removed_after_rebind",
                 "rebound_board_sends", "rebound_board_receives",
                 "removed_state_freed_on_last_close"))
    check(r, 1, ("unbind_peer_gets_each_message_once", "unbind_peer_replies"))
    assert "[node0] unloaded" in r.stdout, r.stdout
    assert r.returncode == 0, r.stdout + r.stderr
