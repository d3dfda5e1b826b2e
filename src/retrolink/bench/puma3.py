"""`retrolink bench puma3`: the PUMA-III figures (bench/puma3.toml, docs/boards/fc.md),
measured in the guests under the timed model.

One boot of the bandwidth machine (SPARCstation 2 + Weitek) measures bandwidth vs
transfer size for the raw protocol and the three Fast Messages send modes (fc_bench:
node 0 streams, node 1 receives and says when the last byte is in), then TCP/IP over the
adapter's IP interface (NPtcp ping-pong, one size per run). One boot of the latency
machine (SPARCstation 5) measures FM one-way latency vs size (fc_bench ping-pong, median
round trip / 2).
"""
import re

from retrolink import paths
from retrolink.bench import results
from retrolink.bench.results import csv, find, parse_results
from retrolink.bench.sx import machine_parameters
from retrolink.model.machine import Machine, load_machine
from retrolink.progress import StepFailed, say
from retrolink.run.node_command import Artifacts
from retrolink.run.runner import run_cluster

DEFINITION = paths.REPO / "bench" / "puma3.toml"
PROTOCOLS = ("raw", "fm_zc_dma", "fm_pio", "fm_split")
KEYS = PROTOCOLS + ("tcp",)
NPTCP_PORT = 5002
# NPtcp's report of one size: "  0:  1024 bytes   4 times -->   71.23 Mbps in  109.68 usec"
NPTCP_LINE = re.compile(r"^\s*\d+:\s+(\d+) bytes\s+\d+ times -->\s+([\d.]+) Mbps in\s+([\d.]+) usec")


def load_definition(quick: bool) -> dict:
    d, q = results.load_definition(DEFINITION, quick)
    if q:
        d["latency_sizes"] = q["latency_sizes"]
        d["bandwidth"] = dict(d["bandwidth"], bytes=q["bytes"])
        d["tcp"] = dict(d["tcp"], repeats=q["repeats"])
    return d


def _run(machine: Machine, art: Artifacts, scripts: dict[int, str], what: str):
    say(f"  {machine.cluster.name}: {what}")
    result = run_cluster(machine, art, scripts, "bench-puma3")
    if result.problems:
        out = "\n".join(f"    [node{r.node}] {l}" for r in result.nodes for l in r.lines[-8:])
        raise StepFailed(f"benchmark '{what}' on {machine.cluster.name} failed:\n  "
                         + "\n  ".join(result.problems) + f"\n{out}\n  logs: {result.run_dir}")
    if (result.fabric_stats or {}).get("causality_violations", 0):
        raise StepFailed(f"'{what}': the fabric counted causality violations; results would "
                         f"not be exact (logs: {result.run_dir})")
    return result


