"""`retrolink bench via`: the VIA figures of the interconnect study (bench/via.toml,
docs/boards/via.md), measured in the guests under the timed model.

One boot of machines/via.toml (two Pentium III nodes on cLAN's switch). Node 0 pings and
node 1 pongs, one size after another, in this order: VIA with polling completion
(VipRecvDone in a loop), then VIA bandwidth (node 0 streams `reps` messages a size with
16 sends outstanding, node 1 keeps receives posted and answers the last), VIA with
blocking completion (VipRecvWait: the receiver sleeps until the NIC's interrupt), then
UDP and TCP (TCP_NODELAY) over the LAN emulation's interface (udp_pingpong). One-way latency is half the round trip: the mean
of `reps` round trips for VIA (via_pingpong), the median for UDP and TCP (udp_pingpong).
A UDP datagram holds at most 65507 bytes: UDP's 64 KB point is a datagram of that size.
"""
from retrolink import paths
from retrolink.bench import harness, results
from retrolink.bench.phase import run_measured
from retrolink.bench.results import csv, machine_parameters, parse_results
from retrolink.model.machine import Machine, load_machine
from retrolink.run.node_command import Artifacts

DEFINITION = paths.REPO / "bench" / "via.toml"
HELP = ("the VIA benchmarks (docs/boards/via.md) on via: one-way latency vs size for VIA "
        "polling and blocking and UDP and TCP over the LAN emulation, VIA bandwidth vs size")
PROTOCOLS = ("via_poll", "via_block", "udp", "tcp")
LABELS = {"via_poll": "VIA polling", "via_block": "VIA blocking", "udp": "UDP (LANE)",
          "tcp": "TCP_NODELAY (LANE)"}
UDP_MAX = 65507              # the largest UDP datagram over IPv4
UDP_PORT, TCP_PORT = 7777, 7778


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def udp_size(size: int) -> int:
    return min(size, UDP_MAX)


def via_pingpong(role: str, peer: int, mode: str, d: dict, bandwidth: bool = False) -> str:
    """With --bandwidth, via_pingpong streams each size after its ping-pongs."""
    return (f"via_pingpong --{role} --peer {peer} --mode {mode} --sizes {csv(d['sizes'])} "
            f"--reps {d['reps']}" + (" --bandwidth" if bandwidth else ""))


def scripts(d: dict) -> dict[int, str]:
    ip_sizes = csv(sorted({udp_size(s) for s in d["sizes"]}))
    ping = f"--peer node1 --sizes {ip_sizes} --iters {d['reps']} --warmup {d['warmup']}"
    node0 = [via_pingpong("client", 1, "poll", d, bandwidth=True),
             via_pingpong("client", 1, "block", d),
             f"udp_pingpong ping {ping} --port {UDP_PORT}",
             f"udp_pingpong ping --tcp {ping} --port {TCP_PORT}"]
    node1 = [via_pingpong("server", 0, "poll", d, bandwidth=True),
             via_pingpong("server", 0, "block", d)]
    echo = (f"(udp_pingpong echo --port {UDP_PORT} & udp_pingpong echo --tcp --port {TCP_PORT} & "
            "wait) &")
    return {0: " && ".join(node0), 1: f"{echo} " + " && ".join(node1) + " && wait"}


def measure(machine: Machine, art: Artifacts, d: dict) -> dict:
    result = run_measured(machine, art, scripts(d),
                          "latency vs size (VIA poll, VIA block, UDP, TCP), VIA bandwidth",
                          "bench-via")
    (n0,) = [r for r in result.nodes if r.node == 0]
    res = parse_results(0, n0.lines)
    lat = {p: {} for p in PROTOCOLS}
    bw = {"via": {}}
    for s in d["sizes"]:
        for mode in ("poll", "block"):
            lat[f"via_{mode}"][str(s)] = results.one(
                res, "via_latency", program="via_pingpong", mode=mode, size=s).num("us")
        bw["via"][str(s)] = results.one(
            res, "via_bandwidth", program="via_pingpong", mode="poll", size=s).num("MBps")
        for proto in ("udp", "tcp"):
            lat[proto][str(s)] = results.one(
                res, "one_way_us", program="udp_pingpong", size=udp_size(s),
                proto=proto).num("value")
    return {"latency_us": lat, "bandwidth_MBps": bw}


def run_via(overrides: dict, art: Artifacts, quick: bool) -> dict:
    d = load_definition(quick)
    machine = load_machine(d["machines"]["cluster"], overrides)
    out = measure(machine, art, d)
    out["parameters"] = machine_parameters(machine)
    return out


def table(r: dict) -> str:
    p = r["parameters"]
    (via,) = [b for b in p["boards"].values() if b["model"] == "via"]
    link = p["networks"][via["network"]]
    sizes = sorted({int(s) for v in r["latency_us"].values() for s in v})
    lines = [
        f"VIA (cLAN-like), machine {p['machine']}: {p['nodes']} nodes at {p['cpu_mips']:g} MIPS, "
        f"{link['topology']} {link['rate'] / 1e6:g} MB/s links",
        "(measured in the guests under the timed model; MB = 10^6 bytes, us = guest "
        "microseconds; UDP's 65536 is a 65507-byte datagram, UDP's largest)",
        "",
        "one-way latency_us vs message size",
        "  size_B  " + "".join(f"{k:>11}" for k in PROTOCOLS) + "   via_MBps",
    ]
    for s in sizes:
        lines.append(f"  {s:6d}  " + "".join(
            f"{r['latency_us'][k][str(s)]:11.1f}" for k in PROTOCOLS)
            + f"{r['bandwidth_MBps']['via'][str(s)]:11.2f}")
    return "\n".join(lines)


def plot(r: dict, path) -> None:
    """The study's form: one-way latency vs size per protocol (log-log), and VIA's
    bandwidth vs size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for k in PROTOCOLS:
        sizes = sorted(map(int, r["latency_us"][k]))
        a.plot(sizes, [r["latency_us"][k][str(s)] for s in sizes], marker="o", label=LABELS[k])
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set(xlabel="message size (bytes)", ylabel="one-way latency (us)",
          title="cLAN: latency vs size")
    a.grid(True, alpha=0.3)
    a.legend(fontsize=8)
    sizes = sorted(map(int, r["bandwidth_MBps"]["via"]))
    b.plot(sizes, [r["bandwidth_MBps"]["via"][str(s)] for s in sizes], marker="s",
           label="VIA (polling)")
    b.set_xscale("log", base=2)
    b.set(xlabel="message size (bytes)", ylabel="bandwidth (MB/s)", title="VIA bandwidth")
    b.grid(True, alpha=0.3)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})   # no version: byte-stable
    plt.close(fig)


def main(args, overrides: dict, sweeps) -> int:
    return harness.own_machines(
        args, overrides, sweeps, "via", load_definition,
        "VIA benchmarks on the cLAN machine (boots once)", run_via, table, plot)
