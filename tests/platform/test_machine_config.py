"""Machine files: the schema, every error path, overrides and derived values."""
import re
import textwrap

import pytest

from retrolink.model import units
from retrolink.model.machine import MachineError, apply_overrides, load_machine, parse_value
from retrolink.run.fabric_config import fabric_config_text


def write(tmp_path, text, name="m.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def assert_refused(tmp_path, text, expect):
    """The machine file is refused with an error that names it and says `expect`."""
    path = write(tmp_path, text)
    with pytest.raises(MachineError) as e:
        load_machine(path)
    assert path in str(e.value) and expect in str(e.value), str(e.value)


GOOD = """
[cluster]
name = "t"
nodes = 2
[boards.sx]
model = "sx"
network = "ring"
[networks.ring]
topology = "token_ring"
rate = "12.5MB/s"
station_delay_ns = 1000
"""


def test_shipped_machines_load():
    m = load_machine("sure-sx")
    assert m.board_of_model("sx").network == "ring" and m.networks["ring"].rate == 12_500_000
    assert m.cluster.node_icount_option(0) == "shift=3" and m.cluster.node_granularity_ns(0) == 8
    assert not load_machine("plain").boards and not load_machine("plain").uses_fabric


def test_defaults_and_units(tmp_path):
    m = load_machine(write(tmp_path, GOOD))
    sx = m.boards["sx"]
    assert sx.sxm.mips == 1.9 and sx.pm_bus.channel_rate == 10_000_000
    assert m.cluster.memory_mib == 256


@pytest.mark.parametrize("text,expect", [
    ("[cluster]\nnodes = 2\ncolour = 1\n", "cluster.colour: unknown field"),
    ("[cluster]\nnodes = \"two\"\n", "cluster.nodes"),
    ("[cluster]\n", "cluster.nodes: required field is missing"),
    ("[cluster]\nnodes = 0\n", "cluster.nodes"),
    ("[cluster]\nnodes = 2\ncpu_mips = 0.5\n", "cluster.cpu_mips: 0.5 MIPS is outside 1 to 10000 MIPS"),
    ("[cluster]\nnodes = 2\ncpu_mips_per_node = [125]\n", "1 entries for 2 nodes"),
    ("[cluster]\nnodes = 2\ncpu_mips_per_node = [125, 10001]\n",
     "cluster.cpu_mips_per_node: 10001 MIPS is outside 1 to 10000 MIPS"),
    ("[cluster]\nnodes = 2\nmemory_mib = \"lots\"\n", "not a memory size"),
    ("[cluster]\nnodes = 2\n[boards.b]\nmodel = \"warp\"\nnetwork = \"n\"\n", "boards.b"),
    ("[cluster]\nnodes = 2\n[boards.b]\nmodel = \"sx\"\nnetwork = \"n\"\n",
     "boards.b.network = \"n\": no such network (networks: none)"),
    ("[cluster]\nnodes = 2\n[device]\nmodel = \"sx\"\n", "this machine file is in the old form"),
    ("[cluster]\nnodes = 2\n[link]\nrate = 1\n", "[link]            ->  [networks.NET]"),
    (GOOD + "[networks.lan]\ntopology = \"p2p\"\nrate = 1\n", "networks.lan: no board joins it"),
    (GOOD.replace('network = "ring"', 'network = "ring"\nnodes = [0, 0]'),
     "boards.sx.nodes = [0, 0]: give distinct node ids 0..1"),
    (GOOD.replace('network = "ring"', 'network = "ring"\nnodes = [0, 2]'),
     "boards.sx.nodes = [0, 2]: give distinct node ids 0..1"),
    (GOOD.replace('rate = "12.5MB/s"', 'rate = "fast"'), "not a rate"),
    (GOOD.replace('topology = "token_ring"', 'topology = "bus"'), "networks.ring"),
    (GOOD.replace("station_delay_ns = 1000", ""), "networks.ring.station_delay_ns"),
    (GOOD + "[boards.sx.sxm]\nmips = -1\n", "boards.sx.sxm.mips"),
    (GOOD + "[boards.sx.sxm]\nturbo = 1\n", "boards.sx.sxm.turbo: unknown field"),
    (GOOD.replace("token_ring", "p2p").replace("station_delay_ns = 1000", "")
     .replace("nodes = 2", "nodes = 3"), "joins exactly 2 stations, this network has 3"),
    (GOOD + "[[networks.ring.synthetic]]\nname = \"g\"\ndst = 5\nsize = 1\ninterval_ns = 1\ncount = 1\n",
     "not a VM node on this network"),
    ("[cluster\n", "not valid TOML"),
    (GOOD.replace('topology = "token_ring"', 'topology = "switch"')
     .replace("station_delay_ns = 1000", ""), "boards.sx on networks.ring: mtu = 2112: the sx board sends frames"),
    (GOOD.replace('topology = "token_ring"', 'topology = "min"').replace('model = "sx"', 'model = "cenju3"')
     .replace("station_delay_ns = 1000", "stage_delay_ns = 250\nmtu = 4500\nk = 2\nstages = 1")
     .replace("nodes = 2", "nodes = 3"), "networks.ring: 2x2 switches in 1 stages give 2 ports"),
])
def test_errors_name_file_field_and_expectation(tmp_path, text, expect):
    assert_refused(tmp_path, text, expect)


def test_missing_machine_lists_known():
    with pytest.raises(MachineError, match="no such machine file.*sure-sx"):
        load_machine("no-such-machine")


def test_overrides():
    m = load_machine("sure-sx", {"sxm.mips": 20, "link.rate": "125MB/s"})
    assert m.boards["sx"].sxm.mips == 20 and m.networks["ring"].rate == 125_000_000
    for short in ("sx.sxm.mips", "device.sxm.mips", "boards.sx.sxm.mips"):
        assert load_machine("sure-sx", {short: 5.7}).boards["sx"].sxm.mips == 5.7
    assert load_machine("sure-sx", {"ring.rate": "1MB/s"}).networks["ring"].rate == 10**6
    with pytest.raises(MachineError, match="boards.sx.sxm.speed: unknown field"):
        load_machine("sure-sx", {"sxm.speed": 3})
    assert parse_value("1.5") == 1.5 and parse_value("125MB/s") == "125MB/s"
    assert apply_overrides({"a": {}}, {"a.b": 1}) == {"a": {"b": 1}}


@pytest.mark.parametrize("text,bps", [("12.5MB/s", 12_500_000), ("100Mb/s", 12_500_000),
                                      ("1Gb/s", 125_000_000), (40_000_000, 40_000_000)])
def test_rates(text, bps):
    assert units.parse_rate(text) == bps


def test_icount_mapping():
    """1000/2^N MIPS is shift=N (the command line of before), any other speed mips=X,
    with X written so that QEMU reads the same double; the time function and the
    granularity are those of qemu/patches/0004 (test_cpu_speed.py runs QEMU on them)."""
    assert [units.icount_shift(m) for m in (1000, 500, 250, 125, 62.5, 1.953125)] == \
        [0, 1, 2, 3, 4, 9]
    assert [units.icount_option(m) for m in (1000, 125, 62.5, 40, 28, 1, 10000, 100 / 3)] == \
        ["shift=0", "shift=3", "shift=4", "mips=40.0", "mips=28.0", "mips=1.0", "mips=10000.0",
         "mips=33.333333333333336"]
    assert units.icount_ns_mult(125) == 8 << 32 and units.icount_ns_mult(40) == 25 << 32
    assert units.icount_ns_mult(28) == 153391689143            # 35.714285714... ns
    assert units.icount_ns_mult(1000 / 3) == 3 << 32
    assert [units.granularity_ns(m) for m in (1000, 600, 125, 75, 40, 28, 1, 10000)] == \
        [1, 2, 8, 14, 25, 36, 1000, 1]
    assert units.instructions_ns(1000, 40) == 25000 and units.instructions_ns(1000, 28) == 35714
    # m = 153391689142.857... rounded up: 7 instructions take 250.0000000002 ns, not 249.99
    assert units.instructions_ns(7, 28) == 250
    for bad in (0, -40, 0.999, 10000.5, float("inf"), float("nan"), True, "40"):
        with pytest.raises(ValueError):
            units.icount_option(bad)


@pytest.mark.parametrize("mips", [1, 28, 33.3, 40, 75, 100, 600, 10000])
def test_any_speed_from_1_to_10000_mips_is_a_machine(tmp_path, mips):
    m = load_machine(write(tmp_path, GOOD.replace("nodes = 2", f"nodes = 2\ncpu_mips = {mips}")))
    assert m.cluster.node_cpu_mips(1) == mips
    assert m.cluster.node_granularity_ns(1) == -(-units.icount_ns_mult(mips) // 2**32)


def test_fabric_config_lists_nodes_and_topology(tmp_path):
    m = load_machine("sure-sx")
    text = fabric_config_text(m, tmp_path / "s", tmp_path / "st.json", None)
    assert "nodes 3" in text and "node 2 name=node2" in text
    assert "topology token_ring" in text and "rate=12500000" in text
    assert "station_delay_ns=1000" in text
    assert f"status {tmp_path / 'fabric-status.json'}\n" in text
    assert "stall_report_s 5\n" in text


def test_switch_and_min_reach_the_fabric_with_every_parameter(tmp_path):
    sw = load_machine(write(tmp_path, GOOD.replace('topology = "token_ring"', 'topology = "switch"')
                            .replace("station_delay_ns = 1000", "bb_credit = 4\nmtu = 4500")))
    text = fabric_config_text(sw, tmp_path / "s", tmp_path / "st.json", None)
    assert ("topology switch bb_credit=4 min_frame_bytes=0 mtu=4500 overhead_bytes=0 prop_ns=0 "
            "rate=12500000 rrdy_bytes=4 switch_delay_ns=0") in text
    mn = load_machine(write(tmp_path, GOOD.replace('topology = "token_ring"', 'topology = "min"')
                            .replace('model = "sx"', 'model = "cenju3"')
                            .replace("station_delay_ns = 1000", "stage_delay_ns = 250\nmtu = 4500")))
    text = fabric_config_text(mn, tmp_path / "s", tmp_path / "st.json", None)
    assert ("topology min k=4 min_frame_bytes=0 mtu=4500 overhead_bytes=0 prop_ns=0 "
            "rate=12500000 stage_delay_ns=250 stages=4") in text


def test_nodes_may_run_at_different_speeds(tmp_path):
    from pathlib import Path

    from retrolink.run.node_command import Artifacts, NodeFiles, node_argv
    art = Artifacts(qemu=Path("qemu"), kernel=Path("k"), initrd=Path("i"), fabric=Path("f"))
    files = NodeFiles(console_log=tmp_path / "c", output=tmp_path / "o", command=None)

    def icount(m, node):
        argv = node_argv(m, node, art, files, tmp_path / "s")
        return argv[argv.index("-icount") + 1]

    def granularities(m):
        text = fabric_config_text(m, tmp_path / "s", tmp_path / "st.json", None)
        return [int(g) for g in re.findall(r"^node \d+ name=node\d+ granularity_ns=(\d+)$",
                                           text, re.M)]
    m = load_machine(write(tmp_path, GOOD.replace("nodes = 2", "nodes = 2\ncpu_mips_per_node = [250, 62.5]")))
    assert [icount(m, 0), icount(m, 1)] == ["shift=2,sleep=off", "shift=4,sleep=off"]
    assert granularities(m) == [4, 16]
    # any speed: mips=X, and the fabric is told the longest instruction (ceil of its ns)
    m = load_machine(write(tmp_path, GOOD.replace("nodes = 2", "nodes = 2\ncpu_mips_per_node = [28, 40]")))
    assert [icount(m, 0), icount(m, 1)] == ["mips=28.0,sleep=off", "mips=40.0,sleep=off"]
    assert granularities(m) == [36, 25]


def test_mitigations_reach_the_kernel_command_line(tmp_path):
    """cluster.mitigations = "off" adds mitigations=off to every node's kernel command line
    (before kernel_cmdline, which may still say otherwise); "auto" adds nothing; another
    value is refused, naming the two."""
    from pathlib import Path

    from retrolink.run.node_command import Artifacts, NodeFiles, node_argv
    art = Artifacts(qemu=Path("qemu"), kernel=Path("k"), initrd=Path("i"), fabric=Path("f"))
    files = NodeFiles(console_log=tmp_path / "c", output=tmp_path / "o", command=None)

    def append(text):
        argv = node_argv(load_machine(write(tmp_path, text)), 0, art, files, tmp_path / "s")
        return argv[argv.index("-append") + 1]
    assert "mitigations" not in append(GOOD)
    assert append(GOOD.replace("nodes = 2", 'nodes = 2\nmitigations = "off"\nkernel_cmdline = "quiet"')) \
        .endswith("tsc=reliable mitigations=off quiet")
    assert_refused(tmp_path, GOOD.replace("nodes = 2", 'nodes = 2\nmitigations = "none"'),
                   "cluster.mitigations")


# ---- hostile input: each reached a traceback or a wrong place before ----------------

@pytest.mark.parametrize("text,expect", [
    (GOOD.replace('rate = "12.5MB/s"', "rate = 1e30"), "above the largest rate"),
    (GOOD + "[boards.sx.sxm]\nconfirm_bytes = 8\n", "confirm_bytes: Input should be greater than or equal to 16"),
    ("[cluster]\nnodes = 2\ncpu_mips = inf\n", "cluster.cpu_mips: Input should be a finite number"),
    ("[cluster]\nnodes = 2\ncpu_mips = nan\n", "cluster.cpu_mips: Input should be a finite number"),
    ("[cluster]\nnodes = 2\ncpu_mips_per_node = [125, inf]\n", "finite"),
    ("[cluster]\nnodes = 2\nrun_timeout_s = inf\n", "cluster.run_timeout_s"),
    ("[cluster]\nnodes = 2\nname = \"a,b\"\n", "'a,b' is not a name"),
    ("[cluster]\nnodes = 2\nname = \"a b\"\n", "'a b' is not a name"),
    ("[cluster]\nnodes = 2\nname = \"" + "x" * 33 + "\"\n", "1 to 32 letters"),
    ("[cluster]\nnodes = 2\nname = \"../../escaped\"\n", "'../../escaped' is not a name"),
    ("[cluster]\nnodes = 2\nmemory_mib = \"1000G\"\n", "at most 16384 MiB"),
    ("[cluster]\nnodes = 2\ntb_size_mib = 4\n", "cluster.tb_size_mib: Input should be greater than or equal to 8"),
    ("[cluster]\nnodes = 2\ntb_size_mib = 4096\n", "cluster.tb_size_mib: Input should be less than or equal to 1024"),
    ("[cluster]\nnodes = 2\ntb_size_mib = \"32,x=1\"\n", "cluster.tb_size_mib"),
    (GOOD + "[boards.sx.sxm]\nmips = 1e-9\n", "boards.sx.sxm.mips"),
    (GOOD.replace("station_delay_ns = 1000", "station_delay_ns = 18446744073709551615"),
     "networks.ring.station_delay_ns"),
    (GOOD + "[[networks.ring.synthetic]]\nname = \"g h\"\ndst = 0\nsize = 1\ninterval_ns = 1\ncount = 1\n",
     "'g h' is not a name"),
])
def test_values_qemu_or_the_fabric_would_refuse_are_refused_first(tmp_path, text, expect):
    assert_refused(tmp_path, text, expect)


def test_a_directory_or_a_binary_file_is_a_clear_error(tmp_path):
    with pytest.raises(MachineError, match="is not a file; give a machine name"):
        load_machine(str(tmp_path) + "/")
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe[cluster]\n")
    with pytest.raises(MachineError, match="not a text file in UTF-8"):
        load_machine(str(binary))


def test_set_errors_name_the_set_and_suggest_the_field():
    with pytest.raises(MachineError) as e:
        load_machine("sure-sx", {"sxm.mips": -1})
    assert "--set sxm.mips=-1: boards.sx.sxm.mips" in str(e.value)
    assert "sure-sx.toml" not in str(e.value)
    with pytest.raises(MachineError, match="--set nodes=5: .*unknown field.*did you mean cluster.nodes"):
        load_machine("sure-sx", {"nodes": 5})
    with pytest.raises(MachineError, match="did you mean cluster.nodes"):
        load_machine("plain", {"nodes": 5})
    with pytest.raises(MachineError, match=r"(?s)sx-pair.toml with --set cluster.nodes=3: .*exactly 2 stations"):
        load_machine("sx-pair", {"cluster.nodes": 3})


def test_a_bad_set_on_the_command_line_is_an_error_not_a_traceback():
    from helpers import run_retrolink
    r = run_retrolink("run", "plain", "--set", "nodes=5", "--", "true")
    assert r.returncode == 2 and "did you mean cluster.nodes" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    r = run_retrolink("run", "plain", "--set", "a b=1", "--", "true")
    assert r.returncode == 2 and "is not a field name" in r.stderr and "Traceback" not in r.stderr
    r = run_retrolink("run", "plain", "--set", "cluster.cpu_mips=20000", "--", "true")
    assert r.returncode == 2 and "cluster.cpu_mips: 20000 MIPS is outside 1 to 10000 MIPS" in r.stderr, r.stderr
    assert "booting" not in r.stderr and "Traceback" not in r.stderr
    r = run_retrolink("run", "plain", "--qemu-trace", "x,file=/tmp/elsewhere", "--", "true")
    assert r.returncode == 2 and "--qemu-trace 'x,file=/tmp/elsewhere'" in r.stderr, r.stderr


# ---- values of another TOML type: refused, not converted -----------------------------

@pytest.mark.parametrize("text,expect", [
    (GOOD.replace("nodes = 2", "nodes = true"), "cluster.nodes: expected a whole number, got true (a boolean)"),
    (GOOD.replace("nodes = 2", "nodes = 2.0"), "cluster.nodes: expected a whole number, got 2.0 (a float"),
    (GOOD.replace("nodes = 2", 'nodes = "2"'), 'cluster.nodes: expected a whole number, got "2" (a string); '
     "write a number without quotes"),
    (GOOD.replace("station_delay_ns = 1000", 'station_delay_ns = "1000"'),
     'networks.ring.station_delay_ns: expected a whole number, got "1000" (a string)'),
    (GOOD.replace("station_delay_ns = 1000", "station_delay_ns = true"),
     "networks.ring.station_delay_ns: expected a whole number, got true (a boolean)"),
    (GOOD + "[boards.sx.pm_bus]\nchannels = false\n", "boards.sx.pm_bus.channels: expected a whole number, got false"),
    (GOOD + "[boards.sx.sxm]\nmips = true\n", "boards.sx.sxm.mips: expected a number, got true (a boolean)"),
    (GOOD + "[boards.sx.sxm]\nmips = \"2\"\n", 'boards.sx.sxm.mips: expected a number, got "2" (a string)'),
    (GOOD.replace("nodes = 2", "nodes = 2\nrun_timeout_s = \"10\""), 'cluster.run_timeout_s: expected a number, got "10"'),
    (GOOD.replace("nodes = 2", "nodes = 2\nstall_timeout_s = true"), "cluster.stall_timeout_s: expected a number, got true"),
    (GOOD.replace("nodes = 2", "nodes = 2\nkernel_cmdline = 5"), "cluster.kernel_cmdline: expected a string, got 5"),
    (GOOD.replace('network = "ring"', 'network = "ring"\nnodes = [true, 1]'),
     "boards.sx.nodes.0: expected a whole number, got true (a boolean)"),
    (GOOD + "[[networks.ring.synthetic]]\nname = \"g\"\ndst = 0\nsize = 1\ninterval_ns = \"5\"\ncount = 1\n",
     'networks.ring.synthetic.0.interval_ns: expected a whole number, got "5" (a string)'),
    (GOOD.replace("nodes = 2", "nodes = 2\ncpu_mips = true"), "cluster.cpu_mips"),
])
def test_a_value_of_another_type_is_refused_not_converted(tmp_path, text, expect):
    assert_refused(tmp_path, text, expect)


def test_a_set_of_another_type_is_refused_too():
    with pytest.raises(MachineError, match="--set cluster.nodes=True: cluster.nodes: expected a whole "
                                           "number, got true"):
        load_machine("plain", {"cluster.nodes": parse_value("true")})
    # a number where a number is wanted still is one, whole or not
    m = load_machine("sure-sx", {"sxm.mips": parse_value("20"), "cluster.run_timeout_s": parse_value("5")})
    assert m.boards["sx"].sxm.mips == 20.0 and m.cluster.run_timeout_s == 5.0


# ---- a board on a network it cannot work on ------------------------------------------

FC_ON_HUB = """
[cluster]
nodes = 2
[boards.fc]
model = "fc"
network = "lan"
[networks.lan]
topology = "hub"
rate = "100Mb/s"
mtu = 2136
"""

C3_ON_SWITCH = """
[cluster]
nodes = 2
[boards.c3]
model = "cenju3"
network = "fc"
[networks.fc]
topology = "switch"
rate = "40MB/s"
"""


@pytest.mark.parametrize("text,expect", [
    (FC_ON_HUB, 'boards.fc on networks.lan: topology = "hub": the fc board cannot work on this '
                'kind of network; it joins "switch" or "p2p" (a Fibre Channel N_Port'),
    (C3_ON_SWITCH, 'boards.c3 on networks.fc: topology = "switch": the cenju3 board cannot work '
                   'on this kind of network; it joins "min" (the interface to the Cenju-3'),
    (GOOD.replace('topology = "token_ring"', 'topology = "ethernet_switch"')
     .replace("station_delay_ns = 1000", "mtu = 4500"),
     'boards.sx on networks.ring: topology = "ethernet_switch": the sx board cannot work on '
     'this kind of network; it joins "token_ring" or "p2p" or "switch"'),
    (GOOD.replace('topology = "token_ring"', 'topology = "min"')
     .replace("station_delay_ns = 1000", "stage_delay_ns = 250\nmtu = 4500"),
     'boards.sx on networks.ring: topology = "min": the sx board cannot work'),
    (GOOD.replace('model = "sx"', 'model = "e1000"'),
     'boards.sx on networks.ring: topology = "token_ring": the e1000 board cannot work on this '
     'kind of network; it joins "hub" or "ethernet_switch" or "p2p"'),
])
def test_a_board_on_a_topology_it_cannot_join_is_refused_by_name(tmp_path, text, expect):
    assert_refused(tmp_path, text, expect)


def test_every_board_declares_the_topologies_it_joins_and_the_machines_use_only_those():
    from retrolink.boards import BOARDS
    from retrolink.topologies import TOPOLOGIES
    for model, cls in BOARDS.items():
        assert cls.TOPOLOGIES and set(cls.TOPOLOGIES) <= set(TOPOLOGIES), model
        assert cls.TOPOLOGIES_WHY, model
    from retrolink import paths
    for f in sorted(paths.MACHINES.glob("*.toml")):
        m = load_machine(str(f))
        for b in m.boards.values():
            assert m.networks[b.network].topology in type(b).TOPOLOGIES, (f, b.model)


def test_memory_below_what_the_guest_needs_is_refused_before_boot():
    """160 MiB passed the check (64) and booted a guest whose initramfs did not unpack;
    the floors are the measured ones with a margin: units.MIN_NODE_MIB with the root on
    a tmpfs (the default), units.MIN_NODE_MIB_RAMFS on a ramfs and MIN_NODE_MIB_PMEM on
    the read-only image (cluster.root_fs)."""
    for small in (64, 96, "111M", units.MIN_NODE_MIB_PMEM - 1):
        with pytest.raises(MachineError, match=r"--set cluster.memory_mib=.*: cluster.memory_mib: .* "
                                               r"the guest needs at least 112 MiB with its root on "
                                               r"the read-only image \(root_fs = \"pmem\"\), 224 on "
                                               r"a ramfs and 248 on a tmpfs"):
            load_machine("plain", {"cluster.memory_mib": small, "cluster.root_fs": "pmem"})
    for small in (112, 192, "223M", units.MIN_NODE_MIB_RAMFS - 1):
        with pytest.raises(MachineError, match=r"memory_mib \d+: the guest needs at least 224 "
                                               r"MiB with its root on a ramfs"):
            load_machine("plain", {"cluster.memory_mib": small, "cluster.root_fs": "ramfs"})
    pmem = load_machine("plain", {"cluster.memory_mib": "112M", "cluster.root_fs": "pmem"})
    assert (pmem.cluster.memory_mib, pmem.cluster.root_fs) == (112, "pmem")
    for small in (224, "247M", units.MIN_NODE_MIB - 1):
        with pytest.raises(MachineError, match=r"memory_mib 2\d\d: the guest needs at least 248 "
                                               r"MiB with its root on a tmpfs"):
            load_machine("plain", {"cluster.memory_mib": small})
    ramfs = load_machine("plain", {"cluster.memory_mib": "224M", "cluster.root_fs": "ramfs"})
    assert (ramfs.cluster.memory_mib, ramfs.cluster.root_fs) == (224, "ramfs")
    with pytest.raises(MachineError, match=r"cluster.root_fs"):
        load_machine("plain", {"cluster.root_fs": "ext2"})
    assert load_machine("plain", {"cluster.memory_mib": "248M"}).cluster.memory_mib == 248


def test_sparc32_nodes_refuse_what_their_image_has_not_yet():
    from retrolink.model.machine import parse_overrides
    with pytest.raises(MachineError, match="a SPARCstation 5 holds at most 256 MiB"):
        load_machine("sparc-plain", parse_overrides(["cluster.memory_mib=512M"]))
    with pytest.raises(MachineError, match=r"its nodes have no cluster.boot_modules"):
        load_machine("sparc-plain", parse_overrides(['cluster.boot_modules=["brd"]']))
    with pytest.raises(MachineError, match=r'its nodes have no cluster.root_fs = "pmem"'):
        load_machine("sparc-plain", parse_overrides(['cluster.root_fs="pmem"']))
    # a board without an SBus card: by name
    with pytest.raises(MachineError, match=r"boards.clan \(the via board has no SBus card\)"):
        load_machine("via", parse_overrides(['cluster.arch="sparc32"', "cluster.memory_mib=256M"]))
    assert load_machine("sparc-plain").cluster.arch == "sparc32"
    assert load_machine("puma-iii-ss5").boards["fc"].SBUS_DEVICE == "retrolink-fc-sbus"
