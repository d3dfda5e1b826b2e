"""What a build makes for a cluster: its own module, so that a command that only checks
the build (a warm `retrolink build`) imports nothing of the machine model."""
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Artifacts:
    qemu: Path
    kernel: Path
    initrd: Path
    fabric: Path
