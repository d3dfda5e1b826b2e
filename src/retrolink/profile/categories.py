"""What a guest function is part of, for the profile's summary: the kernel paths a
message's software crosses (system call entry and exit, copies, allocation, locking,
scheduling and wake-up, interrupts) and what a modern kernel pays that a period one did
not (speculation mitigations, hardening checks). The first category whose pattern matches
the function's name wins; a module's functions are that module's; everything else is
"other kernel"."""
import re

from retrolink.profile.symbols import USER_SPACE

CATEGORIES = [
    # return thunks, retpolines, buffer clearing, the untraining sequences (x86's
    # spectre_v2 / retbleed / SRSO / MDS mitigations: arch/x86/lib/retpoline.S)
    ("mitigations", r"^(__x86_return_thunk|__x86_indirect_thunk_.*|__x86_indirect_call_thunk_.*"
                    r"|__x86_indirect_jump_thunk_.*|srso_.*|retbleed_.*|entry_untrain_ret"
                    r"|zen_untrain_ret|entry_ibpb|__x86_return_skl|clear_bhb_loop"
                    r"|mds_clear_cpu_buffers|x86_clear_cpu_buffers|__pti_.*|.*_ibpb.*)$"),
    # CONFIG_DEBUG_LIST and hardened usercopy: checks a period kernel did not make
    ("hardening checks", r"^(__list_add_valid.*|__list_del_entry_valid.*|check_.*object_size"
                         r"|__check_object_size.*|__check_heap_object|check_stack_object"
                         r"|usercopy_.*|__virt_addr_valid|__phys_addr)$"),
    ("system call entry and exit", r"^(entry_SYSCALL_64.*|do_syscall_64|syscall_.*user_mode.*"
                                   r"|.*exit_to_user_mode.*|__x64_sys_.*|ksys_.*|__fget.*|fdget.*"
                                   r"|__fdget.*|fput|__fput|security_file_ioctl|do_vfs_ioctl"
                                   r"|vfs_ioctl|__do_sys_.*|x64_sys_call|__se_sys_.*"
                                   r"|entry_SYSRETQ.*|rseq_.*|__rseq_.*)$"),
    ("copies to and from user memory", r"^(_copy_from_user|_copy_to_user|copy_user_.*|rep_movs_.*"
                                       r"|__copy_user_.*|copy_from_user.*|copy_to_user.*"
                                       r"|memcpy.*|__memcpy.*|memmove|__memmove|memset.*"
                                       r"|__memset|clear_user|__clear_user)$"),
    ("memory allocation", r"^(.*kmalloc.*|kfree.*|kmem_cache_.*|.*slab_.*|___slab_alloc"
                          r"|__slab_free|.*alloc_pages.*|.*free_pages.*|get_page_from_freelist"
                          r"|free_unref_page.*|__free_one_page|rmqueue.*|free_pcp.*|__free_pages"
                          r"|kvfree|kvmalloc.*|ksize|memcg_.*|obj_cgroup_.*|mod_objcg_state"
                          r"|refill_obj_stock|consume_obj_stock|should_failslab.*|__kmem_cache_.*"
                          r"|kfree_skb.*|page_.*counter.*)$"),
    ("locks", r"^(_raw_spin_.*|__raw_spin_.*|mutex_.*|__mutex_.*|.*_spin_lock.*|.*_spin_unlock.*"
              r"|down_.*|up_.*|__down(_.*)?|__up(_.*)?|queued_spin_.*|native_queued_spin.*"
              r"|preempt_count_.*|__rcu_read_.*|rcu_read_.*|lock_.*|unlock_.*)$"),
    ("scheduling and wake-up", r"^(schedule.*|__schedule|try_to_wake_up|.*wake_up.*|ttwu_.*"
                               r"|enqueue_.*|dequeue_.*|pick_next_.*|put_prev_.*|set_next_.*"
                               r"|update_curr.*|update_.*load_avg.*|__update_load_avg.*|.*switch_to.*"
                               r"|.*_rt_rq.*|.*_rt_entity.*|dequeue_rt_stack"
                               r"|finish_task_switch.*|context_switch|check_preempt.*"
                               r"|resched_curr|prepare_to_wait.*|finish_wait|autoremove_wake.*"
                               r"|woken_wake_function|wait_woken|__wait_event.*|update_rq_clock.*"
                               r"|select_task_rq.*|sched_.*|psi_.*|update_cfs_.*|reweight_.*"
                               r"|place_entity|update_min_vruntime|account_.*|cpuacct_.*"
                               r"|__cgroup_account_.*|cgroup_rstat_.*|hrtick_.*|pick_task.*"
                               r"|.*_entity.*|raw_spin_rq_.*|newidle_balance|balance_.*"
                               r"|do_idle|default_idle.*|cpu_startup_entry|cpuidle_.*"
                               r"|arch_cpu_idle.*|tick_nohz_.*|rcu_note_context_switch)$"),
    ("interrupts and their threads", r"^(asm_.*|common_interrupt|__common_interrupt|irq_.*"
                                     r"|__irq_.*|handle_.*irq.*|__handle_.*irq.*|.*_irq_thread.*"
                                     r"|irq_thread.*|sysvec_.*|__sysvec_.*|ack_.*apic.*"
                                     r"|apic_.*|native_apic_.*|x2apic_.*|ioapic_.*|.*_ioapic_.*"
                                     r"|.*eoi.*|generic_handle_.*|note_interrupt|irqentry_.*"
                                     r"|__do_softirq|do_softirq.*|.*softirq.*|tasklet_.*"
                                     r"|handle_irq_event.*|irq_exit.*|irq_enter.*"
                                     r"|mask_.*irq.*|unmask_.*irq.*)$"),
    ("work queues and timers", r"^(.*work.*|.*timer.*|hrtimer_.*|__hrtimer_.*|ktime_.*"
                               r"|read_tsc|clockevents_.*|tick_.*|timekeeping_.*|update_wall.*"
                               r"|.*sched_clock.*"
                               r"|lapic_next.*|run_local_timers|run_timer.*)$"),
]
_COMPILED = [(name, re.compile(pattern)) for name, pattern in CATEGORIES]
OTHER_KERNEL = "other kernel"
USER = "user space"


def category(function: str, module: str = "") -> str:
    """The category of a function (of a module, or of the kernel itself when module is "")."""
    if function == USER_SPACE:
        return USER
    if module:
        return f"module {module}"
    for name, pattern in _COMPILED:
        if pattern.match(function):
            return name
    return OTHER_KERNEL
