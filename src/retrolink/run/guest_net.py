"""The guests' IP networking (docs/boards/ethernet.md). A node has an IPv4 address on each network
it joins through a board with IP_NETWORKING (an Ethernet NIC): 198.18.<network index>.
<node + 1>/24, in the benchmarking range 198.18.0.0/15. Every node's /etc/hosts names them
all: nodeN-<network> for each address, and nodeN for the one on its first IP network.
node_command.py passes both to the guest through fw_cfg; the init script applies them."""
from retrolink.boards.ethernet import IP_PREFIX_LEN, ip_address, mac_address
from retrolink.model.machine import Machine


def _ip_boards(machine: Machine):
    """(network name, network index, board) for every IP board, in network order."""
    found = [(machine.network_index(b.network), b.network, b) for b in machine.boards.values()
             if b.IP_NETWORKING]
    return [(name, index, b) for index, name, b in sorted(found, key=lambda f: f[0])]


def interface_lines(machine: Machine, node: int) -> str:
    """One line per IP interface of the node: 'MAC ADDRESS/PREFIX WAIT_S' ('' if none),
    WAIT_S: seconds to wait for a link the NIC cannot show (EthernetBoard.link_wait_s)."""
    lines = [f"{mac_address(index, node)} {ip_address(index, node)}/{IP_PREFIX_LEN} "
             f"{b.link_wait_s():g}"
             for _, index, b in _ip_boards(machine)
             if node in b.node_ids(machine.cluster.nodes)]
    return "".join(line + "\n" for line in lines)


def hosts_file(machine: Machine) -> str:
    lines = ["127.0.0.1 localhost"]
    named = set()
    for name, index, b in _ip_boards(machine):
        for node in b.node_ids(machine.cluster.nodes):
            names = [f"node{node}-{name}"]
            if node not in named:
                names.insert(0, f"node{node}")
                named.add(node)
            lines.append(f"{ip_address(index, node)} {' '.join(names)}")
    return "".join(line + "\n" for line in lines)
