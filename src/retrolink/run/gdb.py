"""`retrolink up|run MACHINE --gdb N`: node N's QEMU with a gdbstub on a Unix socket in
the run directory, and a gdb script there that attaches to it with the symbols of our
modules and, once fetched (`retrolink debug-symbols`), of the guest kernel
(docs/debugging.md).

The guest kernel places itself (KASLR) and its modules at boot, so the addresses come
from the running node: its /proc/kallsyms `_text` and each of our modules'
/sys/module/M/sections/*, printed by dump_script() once the node is up.

A SPARCstation node (docs/sparc.md) is debugged with Debian's gdb-multiarch: its kernel
is our build, with its symbols beside the image QEMU loads, and has no KASLR.
"""
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from retrolink import paths
from retrolink.progress import StepFailed

LINE = "@@gdb "             # a line of the dump: '@@gdb kernel ADDR', '@@gdb section M S ADDR'
END = "@@gdb-end"
_DUMP_LINE = re.compile(r"^@@gdb (?:kernel (?P<text>[0-9a-f]+)|"
                        r"section (?P<mod>[\w-]+) (?P<sect>\S+) 0x(?P<addr>[0-9a-f]+))\s*$")


def socket_name(node: int) -> str:
    return f"node{node}-gdb.sock"


def script_name(node: int) -> str:
    return f"node{node}.gdb"


def qemu_args(sock: Path) -> list[str]:
    """QEMU's gdbstub on a Unix socket: nothing to collide with, unlike a TCP port.
    QEMU stops the VM when gdb attaches and runs it again when gdb continues or detaches."""
    return ["-gdb", f"unix:{sock},server=on,wait=off"]


def our_modules(arch: str = "x86_64") -> dict[str, Path]:
    """Our guest modules as built for arch, with their debug info (guest/kernel/kbuild.sh;
    the sparc32 ones: sparc_modules.py)."""
    folder = (paths.build_dir() / "sparc" / "modules" if arch == "sparc32"
              else paths.build_dir() / "guest" / "kernel")
    return {p.stem: p for p in sorted(folder.glob("*.ko"))}


@dataclass(frozen=True)
class GdbTarget:
    """What a node's gdb script is for: gdb's name of the CPU, the gdb that has it, our
    modules, the kernel with its symbols, and whether the kernel moves itself (KASLR)."""
    architecture: str
    gdb: str
    modules: dict
    vmlinux: Path
    kaslr: bool


def target_for(arch: str, kernel: Path) -> GdbTarget:
    """The gdb target of a node of arch (cluster.arch) booting kernel."""
    if arch == "sparc32":
        # sparc_kernel.py: QEMU loads vmlinux.stripped, the symbols are in vmlinux
        return GdbTarget("sparc", "gdb-multiarch", our_modules(arch),
                         kernel.with_name("vmlinux"), kaslr=False)
    return GdbTarget("i386:x86-64", "gdb", our_modules(arch),
                     debug_vmlinux(kernel_abi(kernel)), kaslr=True)


def dump_script(modules) -> str:
    """One shell line (one line: what a shell echoes back of it is one line too) that
    prints the kernel's `_text` (where the node has awk: a kernel without KASLR needs
    none) and the section addresses of those of our modules the node has loaded, then
    END."""
    names = " ".join(sorted(modules))
    return (f"command -v awk > /dev/null && "
            f"awk '$3 == \"_text\" {{ print \"{LINE}kernel \" $1; exit }}' /proc/kallsyms; "
            f"for m in {names}; do for s in /sys/module/$m/sections/.*; do "
            f"[ -f \"$s\" ] && echo \"{LINE}section $m ${{s##*/}} $(cat \"$s\")\"; done; done; "
            f"echo {END}")


@dataclass
class GuestLayout:
    """Where the node's kernel and modules are: read from its dump."""
    kernel_text: int | None = None
    sections: dict[str, dict[str, int]] = field(default_factory=dict)   # module -> name -> addr

    def add(self, line: str) -> bool:
        """Take one line of the dump; False if it is not one."""
        m = _DUMP_LINE.match(line.strip())
        if not m:
            return False
        if m["text"]:
            self.kernel_text = int(m["text"], 16)
        else:
            self.sections.setdefault(m["mod"], {})[m["sect"]] = int(m["addr"], 16)
        return True


def is_dump_line(line: str) -> bool:
    return line.startswith(LINE) or line.strip() == END


def debug_vmlinux(abi: str) -> Path:
    """Where `retrolink debug-symbols` puts the guest kernel's vmlinux with its symbols."""
    return paths.cache_dir() / "guest" / f"kernel-{abi}-dbg" / "vmlinux"


def kernel_abi(kernel: Path) -> str:
    """The ABI of the guest kernel image (vmlinuz-6.1.0-56-amd64 -> 6.1.0-56-amd64)."""
    return kernel.name.removeprefix("vmlinuz-")


