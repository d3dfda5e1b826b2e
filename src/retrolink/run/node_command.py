"""The QEMU command line of one node."""
from dataclasses import dataclass
from pathlib import Path

from retrolink import disks
from retrolink.build import fcode
from retrolink.build.artifacts import Artifacts
from retrolink.build.qemu_build import INSN_PROFILE_PLUGIN
from retrolink.model.machine import Machine
from retrolink.run import guest_net, sun4m

FIRMWARE_DIRS = ["/usr/share/seabios", "/usr/share/qemu"]
DEBUG_EXIT_PORT = 0xF4
# The guest ends its QEMU by writing DEBUG_EXIT_VALUE to the port (guest/rootfs/init);
# QEMU then exits with (value << 1) | 1 = 85, a status QEMU itself never uses (its own errors
# exit 1), so a QEMU failure is never taken for a node's normal end.
DEBUG_EXIT_VALUE = 0x2A
DEBUG_EXIT_STATUS = (DEBUG_EXIT_VALUE << 1) | 1
BARRIER_PORT = 0xF5      # guest/rootfs/init waits there for the cluster, booted
RTC_BASE = "2000-01-01T00:00:00"   # fixed guest wall clock: runs are deterministic
RTC_BASE_EPOCH_S = 946684800        # the same in seconds since 1970: the guests' clock at power on
# the root image's virtio-pmem device (root_fs = "pmem"): a slot of its own (q35: 00:11.0),
# beside the SCSI adapter's, so that the boards keep the slots they take
PMEM_PCI_SLOT = 0x11
PMEM_SWIOTLB_SLABS = 2048
# A node's command reaches it in a fw_cfg file of this size, the script then NULs, and its
# length in another (opt/retrolink/cmdlen, COMMAND_LENGTH_DIGITS digits). Every run of a
# machine thus has the same fw_cfg directory, with or without a command, and the guest's
# fw_cfg driver, loaded before the boot barrier, reads a run's command after a snapshot's
# restore as it is: reloading it would cost a 75 MIPS node 160 ms of virtual time, each
# 1.1 us of it a lock-step round for every node (guest/rootfs/init).
COMMAND_SLOT_BYTES = 256 << 10
COMMAND_LENGTH_DIGITS = 8


@dataclass(frozen=True)
class NodeFiles:
    console_log: Path
    output: Path               # the result port (ttyS1): a file, or a socket in 'up'
    command: Path | None       # the script to run in its slot (write_command_slot) ...
    command_length: Path | None = None   # ... and its length, both passed in through fw_cfg
    end_marker: str = "@@retrolink-end"   # ends the command's output (node_output.py)
    qmp: Path | None = None
    interactive_socket: Path | None = None
    qemu_trace: str | None = None     # -trace events (e.g. 'retrolink_sx_*') ...
    trace_log: Path | None = None     # ... written here (qemu/trace-events)
    insn_profile: Path | None = None  # the instruction profile's output (docs/profile.md)


def command_too_long(script: str) -> str | None:
    """Why script cannot be a node's command, or None."""
    size = len(script.encode()) + 1
    if size > COMMAND_SLOT_BYTES:
        return (f"the command is {size} bytes, more than a node takes ({COMMAND_SLOT_BYTES}): "
                "put a long script in a file a node can read (an image layer or a disk, "
                "docs/machines.md) and run that")
    return None


def write_command_slot(files: NodeFiles, script: str | None) -> None:
    """The node's command slot and length files (COMMAND_SLOT_BYTES); no script: an empty
    slot, the node keeps a shell (retrolink up)."""
    if script is not None and (problem := command_too_long(script)):
        raise ValueError(problem)       # run_cluster refuses it before anything boots
    data = b"" if script is None else (script + "\n").encode()
    with open(files.command, "wb") as f:
        f.write(data)
        f.truncate(COMMAND_SLOT_BYTES)      # a sparse file: NULs
    files.command_length.write_text(f"{len(data):0{COMMAND_LENGTH_DIGITS}d}")


