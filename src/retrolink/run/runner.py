"""`retrolink run`: one command on the nodes of a cluster, output prefixed per node."""
import shlex
import sys

from retrolink.model.machine import Machine
from retrolink.profile import run as profile_run
from retrolink.profile.report import ProfileError
from retrolink.profile.symbols import SymbolError
from retrolink.progress import StepFailed, say
from retrolink.run import gdb, hosts, snapshot, timeline
from retrolink.run.cluster import Cluster, RunResult, new_run_dir
from retrolink.run.node_command import Artifacts, command_too_long


def run_cluster(machine: Machine, art: Artifacts, commands: dict[int, str], run_name: str,
                timeout_s=None, trace=False, announce=False, qemu_trace=None,
                node_env=None, insn_profile=frozenset(), gdb_node=None,
                run_dir=None, shards=1, on_hosts=None) -> RunResult:
    """Boot the cluster, run commands[n] on node n ('true' on the others: they still boot,
    since they carry the interconnect), wait, stop everything, return the results.
    gdb_node: that node's QEMU gets a gdbstub and a gdb script with the symbols of its
    kernel and modules where a short run from the same snapshot found them; with --cold,
    where its command, which first prints them, says (docs/debugging.md). run_dir: the
    run's folder (default: a new one in the runs folder). shards: the fabric in that
    many processes under mpirun (docs/fabric.md, "Shards"); on_hosts: a shard on each of
    these hosts, with its nodes' QEMUs (run/hosts.py)."""
    check_shards(machine, shards)
    check_hosts(machine, on_hosts, shards, gdb_node)
    check_commands(commands)
    if run_dir is None:
        run_dir = new_run_dir(run_name)
    layout = None
    target = gdb.target_for(machine.cluster.arch, art.kernel) if gdb_node is not None else None
    if gdb_node is not None and not snapshot.cold():
        layout = gdb_layout(machine, art, gdb_node, run_dir / "gdb-symbols")
    c = machine.cluster
    if announce:
        say(f"booting {c.nodes} node(s) of '{c.name}' (logs: {run_dir})")
    cluster = Cluster(machine, art, run_dir, trace=trace, qemu_trace=qemu_trace,
                      node_env=node_env, insn_profile=frozenset(insn_profile),
                      gdb_node=gdb_node, shards=shards, on_hosts=on_hosts)
    scripts = {n: commands.get(n, "true") for n in range(c.nodes)}
    if gdb_node is not None and layout is None:
        scripts[gdb_node] = f"{gdb.dump_script(target.modules)}\n{scripts[gdb_node]}"
    check_commands(scripts)
    try:
        cluster.start(scripts)
        if gdb_node is not None:
            if layout is not None and cluster.restored_from is None:
                say(f"node{gdb_node} does not start from the snapshot its symbols were "
                    "read from: their addresses may be wrong")
            gdb.announce(run_dir, gdb_node, cluster.gdb_socket, layout, target, say)
            if layout is None:
                cluster.on_lines = gdb.DumpReader(run_dir, gdb_node, cluster.gdb_socket,
                                                  target, say)
        if announce and cluster.restored_from:
            say(f"starting from the snapshot {cluster.restored_from.name} (--cold: boot "
                "from the kernel)")
        elif announce and cluster.maker:
            say("a cold boot, saving a snapshot at the boot barrier for the next runs")
        boot_s, run_s = machine.wall_caps(timeout_s)
        result = cluster.wait(run_s, boot_s)
        if gdb_node is not None and layout is None:
            r = result.nodes[gdb_node]
            r.lines = gdb.split_dump(r.lines)
        return result
    finally:
        cluster.stop()
        if trace and announce:      # `retrolink run --trace` (a benchmark's trace: none)
            write_timeline(run_dir)


def gdb_layout(machine: Machine, art: Artifacts, node: int, run_dir) -> gdb.GuestLayout:
    """Where node's kernel and our modules are in the snapshot a run starts from: a short
    run from it (making it, if there is none yet) prints them; its logs go to run_dir.
    The run with gdb then starts from the same memory, and its node's command runs as
    without --gdb."""
    say(f"reading where node{node}'s kernel and modules are (a short run from the snapshot)")
    run_dir.mkdir()
    modules = gdb.our_modules(machine.cluster.arch)
    result = run_cluster(machine, art, {node: gdb.dump_script(modules)}, "", run_dir=run_dir)
    if not result.ok:
        raise StepFailed(f"node{node} did not say where its kernel and modules are: "
                         + "; ".join(result.problems))
    layout = gdb.GuestLayout()
    for line in result.nodes[node].lines:
        layout.add(line)
    return layout


def write_timeline(run_dir) -> None:
    """timeline.json from the run's frame trace, when the fabric wrote one (a failed run's
    too); a trace it cannot read is said, not raised (the run's own result counts)."""
    if not (run_dir / "fabric-trace.txt").is_file():
        return
    try:
        path, counts = timeline.write(run_dir)
    except OSError as e:
        say(f"no timeline: {e}")
        return
    notes = [f"{counts['lines_not_understood']} trace line(s) not understood"
             ] if counts["lines_not_understood"] else []
    if counts["qemu_events_without_time"]:
        notes.append(f"{counts['qemu_events_without_time']} QEMU trace event(s) without "
                     "a virtual time left out")
    say(f"timeline ({counts['frames']} frames, {counts['flows']} flows, "
        f"{counts['qemu_events']} QEMU trace events{', ' if notes else ''}"
        f"{', '.join(notes)}): {path} (open it in ui.perfetto.dev or chrome://tracing)")


