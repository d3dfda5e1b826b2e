"""What mach_test (guest/bin/mach/) prints, case by case, and how its output is read:
shared by the tests that run it on one node and through the loopback transport."""
from helpers import run_retrolink

SUBCOMMANDS = ("rights", "inline", "ool", "qlimit", "notify", "death", "killed", "badargs",
               "fuzz", "manytoone")

# what each subcommand must PASS on one node, exactly (a case that disappears fails too)
LOCAL = {
    "rights": """allocate_receive make_send_same_name send_urefs_add_and_drop
        urefs_below_zero_invalid_value urefs_overflow receive_refs_only_minus_one
        send_rights_one_name_per_port last_send_ref_keeps_receive
        deallocate_receive_alone_invalid_right destroy_receive dead_name_refs
        send_to_dead_name_invalid_dest dead_name_gone make_send_once_own_name send_once_sends
        send_once_used_up send_once_arrives_as_send_once move_receive_leaves_send
        moved_receive_not_receivable receive_right_arrives new_holder_receives
        copy_send_keeps_ref move_send_takes_ref send_rights_merge_under_one_name
        received_send_right_sends receive_right_to_itself_refused refused_message_takes_nothing
        port_death_leaves_dead_name_here task_death_leaves_dead_name send_right_round_trip
        moved_send_right_used_there moved_send_once_used_there""",
    "inline": """inline_0_bytes inline_4_bytes inline_8_bytes inline_64_bytes inline_380_bytes
        inline_384_bytes inline_388_bytes inline_1024_bytes inline_2048_bytes inline_4096_bytes
        inline_16360_bytes reply_send_once_used_up breakdown_stamps_in_order
        rcv_large_leaves_it_queued
        rcv_large_then_received rcv_too_large_destroys_it""",
    "ool": """ool_1_bytes ool_4096_bytes ool_16384_bytes ool_16385_bytes ool_49147_bytes
        ool_131072_bytes ool_147456_bytes ool_409600_bytes ool_deallocate_unmaps_sender
        ool_two_regions_a_right_and_inline""",
    "qlimit": """qlimit_default_5 queue_holds_qlimit send_timeout_waits_then_times_out
        raised_qlimit_takes_more qlimit_above_max_invalid_value
        set_attributes_other_flavor_invalid_argument qlimit_max_16
        full_queue_blocks_sender_until_room blocked_sender_message_arrives
        blocked_send_interrupted_by_signal qlimit_unknown_name qlimit_needs_receive_right
        many_sends_through_the_limit""",
    "notify": """notify_with_room_just_sends notify_bad_port_invalid_notify
        notify_full_queue_will_notify notify_in_progress_once_per_task
        forced_message_does_not_open_the_queue no_notification_before_taken
        forced_message_received msg_accepted_notification notify_again_after_accepted
        notification_when_destroyed server_notify_when_full server_no_notification_while_paused
        server_msg_accepted_notification""",
    "death": """look_up_here right_in_queued_message_counted blocked_sender_wakes_invalid_dest
        dead_name_after_task_death queued_rights_released dead_port_leaves_name_service
        blocked_receiver_wakes_port_died receive_rights_in_a_cycle""",
    "killed": "killed_blocked_sender killed_blocked_receiver killed_while_streaming_ool",
    "fuzz": "fuzz_then_clean_round_trip fuzz_exercised",
    "manytoone": """many_to_one_all_delivered many_to_one_local_senders_done
        many_to_one_nothing_left""",
    "badargs": """send_size_zero send_size_below_header send_size_not_x4 send_size_above_max
        send_null_buffer unknown_option unknown_header_bits dest_unknown_name dest_null
        dest_no_disposition dest_move_receive dest_send_once_of_send_right reply_unknown_name
        reply_move_receive reply_bad_disposition one_send_once_used_twice complex_without_body
        too_many_descriptors descriptors_past_the_end unknown_descriptor_type
        port_bad_disposition port_unknown_name ool_bad_address ool_wraps_around
        ool_kernel_address ool_too_large
        ool_bad_copy_option refused_sends_queue_nothing receive_unknown_name
        receive_without_receive_right receive_empty_times_out receive_buffer_below_header
        receive_null_buffer receive_unknown_option allocate_bad_right allocate_port_set
        allocate_send_right deallocate_unknown deallocate_null mod_refs_bad_right
        mod_refs_right_not_held insert_bad_type insert_null_name insert_unknown_poly
        get_refs_unknown get_refs_bad_right status_unknown netname_empty netname_31_chars_fits
        netname_unterminated netname_look_up_no_such_node netname_look_up_unknown
        netname_check_in_dead_name netname_check_in_unknown netname_taken_by_another_port
        netname_check_out_not_yours netname_check_out netname_check_out_twice
        open_read_only_eacces unknown_ioctl_enotty ioctl_bad_pointer_efault
        mmap_from_outside_einval name_table_full_no_space no_room_for_a_received_right""",
}

# the cases that differ when the echo server is on another node (--node N)
ONLY_LOCAL = {"qlimit": {"server_queue_is_its_qlimit"}}
ONLY_REMOTE = {
    "rights": {"receive_right_stays_on_its_node"},
    "qlimit": {"remote_window_is_default_qlimit"},
    "badargs": {"netname_look_up_unknown_there"},
}


# the cases that hold only while the echo server runs on this very node (here, or through
# the loopback mirror): the breakdown case reads this node's stamps of the echo's send
ONLY_SAME_NODE = {"inline": {"breakdown_stamps_in_order"}}


def expected(name: str, remote: bool, across: bool = False) -> set:
    """The cases subcommand name must PASS, with its server here or on another node
    (across: another machine's node, not the loopback mirror)."""
    cases = set(LOCAL[name].split())
    if across:
        cases -= ONLY_SAME_NODE.get(name, set())
    return cases | ONLY_REMOTE.get(name, set()) if remote else cases | ONLY_LOCAL.get(name, set())


def run_on_node0(cmd: str) -> list:
    """cmd on node 0 of the `plain` machine (which has no Cenju-3 interface: norma.ko is
    one node alone); its output lines, without their prefix. The run fails, and so does
    this, if the guest kernel warned or oopsed."""
    r = run_retrolink("run", "plain", "--node", "0", "--timeout", "400", "--", cmd,
                      timeout=520)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return [l.removeprefix("[node0] ") for l in r.stdout.splitlines()
            if l.startswith("[node0] ")]


def run_all(names, args: str = "") -> str:
    """A shell command running each subcommand between '== name' and 'rc-name=N' lines."""
    return "; ".join(f'echo "== {t}"; mach_test {t} {args}; echo "rc-{t}=$?"' for t in names)


def check_section(lines: list, name: str, remote: bool, across: bool = False) -> None:
    """A subcommand printed no FAIL, PASSed exactly its cases and exited with 0 (across
    nodes: the same-node cases may fail, and the exit status is then 1)."""
    start = lines.index(f"== {name}") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(f"rc-{name}="))
    section = lines[start:end + 1]
    same_node = ONLY_SAME_NODE.get(name, set()) if across else set()
    fails = [l for l in section if l.startswith("FAIL ") and l.split()[1].rstrip(":")
             not in same_node]
    passed = {l.split()[1] for l in section if l.startswith("PASS ")} - same_node
    want = expected(name, remote, across)
    assert not fails, "\n".join(fails)
    assert passed == want, (want ^ passed, section)
    assert section[-1] == f"rc-{name}=0" or (same_node and section[-1] == f"rc-{name}=1"), \
        section[-1]
