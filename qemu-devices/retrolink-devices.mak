# QEMU device set for retrolink nodes: a q35 PC with ISA serial ports and our devices.
CONFIG_Q35=y
CONFIG_SERIAL_ISA=y
CONFIG_RETROLINK_SX=y
