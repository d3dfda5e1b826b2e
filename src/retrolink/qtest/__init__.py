"""Driving a QEMU device model without a guest: the qtest protocol client (client.py),
a scripted fake fabric for the link port (fake_fabric.py) and the SX register map read
from its header (sx_regs.py). Used by the qtest tests (tests/platform, tests/boards) and by `retrolink fuzz`."""
