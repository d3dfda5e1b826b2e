"""The Ethernet boards in machine files: the QEMU arguments (netdev and NIC, MAC scheme),
the guest's IP configuration and names, and what the schema refuses."""
from pathlib import Path

import pytest

from retrolink.model.machine import MachineError, load_machine
from retrolink.run import guest_net
from retrolink.run.node_command import Artifacts, NodeFiles, node_argv

ART = Artifacts(Path("qemu"), Path("kernel"), Path("initrd"), Path("fabric"))
FILES = NodeFiles(Path("console"), Path("output"), None)


def machine_file(tmp_path, model="e1000", mtu=1518, extra="", rate="10Mb/s"):
    f = tmp_path / "m.toml"
    f.write_text(f'[cluster]\nnodes = 2\n[boards.nic]\nmodel = "{model}"\nnetwork = "net"\n'
                 f'{extra}[networks.net]\ntopology = "p2p"\nrate = "{rate}"\nmtu = {mtu}\n')
    return f


def option(argv, flag, prefix):
    return next(a for f, a in zip(argv, argv[1:]) if f == flag and a.startswith(prefix))


@pytest.mark.parametrize("model, device, module", [("e1000", "e1000", "e1000"),
                                                   ("e100", "i82557b", "e100"),
                                                   ("tulip", "tulip", "tulip"),
                                                   ("pcnet", "pcnet", "pcnet32"),
                                                   ("rtl8139", "rtl8139,revision=16", "8139too")])
def test_each_nic_gets_its_device_driver_and_a_mac_of_the_scheme(tmp_path, model, device,
                                                                  module):
    m = load_machine(str(machine_file(tmp_path, model)))
    argv = node_argv(m, 1, ART, FILES, Path("/run/fabric.sock"))
    assert option(argv, "-netdev", "retrolink,") == (
        "retrolink,id=rlnet0,fabric=/run/fabric.sock,node=1,network=0,tx-latency-ns=1000,"
        "rx-latency-ns=1000,dma-rate=133000000,link-up-ns=1000000000")
    assert option(argv, "-device", device + ",") == \
        f"{device},netdev=rlnet0,mac=52:54:00:52:00:01,romfile="
    assert option(argv, "-fw_cfg", "name=opt/retrolink/modules") == \
        f"name=opt/retrolink/modules,string={module}"


def test_addresses_and_names_of_the_nodes():
    m = load_machine("eth-pair")
    argv = node_argv(m, 0, ART, FILES, Path("s"))
    assert option(argv, "-fw_cfg", "name=opt/retrolink/ip") == \
        "name=opt/retrolink/ip,string=52:54:00:52:00:00 198.18.0.1/24 0\n"
    # a NIC that cannot show its link: the guest waits link-up-ns for it; one that can
    # (the e100's PHY, qemu/patches/0009): for its carrier
    tulip = load_machine("eth-pair", {"eth.model": "tulip", "eth.link_up_ns": 1500000})
    assert guest_net.interface_lines(tulip, 1) == "52:54:00:52:00:01 198.18.0.2/24 0.0015\n"
    e100 = load_machine("eth-pair", {"eth.model": "e100", "eth.link_up_ns": 1500000})
    assert guest_net.interface_lines(e100, 1) == "52:54:00:52:00:01 198.18.0.2/24 0\n"
    assert guest_net.hosts_file(m) == ("127.0.0.1 localhost\n198.18.0.1 node0 node0-lan\n"
                                       "198.18.0.2 node1 node1-lan\n")


def test_plain_and_sx_nodes_get_no_ip_configuration():
    for name in ("plain", "sx-pair"):
        argv = node_argv(load_machine(name), 0, ART, FILES, Path("s"))
        assert not [a for a in argv if a.startswith("name=opt/retrolink/ip")]


def test_parameters_are_checked_with_their_limits(tmp_path):
    with pytest.raises(MachineError, match="boards.nic.dma_rate"):
        load_machine(str(machine_file(tmp_path, extra="dma_rate = 0\n")))
    with pytest.raises(MachineError, match="boards.nic.tx_latency_ns"):
        load_machine(str(machine_file(tmp_path, extra="tx_latency_ns = -1\n")))
    with pytest.raises(MachineError, match="boards.nic: .*ne2000.*e1000.*e100.*tulip.*pcnet"):
        load_machine(str(machine_file(tmp_path, model="ne2000")))
    with pytest.raises(MachineError, match="mtu = 1500: the e100 board sends frames of up to 1514"):
        load_machine(str(machine_file(tmp_path, "e100", mtu=1500)))
    with pytest.raises(MachineError, match='boards.nic on networks.net: rate = 1250001 bytes/s: '
                       'the pcnet board.s chip runs Ethernet at 10 Mb/s at most'):
        load_machine(str(machine_file(tmp_path, "pcnet", rate="1.250001MB/s")))
    assert load_machine(str(machine_file(tmp_path, "pcnet", rate="10Mb/s")))
    m = load_machine("eth-pair", {"dma_rate": "66MB/s", "eth.tx_latency_ns": 5})
    assert m.boards["eth"].dma_rate == 66_000_000 and m.boards["eth"].tx_latency_ns == 5


def test_ethernet_is_refused_on_a_topology_without_broadcast(tmp_path):
    f = tmp_path / "m.toml"
    f.write_text('[cluster]\nnodes = 2\n[boards.nic]\nmodel = "e1000"\nnetwork = "fc"\n'
                 '[networks.fc]\ntopology = "switch"\nrate = "100MB/s"\nmtu = 2112\n')
    with pytest.raises(MachineError, match='topology = "switch" carries no broadcast, which the e1000 board needs'):
        load_machine(str(f))