def count_for(size: int, d: dict) -> int:
    """Transfers per size: at least `bytes` in all, at least `min_count`."""
    b = d["bandwidth"]
    return max(b["min_count"], -(-b["bytes"] // size))


def bandwidth_scripts(d: dict) -> dict[int, str]:
    send, recv = [], []
    for proto in d["protocols"]:
        for s in d["sizes"]:
            n = count_for(s, d)
            send.append(f"fc_bench send --peer 1 --protocol {proto} --size {s} --count {n}")
            recv.append(f"fc_bench recv --peer 0 --protocol {proto} --size {s} --count {n}")
    tcp_send, tcp_recv = [], []
    for s in d["sizes"]:
        opts = f"-P {NPTCP_PORT} -l {s} -u {s} -p 0 -n {d['tcp']['repeats']}"
        tcp_send.append(f"NPtcp -h node1 {opts} -o /dev/null")
        tcp_recv.append(f"NPtcp {opts} -o /dev/null >/dev/null")
    # the NPtcp receiver is started before the first transmitter tries to connect: the
    # transmitter retries its connect, the receiver waits in accept
    return {0: " && ".join(send + ["echo @@tcp"] + tcp_send),
            1: " && ".join(recv + tcp_recv)}


def nptcp_MBps(lines: list[str]) -> dict[str, float]:
    """size -> MB/s (10^6 bytes/s) from the transmitter's NPtcp lines after '@@tcp'."""
    out = {}
    for line in lines[lines.index("@@tcp") + 1:] if "@@tcp" in lines else []:
        m = NPTCP_LINE.match(line)
        if m:
            out[m.group(1)] = round(float(m.group(2)) / 8, 3)
    return out


def measure_bandwidth(machine: Machine, art: Artifacts, d: dict) -> dict:
    result = _run(machine, art, bandwidth_scripts(d),
                  "bandwidth vs transfer size (raw, FM zero-copy DMA, FM PIO, FM split, TCP)")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    bw = {}
    for proto in d["protocols"]:
        bw[proto] = {}
        for s in d["sizes"]:
            (r,) = find(res, "bandwidth_MBps", protocol=proto, size=s) or [None]
            if r is None:
                raise StepFailed(f"fc_bench printed no bandwidth_MBps for {proto} at {s} bytes")
            bw[proto][str(s)] = r.num("value")
    (n0,) = [r for r in result.nodes if r.node == 0]
    bw["tcp"] = nptcp_MBps(n0.lines)
    missing = [s for s in d["sizes"] if str(s) not in bw["tcp"]]
    if missing:
        raise StepFailed(f"NPtcp reported no bandwidth for {csv(missing)} bytes (logs: "
                         f"{result.run_dir})")
    return bw


def measure_latency(machine: Machine, art: Artifacts, d: dict) -> dict:
    lat, sizes = d["latency"], csv(d["latency_sizes"])
    scripts = {0: f"fc_bench pingpong --peer 1 --sizes {sizes} --iters {lat['iters']} "
                  f"--warmup {lat['warmup']}",
               1: f"fc_bench pong --peer 0 --sizes {sizes} --iters {lat['iters']} "
                  f"--warmup {lat['warmup']}"}
    result = _run(machine, art, scripts, "FM one-way latency vs size")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    out = {}
    for s in d["latency_sizes"]:
        (r,) = find(res, "fm_latency_us", size=s) or [None]
        if r is None:
            raise StepFailed(f"fc_bench printed no fm_latency_us for {s} bytes")
        out[str(s)] = r.num("value")
    return out


def run_puma3(overrides: dict, art: Artifacts, quick: bool, machines: dict | None = None) -> dict:
    d = load_definition(quick)
    d.setdefault("protocols", list(PROTOCOLS))
    names = dict(d["machines"], **(machines or {}))
    bw_machine = load_machine(names["bandwidth"], overrides)
    lat_machine = load_machine(names["latency"], overrides)
    bw = measure_bandwidth(bw_machine, art, d)
    out = {"bandwidth_MBps": bw,
           "peak_MBps": {k: max(v.values()) for k, v in bw.items()},
           "fm_latency_us": measure_latency(lat_machine, art, d),
           "parameters": {"bandwidth": machine_parameters(bw_machine),
                          "latency": machine_parameters(lat_machine)}}
    return out


def table(r: dict) -> str:
    p = r["parameters"]["bandwidth"]
    (fc,) = [b for b in p["boards"].values() if b["model"] == "fc"]
    link = p["networks"][fc["network"]]
    sizes = sorted({int(s) for v in r["bandwidth_MBps"].values() for s in v})
    lines = [
        f"PUMA-III, machine {p['machine']} (bandwidth, {p['cpu_mips']:g} MIPS) and "
        f"{r['parameters']['latency']['machine']} (latency, "
        f"{r['parameters']['latency']['cpu_mips']:g} MIPS): FC {link['topology']} "
        f"{link['rate'] / 1e6:g} MB/s",
        "(measured in the guests under the timed model; MB = 10^6 bytes, us = guest microseconds)",
        "",
        "bandwidth_MBps vs transfer size (figure 2)",
        "  size_B   " + "".join(f"{k:>11}" for k in KEYS),
    ]
    for s in sizes:
        lines.append(f"  {s:7d}  " + "".join(
            f"{r['bandwidth_MBps'][k].get(str(s), float('nan')):11.3f}" for k in KEYS))
    lines.append("  peak     " + "".join(f"{r['peak_MBps'][k]:11.3f}" for k in KEYS))
    lines += ["", "FM one-way latency vs size (figure 3)", "  size_B   latency_us"]
    for s in sorted(r["fm_latency_us"], key=int):
        lines.append(f"  {int(s):7d}   {r['fm_latency_us'][s]:10.1f}")
    return "\n".join(lines)


def plot(r: dict, path) -> None:
    """The paper's figure 2 (bandwidth vs size per protocol) and figure 3 (FM latency)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = {"raw": "raw protocol", "fm_zc_dma": "FM zero-copy DMA", "fm_pio": "FM PIO",
              "fm_split": "FM split API", "tcp": "TCP/IP (NPtcp)"}
    for k in KEYS:
        sizes = sorted(map(int, r["bandwidth_MBps"][k]))
        a.plot(sizes, [r["bandwidth_MBps"][k][str(s)] for s in sizes], marker="o", label=labels[k])
    a.set_xscale("log", base=2)
    a.set(xlabel="transfer size (bytes)", ylabel="bandwidth (MB/s)", title="bandwidth vs size")
    a.grid(True, alpha=0.3)
    a.legend(fontsize=8)
    sizes = sorted(map(int, r["fm_latency_us"]))
    b.plot(sizes, [r["fm_latency_us"][str(s)] for s in sizes], marker="s")
    b.set_xscale("log", base=2)
    b.set(xlabel="message size (bytes)", ylabel="one-way latency (us)", title="FM latency")
    b.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})   # no version: byte-stable
    plt.close(fig)
