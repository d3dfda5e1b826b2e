# QEMU device set for retrolink nodes: a q35 PC with ISA serial ports, the debug-exit
# port (nodes end by writing to it: an exact, immediate exit) and our devices.
CONFIG_Q35=y
CONFIG_SERIAL_ISA=y
# the PCI boards of include/retrolink/boards.def (qemu/<board>/)
CONFIG_RETROLINK_PCI_BOARD=y
CONFIG_ISA_DEBUG=y
# the boot barrier's port, where clusters are snapshotted (docs/snapshots.md)
CONFIG_RETROLINK_BARRIER=y
# stock NICs, whose Debian drivers the initramfs carries (e1000, e100, tulip, pcnet32, 8139too),
# joined to a fabric network by -netdev retrolink (docs/boards/ethernet.md); PCnet-PCI is
# the Lance's PCI sibling, the NIC of the 10 Mb/s machines (machines/nfs-10m.toml)
CONFIG_RETROLINK_NET=y
CONFIG_E1000_PCI=y
CONFIG_EEPRO100_PCI=y
CONFIG_TULIP=y
CONFIG_PCNET_PCI=y
# RealTek 8139: the NIC that copies every frame into its four fixed transmit buffers
CONFIG_RTL8139_PCI=y
# a SCSI hard disk of the period: QEMU's LSI 53C895A (the Debian kernel's sym53c8xx binds
# it) with scsi-hd, on our rl-disk block driver, which times it (docs/boards/scsi-disk.md)
CONFIG_LSI_SCSI_PCI=y
CONFIG_RETROLINK_DISK=y
# PCIe root ports (not used by nodes): the device tests hotplug a board into one, to see a
# realize that fails part-way undo itself while QEMU runs on
CONFIG_PCIE_PORT=y
# a read-only root file system that every node maps from one host file (root_fs = "pmem",
# docs/machines.md): the Debian kernel's virtio_pmem, with DAX, reads its files in place
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_PMEM=y
