"""Running commands on machines/eth-pair.toml and reading what the nodes' netdevs counted
(each QEMU prints its counters to its log when it exits: docs/boards/ethernet.md)."""
import re
from pathlib import Path

from helpers import run_retrolink

COUNTERS = re.compile(r"retrolink-net \S+ \(node (\d+)\): (.*)")


def eth_pair(cmd: str, settings=(), timeout="600", env=None):
    sets = [a for s in settings for a in ("--set", s)]
    return run_retrolink("run", "eth-pair", *sets, "--timeout", timeout, "--", "sh", "-c", cmd,
                         env=env)


def run_dir(r) -> Path:
    return Path(re.search(r"logs: (\S+)\)", r.stderr).group(1))


def counters(r) -> dict[int, dict[str, int]]:
    """Each node's netdev counters: {node: {"tx_frames": .., "drop_rx_not_ready": .., ...}}."""
    found = {}
    for log in sorted(run_dir(r).glob("node*-qemu.log")):
        for m in COUNTERS.finditer(log.read_text(errors="replace")):
            found[int(m.group(1))] = {k: int(v) for k, v in
                                      (kv.split("=") for kv in m.group(2).split())}
    return found