def _link_text(vmlinux: Path) -> int:
    """`_text` as linked in vmlinux: the KASLR offset is the guest's minus this."""
    out = subprocess.run(["nm", str(vmlinux)], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) \S _text$", out, re.M)
    if not m:
        raise StepFailed(f"{vmlinux}: no _text symbol (nm); fetch it again with "
                         "./retrolink debug-symbols")
    return int(m[1], 16)


def _module_sections(ko: Path) -> set[str]:
    """The sections of a module file that gdb can take an address for."""
    out = subprocess.run(["readelf", "-SW", str(ko)], capture_output=True, text=True).stdout
    return set(re.findall(r"^\s*\[\s*\d+\]\s+(\S+)\s+(?:PROGBITS|NOBITS)", out, re.M))


def script_text(sock: Path, layout: GuestLayout | None, modules: dict[str, Path],
                vmlinux: Path, architecture: str = "i386:x86-64",
                kaslr: bool = True) -> tuple[str, list[str]]:
    """The gdb script for one node, and notes for the user (symbols it lacks)."""
    notes = []
    lines = [f"# gdb -x THIS: node's gdbstub at {sock} (docs/debugging.md)",
             "set pagination off", "set confirm off",
             # before any symbol file: gdb takes their addresses as the CPU's
             f"set architecture {architecture}"]
    if layout is None:
        notes.append("no symbols yet: the node's command prints where its kernel and "
                     "modules are when it starts")
    else:
        if not vmlinux.is_file() and not kaslr:
            notes.append(f"no guest kernel symbols: {vmlinux} is missing (our kernel "
                         "build keeps it beside the image)")
        elif not vmlinux.is_file():
            notes.append("no guest kernel symbols: ./retrolink debug-symbols fetches "
                         "Debian's linux-image-<abi>-dbg (about 0.9 GB) once into the cache")
        elif not kaslr:
            lines.append(f"symbol-file {vmlinux}")
        elif layout.kernel_text is None:
            notes.append("no guest kernel symbols: the node printed no _text of /proc/kallsyms")
        else:
            offset = layout.kernel_text - _link_text(vmlinux)
            lines.append(f"symbol-file -o {offset:#x} {vmlinux}")
        if not any(name in modules for name in layout.sections):
            notes.append("none of our modules is loaded on this node")
        for name, sections in sorted(layout.sections.items()):
            ko = modules.get(name)
            if ko is None or ".text" not in sections:
                continue
            known = _module_sections(ko)
            rest = " ".join(f"-s {s} {a:#x}" for s, a in sorted(sections.items())
                            if s != ".text" and s in known)
            lines.append(f"add-symbol-file {ko} {sections['.text']:#x} {rest}".rstrip())
    lines.append(f"target remote {sock}")
    # single steps that take interrupts and run timers as any instruction does: QEMU's
    # default holds both off for the step, which moves an interrupt due then by an
    # instruction (its record/replay mode does the same, for the same reason)
    lines.append("maintenance packet Qqemu.sstep=0x1")
    return "\n".join(lines) + "\n", notes


def write_script(run_dir: Path, node: int, sock: Path, layout: GuestLayout | None,
                 target: GdbTarget) -> tuple[Path, list[str]]:
    """Write nodeN.gdb into the run directory; its path and the notes to print."""
    text, notes = script_text(sock, layout, target.modules, target.vmlinux,
                              target.architecture, target.kaslr)
    path = run_dir / script_name(node)
    path.write_text(text)
    return path, notes


def attach_hint(script: Path, gdb: str = "gdb") -> str:
    return f"{gdb} -x {script}"


def attached(sock: Path) -> bool:
    """Whether a debugger is connected to the gdbstub at sock: an accepted connection
    shows the listening socket's path in /proc/net/unix, connected (state 03)."""
    try:
        table = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return False
    target = str(sock)
    for row in table:
        cols = row.split()
        if len(cols) >= 8 and cols[7] == target and cols[5] == "03":
            return True
    return False


def split_dump(lines: list[str]) -> list[str]:
    """A node's output without the dump its command began with (run --gdb)."""
    return lines[lines.index(END) + 1:] if END in lines else lines


class DumpReader:
    """`run --gdb N`: takes node N's output lines as they are read, and once its dump is
    complete writes the gdb script with its symbols and says how to attach."""

    def __init__(self, run_dir: Path, node: int, sock: Path, target: GdbTarget, say):
        self.run_dir, self.node, self.sock, self.target, self.say = (run_dir, node, sock,
                                                                      target, say)
        self.layout = GuestLayout()
        self.done = False

    def __call__(self, node: int, lines: list[str]) -> None:
        if node != self.node or self.done:
            return
        for line in lines:
            if line.strip() == END:
                self.done = True
                announce(self.run_dir, self.node, self.sock, self.layout, self.target,
                         self.say)
                return
            self.layout.add(line)


def announce(run_dir: Path, node: int, sock: Path, layout: GuestLayout | None,
             target: GdbTarget, say) -> Path:
    """Write node's gdb script and say how to attach with it."""
    script, notes = write_script(run_dir, node, sock, layout, target)
    say(f"node{node}: attach gdb with: {attach_hint(script, target.gdb)}")
    for note in notes:
        say(f"  ({note})")
    return script