def insn_profile_plugin(art: Artifacts) -> Path:
    """The TCG plugin of the instruction profile (qemu/plugins/insn-profile.c)."""
    return art.qemu.parent / INSN_PROFILE_PLUGIN


def initrd_of(machine: Machine, art: Artifacts) -> Path:
    """The initramfs a node boots: its image's, or with root_fs = "pmem" the small one
    that mounts the root image."""
    if machine.cluster.root_fs == "pmem":
        return art.pmem_boot
    return art.initrd_for(machine.guest.packages)


def root_image(machine: Machine, art: Artifacts) -> Path:
    """The read-only root image of root_fs = "pmem", which the build makes."""
    image = art.root_image_for(machine.guest.packages)
    if not image.is_file():
        raise ValueError(f"cluster.root_fs is \"pmem\", but the root image {image} is "
                         "missing: run ./retrolink build")
    return image


def memory_option(machine: Machine, image: Path | None) -> str:
    """-m: the RAM, and with a root image room beside it for the image's device (a
    memory device)."""
    mib = machine.cluster.memory_mib
    if image is None:
        return str(mib)
    return f"{mib},slots=1,maxmem={mib + -(-image.stat().st_size // (1 << 20))}M"


def pmem_root_args(image: Path) -> list[str]:
    """root_fs = "pmem" (build/pmem_root.py): the read-only root image as a virtio-pmem
    device that maps the one host file every node maps. Its RAM block is shared and
    named by that file: x-ignore-shared leaves it out of the node's snapshot, which the
    same file backs again at the load."""
    return ["-object", f"memory-backend-file,id=root-image,mem-path={image},"
                       f"size={image.stat().st_size},share=on,readonly=on",
            "-device", f"virtio-pmem-pci,memdev=root-image,id=root-image,addr={PMEM_PCI_SLOT:#x}",
            "-global", "migration.x-ignore-shared=on"]


