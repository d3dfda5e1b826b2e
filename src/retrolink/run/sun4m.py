"""What a SPARCstation 5 node's QEMU command line has that a PC's has not (docs/sparc.md):
our sun4m machine (qemu/core/rl-sun4m.c) and where it maps the boot barrier and its view
of fw_cfg, which the kernel command line and fw_cfg tell the guest."""

MACHINE = "retrolink-SS-5"
BARRIER_TYPE = "retrolink-barrier-sysbus"   # qemu/core/rl-barrier-sysbus.h
# the addresses qemu/core/rl-sun4m.c maps (RL_SUN4M_BARRIER_BASE, RL_SUN4M_FW_CFG_BASE)
BARRIER_BASE = 0x71A00000
FW_CFG_BASE = 0x71A01000
# the control register at 0, data at 2 (as sun4m maps fw_cfg), in a 16-byte window
FW_CFG_MMIO = f"16@{FW_CFG_BASE:#x}:0:2"
# the first Zilog port is the console (OpenBIOS's ttya), the second the result port;
# rltools' modprobe passes qemu_fw_cfg its mmio= (guest/sparc/tools/rltools.c)
KERNEL_ARGS = f"console=ttyS0 panic=-1 loglevel=4 qemu_fw_cfg.mmio={FW_CFG_MMIO}"


def fw_cfg_args() -> list[str]:
    """The barrier's address, for the init script (guest/rootfs/init)."""
    return ["-fw_cfg", f"name=opt/retrolink/barrier,string={BARRIER_BASE:#x}"]
