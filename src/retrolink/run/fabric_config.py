"""The fabric's configuration file (format: docs/fabric.md), written from a machine."""
from pathlib import Path

from retrolink.model.machine import Machine

STALL_REPORT_S = 5       # wall seconds without progress before the fabric names a stuck node


def fabric_config_text(machine: Machine, socket: Path, stats: Path, trace: Path | None) -> str:
    """The stats file's directory is the run's: the fabric's status file goes there too, as
    fabric-status.json (docs/fabric.md, "Stalls")."""
    lines = ["# written by retrolink from the machine file", f"socket {socket}",
             f"nodes {machine.total_nodes()}"]
    for n in range(machine.cluster.nodes):
        # the node's longest instruction time (its timers fire up to this - 1 ns late):
        # `retrolink-fabric --check` compares it with the topology's least latency before
        # anything boots
        lines.append(f"node {n} name=node{n} granularity_ns={machine.cluster.node_granularity_ns(n)}")
    # every network, in the file's order: its id is its index (Machine.network_index),
    # its stations the VM nodes with its board, then its synthetic nodes
    synthetic_id = machine.cluster.nodes
    for index, (name, net) in enumerate(machine.networks.items()):
        stations = machine.stations(name)
        for s in net.synthetic:
            lines.append(f"synthetic {synthetic_id} name={s.name} dst={s.dst} size={s.size} "
                         f"interval_ns={s.interval_ns} start_ns={s.start_ns} count={s.count} "
                         f"net={index}")
            stations.append(synthetic_id)
            synthetic_id += 1
        protocols = {b.PROTOCOL for b in machine.boards.values() if b.network == name}
        protocol = protocols.pop() if len(protocols) == 1 else "any"
        lines.append(f"network {index} name={name} stations={','.join(map(str, stations))} "
                     f"protocol={protocol}")
        params = " ".join(f"{k}={v}" for k, v in sorted(net.fabric_params().items()))
        lines.append(f"topology {net.topology} {params}")
    # the nodes meet at the boot barrier (docs/snapshots.md); synthetic nodes start after it
    lines.append("boot_barrier on")
    lines.append(f"stats {stats}")
    lines.append(f"status {stats.parent / 'fabric-status.json'}")
    lines.append(f"stall_report_s {STALL_REPORT_S}")
    if trace:
        lines.append(f"trace {trace}")
    return "\n".join(lines) + "\n"