def guest_script(words: list[str]) -> str:
    """The shell line a node runs for `retrolink run -- WORDS`. As with ssh, one word is a
    shell command line ('dmesg | tail'); several words are a command and its arguments,
    passed through unchanged."""
    return words[0] if len(words) == 1 else shlex.join(words)


def check_node_options(count: int, options: dict) -> None:
    """Every node a command-line option names (option -> its nodes) is one of the
    machine's count; checked before anything boots."""
    for opt, ns in options.items():
        for n in ns:
            if not 0 <= n < count:
                raise StepFailed(f"{opt} {n}: this machine has nodes 0..{count - 1}")


def check_commands(commands: dict[int, str]) -> None:
    """Every node's command fits its fw_cfg slot; checked before anything boots."""
    for n, script in sorted(commands.items()):
        if problem := command_too_long(script):
            raise StepFailed(f"node {n}: {problem}")


def check_shards(machine: Machine, shards: int) -> None:
    """--shards K: 1 up to one shard per node, on a machine with a fabric; checked
    before anything boots."""
    if shards == 1:
        return
    if not machine.uses_fabric:
        raise StepFailed(f"--shards {shards}: machine '{machine.cluster.name}' has no "
                         "fabric to shard (no interconnect board)")
    if not 1 <= shards <= machine.cluster.nodes:
        raise StepFailed(f"--shards {shards}: 1 to {machine.cluster.nodes} (one node a "
                         "shard at most)")


def check_hosts(machine: Machine, on_hosts: list[str] | None, shards: int,
                gdb_node: int | None) -> None:
    """--hosts H1,...: checked before anything boots (run/hosts.py)."""
    if on_hosts is None:
        return
    what = f"--hosts {','.join(on_hosts)}"
    if not machine.uses_fabric:
        raise StepFailed(f"{what}: machine '{machine.cluster.name}' has no fabric to share "
                         "out (no interconnect board)")
    if shards != 1:
        raise StepFailed(f"{what}: a shard a host; leave out --shards")
    if gdb_node is not None:
        raise StepFailed(f"{what}: --gdb needs the node's QEMU on this host; run without "
                         "--hosts to debug")
    problem = hosts.check_hosts(on_hosts, machine.cluster.nodes)
    if problem:
        raise StepFailed(f"{what}: {problem}")


def run_command(machine: Machine, art: Artifacts, script: str, nodes=None, timeout_s=None,
                trace=False, qemu_trace=None, insn_profile=(), insn_per=1,
                gdb_node=None, shards=1, on_hosts=None) -> RunResult:
    """`retrolink run`: script on the chosen nodes (all by default), output printed; with
    insn_profile, each of those nodes' instruction profile after it (per insn_per units
    of work); with gdb_node, that node's QEMU gets a gdbstub (docs/debugging.md)."""
    chosen = sorted(set(nodes)) if nodes else list(range(machine.cluster.nodes))
    check_node_options(machine.cluster.nodes, {"--node": chosen, "--insn-profile": insn_profile,
                                               "--gdb": [] if gdb_node is None else [gdb_node]})
    for n in sorted(set(insn_profile) - set(chosen)):
        raise StepFailed(f"--insn-profile {n}: node {n} runs no command (--node chose "
                         f"{', '.join(map(str, chosen))}); profile a node that runs it, "
                         f"or add --node {n}")
    commands = {n: profile_run.wrap_script(script) if n in insn_profile else script
                for n in chosen}
    result = run_cluster(machine, art, commands,
                         machine.cluster.name or "cluster", timeout_s, trace, announce=True,
                         qemu_trace=qemu_trace, insn_profile=insn_profile,
                         gdb_node=gdb_node, shards=shards, on_hosts=on_hosts)
    symbol_lines = {}
    for r in result.nodes:
        if r.node in insn_profile:
            r.lines, symbol_lines[r.node] = profile_run.split_lines(r.lines)
        if r.node in chosen:
            for line in r.lines:
                print(f"[node{r.node}] {line}")
    for n in sorted(set(insn_profile)):
        if result.nodes[n].ok:
            try:
                text = profile_run.node_report(result.run_dir, n, symbol_lines[n], insn_per,
                                               machine.cluster.node_cpu_mips(n))
            except (ProfileError, SymbolError) as e:
                raise StepFailed(f"node {n}'s instruction profile: {e}") from None
            print(f"\ninstruction profile of node {n} (nodeN-insns.json in the run "
                  f"directory)\n{text}")
    sys.stdout.flush()
    for problem in result.problems:
        say(problem)
    say(f"{'ok' if result.ok else 'FAILED'} in {result.wall_s:.1f} s wall")
    return result
