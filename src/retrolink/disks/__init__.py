"""Disks: storage a node carries besides its boards (a machine file's [disks.NAME]). Not a
board: a disk joins no network, has no fabric port and no protocol. One model today,
scsi.py's period SCSI hard disk."""
from retrolink.disks.scsi import MAX_DISKS, ScsiDisk, node_args

Disk = ScsiDisk
