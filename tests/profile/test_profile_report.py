"""The instruction profile's report from made-up plugin counts and kallsyms lines:
kernel and module functions, per function and category sums, and errors that name the
file and what is wrong."""
import pytest

from retrolink.profile import report, symbols
from retrolink.profile.categories import category
from retrolink.profile.run import SYMBOLS_FOLLOW, split_lines, wrap_script

SLIDE = 0x2a00000
KALLSYMS = [f"{a + SLIDE:x} {t} {name}" for a, t, name in [
    (0xffffffff81000000, "T", "_text"), (0xffffffff81000100, "T", "do_syscall_64"),
    (0xffffffff81000200, "t", "_copy_from_user"), (0xffffffff81000300, "T", "__x86_return_thunk"),
    (0xffffffff81000400, "T", "try_to_wake_up"), (0xffffffff81000600, "T", "ksys_unrelated_tail")]]
KALLSYMS += ["ffffffffc0001000 t norma_deliver\t[norma]", "ffffffffc0001800 t c3_irq\t[c3]"]


@pytest.fixture
def syms():
    return symbols.load(KALLSYMS)


def k(addr: int) -> int:
    return addr + SLIDE


def test_kernel_symbols(syms):
    assert syms.lookup(k(0xffffffff81000108)).name == "do_syscall_64"
    assert syms.lookup(k(0xffffffff81000200)).name == "_copy_from_user"
    # an address past a function's end falls in it, until the next one
    assert syms.lookup(k(0xffffffff81000510)).name == "try_to_wake_up"


def test_module_symbols_come_from_the_guest(syms):
    s = syms.lookup(0xffffffffc0001010)
    assert (s.name, s.module) == ("norma_deliver", "norma")
    assert syms.lookup(0xffffffffc0001900).module == "c3"


def test_user_addresses_are_user_space(syms):
    assert syms.lookup(0x401000).name == symbols.USER_SPACE


@pytest.mark.parametrize("function,module,expected", [
    ("__x86_return_thunk", "", "mitigations"),
    ("do_syscall_64", "", "system call entry and exit"),
    ("_copy_from_user", "", "copies to and from user memory"),
    ("__kmalloc", "", "memory allocation"),
    ("_raw_spin_lock_irqsave", "", "locks"),
    ("try_to_wake_up", "", "scheduling and wake-up"),
    ("irq_thread_fn", "", "interrupts and their threads"),
    ("norma_deliver", "norma", "module norma"),
    (symbols.USER_SPACE, "", "user space"),
    ("__list_del_entry_valid", "", "hardening checks"),
    ("__update_load_avg_se", "", "scheduling and wake-up"),
    ("update_rt_rq_load_avg", "", "scheduling and wake-up"),
    ("__up_read", "", "locks"),
    ("native_sched_clock", "", "work queues and timers"),
    ("vfs_read", "", "other kernel"),
])
def test_categories(function, module, expected):
    assert category(function, module) == expected


def write_counts(path, windows, rows):
    path.write_text("# rl-insn-profile 2\n"
                    f"# windows {windows} marks {2 * windows}\n# vaddr instructions\n" +
                    "".join(f"{a:016x} {n}\n" for a, n in rows))


def test_summary_sums_per_function_and_category(tmp_path, syms):
    p = tmp_path / "node0-insns.txt"
    write_counts(p, 1, [(k(0xffffffff81000100), 40),          # do_syscall_64: 40
                        (k(0xffffffff81000120), 20),          # do_syscall_64: 20
                        (k(0xffffffff81000300), 8),           # the return thunk: 8
                        (0xffffffffc0001000, 60),             # norma: 60
                        (0x401000, 12)])                      # user: 12
    prof = report.read(p)
    assert prof.total == 140
    s = report.summary(prof, syms, per=2, top=3)
    assert s["instructions"] == 70
    assert s["categories"] == {"module norma": 30, "system call entry and exit": 30,
                               "user space": 6, "mitigations": 4}
    assert [f["function"] for f in s["functions"]] == ["do_syscall_64", "norma_deliver",
                                                       symbols.USER_SPACE]
    text = report.format_table(s, mips=75)
    assert "instructions per 1/2 of the windows: 70 (0.9 us at 75 MIPS), 1 window(s)" in text


def test_steps_sum_per_pair_of_marks_and_per_step(tmp_path, syms):
    p = tmp_path / "node0-insns.txt"
    write_counts(p, 1, [(k(0xffffffff81000100), 40), (0xffffffffc0001000, 60)])
    p.write_text(p.read_text() + "# steps: step from to instructions passes\n"
                 "step 0 32 10 1\nstep 32 8 100 2\nstep 8 65535 0 1\n"
                 "# per step: stepblock vaddr step instructions\n"
                 f"stepblock {k(0xffffffff81000100):016x} 0 10\n"
                 f"stepblock {k(0xffffffff81000100):016x} 32 30\n"
                 "stepblock ffffffffc0001000 32 60\n")
    s = report.summary(report.read(p), syms, per=2, top=3)
    assert s["segments"] == [
        {"from": "(window opened)", "to": "send_begin", "instructions": 5, "passes": 0.5},
        {"from": "de_deliver", "to": "(window closed)", "instructions": 0, "passes": 0.5},
        {"from": "send_begin", "to": "de_deliver", "instructions": 50, "passes": 1}]
    assert s["steps"]["send_begin"]["instructions"] == 45
    assert s["steps"]["send_begin"]["categories"] == {"module norma": 30,
                                                      "system call entry and exit": 15}
    assert s["steps"]["(window opened)"]["functions"][0]["function"] == "do_syscall_64"
    assert "send_begin -> de_deliver" in report.format_table(s, mips=75)
    p.write_text(p.read_text() + "step 1 2\n")
    with pytest.raises(report.ProfileError, match="'step 1 2' is not"):
        report.read(p)


def test_missing_or_bad_counts_are_named(tmp_path):
    with pytest.raises(report.ProfileError, match="was not written"):
        report.read(tmp_path / "node3-insns.txt")
    bad = tmp_path / "node0-insns.txt"
    bad.write_text("hello\n")
    with pytest.raises(report.ProfileError, match="not the instruction profile's output"):
        report.read(bad)
    bad.write_text("# rl-insn-profile 2\n# windows\n")
    with pytest.raises(report.ProfileError, match="line 2: '# windows' is not"):
        report.read(bad)
    write_counts(bad, 1, [])
    bad.write_text(bad.read_text() + "zz 1 2\n")
    with pytest.raises(report.ProfileError, match="line 4: 'zz 1 2'"):
        report.read(bad)


def test_symbols_without_text_are_named():
    with pytest.raises(symbols.SymbolError, match="no `_text` line"):
        symbols.load(KALLSYMS[1:])


def test_the_script_keeps_the_commands_status_and_its_lines():
    script = wrap_script("false")
    assert script.startswith("(\nfalse\n)\nrl_status=$?\n") and script.endswith("exit $rl_status")
    # the command's own lines, even one like the marker, stay its output
    out, syms = split_lines(["a", SYMBOLS_FOLLOW, "b", SYMBOLS_FOLLOW,
                             "ffffffff81000000 T _text"])
    assert out == ["a", SYMBOLS_FOLLOW, "b"] and syms == ["ffffffff81000000 T _text"]
    assert split_lines(["a", "b"]) == (["a", "b"], [])
