"""The fabric's configuration file (format: docs/fabric.md), written from a machine."""
from pathlib import Path

from .machine import Machine


STALL_REPORT_S = 5       # wall seconds without progress before the fabric names a stuck node


def fabric_config_text(machine: Machine, socket: Path, stats: Path, trace: Path | None) -> str:
    """The stats file's directory is the run's: the fabric's status file goes there too, as
    fabric-status.json (docs/fabric.md, "Stalls")."""
    lines = ["# written by retrolink from the machine file", f"socket {socket}",
             f"nodes {machine.total_nodes()}"]
    for n in range(machine.cluster.nodes):
        # the node's instruction time: `retrolink-fabric --check` compares it with the
        # topology's least latency before anything boots
        lines.append(f"node {n} name=node{n} granularity_ns={2 ** machine.cluster.node_icount_shift(n)}")
    # one network per cluster so far (Machine.graph_problems), joined by every VM node
    (link,) = machine.networks.values()
    for i, s in enumerate(link.synthetic):
        nid = machine.cluster.nodes + i
        lines.append(f"synthetic {nid} name={s.name} dst={s.dst} size={s.size} "
                     f"interval_ns={s.interval_ns} start_ns={s.start_ns} count={s.count}")
    params = " ".join(f"{k}={v}" for k, v in sorted(link.fabric_params().items()))
    lines.append(f"topology {link.topology} {params}")
    lines.append(f"stats {stats}")
    lines.append(f"status {stats.parent / 'fabric-status.json'}")
    lines.append(f"stall_report_s {STALL_REPORT_S}")
    if trace:
        lines.append(f"trace {trace}")
    return "\n".join(lines) + "\n"
