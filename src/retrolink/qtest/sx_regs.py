"""The SX register map and frame format for tests, from the one definition:
include/retrolink/regs/sx-regs.h and include/retrolink/proto/sx.h."""
from retrolink.headers import defines

R = type("SxRegs", (), defines("regs/sx-regs.h", "proto/sx.h"))
