"""The fabric's configuration file (format: docs/fabric.md), written from a machine."""
from pathlib import Path

from .machine import Machine


def fabric_config_text(machine: Machine, socket: Path, stats: Path, trace: Path | None) -> str:
    lines = ["# written by retrolink from the machine file", f"socket {socket}",
             f"nodes {machine.total_nodes()}"]
    for n in range(machine.cluster.nodes):
        lines.append(f"node {n} name=node{n}")
    for i, s in enumerate(machine.synthetic):
        nid = machine.cluster.nodes + i
        lines.append(f"synthetic {nid} name={s.name} dst={s.dst} size={s.size} "
                     f"interval_ns={s.interval_ns} start_ns={s.start_ns} count={s.count}")
    link = machine.link
    params = " ".join(f"{k}={v}" for k, v in sorted(link.fabric_params().items()))
    lines.append(f"topology {link.topology} {params}")
    lines.append(f"stats {stats}")
    if trace:
        lines.append(f"trace {trace}")
    return "\n".join(lines) + "\n"
