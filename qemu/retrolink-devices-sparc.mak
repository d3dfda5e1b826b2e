# QEMU device set for retrolink's SPARCstation 5 nodes (docs/sparc.md): QEMU's sun4m
# machines (the SS-5 and its siblings, with their on-board devices: the Zilog serial
# ports, the SBus, the IOMMU, fw_cfg) and our sun4m devices (core/rl-sun4m.c: the boot
# barrier and fw_cfg where a 32-bit kernel reaches them), and the SBus boards
# (core/rl-sbus-board.c: the PUMA-III FC adapter's SBus card)
CONFIG_SUN4M=y
CONFIG_RETROLINK_SUN4M=y
CONFIG_RETROLINK_SBUS_BOARD=y
