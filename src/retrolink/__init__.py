"""retrolink: a full-system emulator of early-1990s cluster interconnects."""
__version__ = "0.1.0"