def node_argv(machine: Machine, node: int, art: Artifacts, files: NodeFiles,
              fabric_socket: Path | None) -> list[str]:
    c = machine.cluster
    sparc = c.arch == "sparc32"     # a SPARCstation 5 (docs/sparc.md), else a PC
    mitigations = "mitigations=off" if c.mitigations == "off" else ""
    base = sun4m.KERNEL_ARGS if sparc else "console=ttyS0 panic=-1 loglevel=4 tsc=reliable"
    # the kernel unpacks the initramfs into a tmpfs unless told otherwise
    # (Documentation/filesystems/ramfs-rootfs-initramfs.rst); the root image's device
    # lies above 4 GiB, for which the kernel keeps bounce buffers for 32-bit DMA, 64 MiB
    # of the RAM by default: the image is read by loads, never by DMA, and the RAM is
    # below 4 GiB, so PMEM_SWIOTLB_SLABS of 2 KiB (4 MiB) are plenty
    root_fs = {"ramfs": "rootfstype=ramfs",
               "pmem": f"swiotlb={PMEM_SWIOTLB_SLABS}"}.get(c.root_fs, "")
    append = " ".join(a for a in (base, "" if sparc else mitigations, root_fs,
                                  c.kernel_cmdline) if a)
    accel = f"tcg,tb-size={c.tb_size_mib}" if c.tb_size_mib else "tcg"
    image = root_image(machine, art) if c.root_fs == "pmem" else None
    argv = [str(art.qemu), "-M", sun4m.MACHINE if sparc else "q35", "-accel", accel, "-smp", "1",
            "-m", memory_option(machine, image),
            "-icount", f"{c.node_icount_option(node)},sleep=off",
            "-rtc", f"clock=vm,base={RTC_BASE}",
            "-nodefaults", "-display", "none", "-no-reboot", "-no-user-config"]
    for d in FIRMWARE_DIRS:
        argv += ["-L", d]
    if not sparc:
        # the init script ends the node by writing 0 here: QEMU exits with status 1
        argv += ["-device", f"isa-debug-exit,iobase={DEBUG_EXIT_PORT:#x},iosize=1"]
        # where init waits for the cluster, once booted (docs/snapshots.md); sun4m's is
        # part of the machine, and a SPARCstation powers itself off at the end
        argv += ["-device", f"retrolink-barrier,iobase={BARRIER_PORT:#x}"]
    # a snapshot is taken of a stopped VM: without this, one started from it would
    # stay stopped (docs/snapshots.md)
    argv += ["-global", "migration.store-global-state=off"]
    # and no RARP announcements of QEMU's own after a load: on a host timer, they
    # would be frames nobody's guest sent
    argv += ["-global", "migration.announce-rounds=0"]
    if image is not None:
        argv += pmem_root_args(image)
    argv += ["-kernel", str(art.kernel), "-initrd", str(initrd_of(machine, art)),
             "-append", append]
    # console and result port are files: never back-pressure, so outside the timed path
    argv += ["-chardev", f"file,id=console,path={files.console_log}",
             "-serial", "chardev:console"]
    if files.interactive_socket:
        argv += ["-chardev", f"socket,id=result,path={files.interactive_socket},server=on,wait=off",
                 "-serial", "chardev:result"]
    else:
        argv += ["-chardev", f"file,id=result,path={files.output}", "-serial", "chardev:result"]
    argv += ["-fw_cfg", f"name=opt/retrolink/node,string={node}",
             "-fw_cfg", f"name=opt/retrolink/nodes,string={machine.total_nodes()}"]
    if sparc:
        argv += sun4m.fw_cfg_args()
    # the cluster's, the disks' and the boards', those whose driver holds its node in
    # short lock-step steps last (BoardBase.LOADS_LAST)
    parts = [*machine.disks_on(node), *machine.boards_on(node)]
    modules = [*machine.cluster.boot_modules,
               *(m for c in sorted(parts, key=lambda c: getattr(c, "LOADS_LAST", False))
                 for m in c.guest_modules())]
    if modules:
        argv += ["-fw_cfg", f"name=opt/retrolink/modules,string={' '.join(dict.fromkeys(modules))}"]
    interfaces = guest_net.interface_lines(machine, node)
    if interfaces:
        # applied by the init script before the command runs (docs/boards/ethernet.md)
        argv += ["-fw_cfg", f"name=opt/retrolink/ip,string={interfaces}",
                 "-fw_cfg", f"name=opt/retrolink/hosts,string={guest_net.hosts_file(machine)}"]
    if files.command:
        argv += ["-fw_cfg", f"name=opt/retrolink/cmd,file={files.command}",
                 "-fw_cfg", f"name=opt/retrolink/cmdlen,file={files.command_length}",
                 "-fw_cfg", f"name=opt/retrolink/end,string={files.end_marker}"]
    if files.qmp:
        argv += ["-qmp", f"unix:{files.qmp},server=on,wait=off"]
    if files.qemu_trace:
        argv += ["-trace", f"enable={files.qemu_trace},file={files.trace_log}"]
    if files.insn_profile:
        argv += ["-plugin", f"{insn_profile_plugin(art)},out={files.insn_profile}"]
    for slot, board in enumerate(machine.boards_on(node)):
        args = (node, machine.total_nodes(), fabric_socket, machine.network_index(board.network))
        if sparc:
            # an SBus card, in the SS-5's slots 0, 1, 2 (qemu/core/rl-sun4m.c)
            argv += board.sbus_args(*args, slot=slot, prom=fcode.prom_path(board.SBUS_PROM))
        else:
            argv += board.qemu_args(*args)
    # the node's disks on its SCSI adapter: /dev/sda, sdb, ... in this order
    argv += disks.node_args(machine.disks_on(node))
    return argv
