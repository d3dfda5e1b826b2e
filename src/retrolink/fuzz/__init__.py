"""retrolink fuzz: a generic fuzzer of the boards' QEMU device models (engine.py), one
description per board (boards/), and the command (cli.py). docs/fuzzing.md."""
