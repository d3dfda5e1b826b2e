"""The instruction profile (docs/profile.md): guest instructions per kernel function,
counted by a TCG plugin (qemu/plugins/insn-profile.c) inside windows the guest marks."""
