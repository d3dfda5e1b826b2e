"""`retrolink bench puma3`: the PUMA-III figures (bench/puma3.toml, docs/boards/fc.md),
measured in the guests under the timed model.

Bandwidth is NetPIPE's: a transfer of S bytes goes from node 0 to node 1 and back, and
bandwidth = S / (mean round trip / 2), on the bandwidth machine (SPARCstation 2 + Weitek):
vs transfer size for the raw protocol and the three Fast Messages send modes (fc_bench),
and for TCP/IP over the adapter's IP interface (NPtcp: a run per small size, one over
the large ones). Streaming
(fc_bench --mode stream): node 0 sends a run of messages to node 1, preparing (filling)
each buffer before it goes, and bandwidth = bytes / time; with zero-copy DMA the
preparation and the DMA take turns, with the split send API the next buffer is prepared
while the adapter reads the last. On the latency machine (SPARCstation 5s on QEMU's
sun4m with the SBus card, sparc32 guests: docs/sparc.md): FM one-way latency (half the
mean round trip) vs size for each FM send mode; `fm_latency_us` is FM as designed, with
PIO sends.

Four boots, as many at a time as there are cores, each on a core of its own
(phase.run_at_once): streaming then TCP, ping-pong of PIO and split FM, ping-pong of raw
and zero-copy FM, latency. Each
cluster is deterministic on its own, so running them at once changes no figure; what it
saves is host time (docs/boards/fc.md, "The benchmark").
"""
import re
from functools import partial

from retrolink import paths
from retrolink.bench import harness, results
from retrolink.bench.phase import run_at_once, run_measured
from retrolink.bench.results import csv, find, machine_parameters, parse_results
from retrolink.build.pipeline import build_for
from retrolink.model.machine import Machine, load_machine
from retrolink.progress import StepFailed
from retrolink.run.node_command import Artifacts

DEFINITION = paths.REPO / "bench" / "puma3.toml"
HELP = ("the PUMA-III benchmarks (docs/boards/fc.md) on puma-iii and puma-iii-ss5: bandwidth "
        "vs size (raw, Fast Messages, TCP/IP over FC), FM one-way latency vs size")
PROTOCOLS = ("raw", "fm_zc_dma", "fm_pio", "fm_split")
KEYS = PROTOCOLS + ("tcp",)
STREAM_PROTOCOLS = ("fm_zc_dma", "fm_split")
LATENCY_MODE = "fm_pio"
NPTCP_PORT = 5002
# NPtcp's report of one size: "  0:  1024 bytes   4 times -->   71.23 Mbps in  109.68 usec"
NPTCP_LINE = re.compile(r"^\s*\d+:\s+(\d+) bytes\s+\d+ times -->\s+([\d.]+) Mbps in\s+([\d.]+) usec")


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def _run(machine: Machine, art: Artifacts, scripts: dict[int, str], what: str):
    return run_measured(machine, art, scripts, what, "bench-puma3")


def fc_bench(d: dict, protocols, sizes) -> str:
    """fc_bench runs the same on both nodes: node 0 pings, node 1 pongs; node 0 prints
    `RESULT pingpong protocol=P size=S reps=R latency_us=L MBps=B` per point."""
    return (f"fc_bench --protocols {csv(protocols)} --sizes {csv(sizes)} "
            f"--reps-bytes {d['bandwidth']['bytes']}")


def fc_stream(d: dict) -> str:
    """node 0 prints `RESULT stream protocol=P size=S messages=N time_us=T MBps=B`."""
    s = d["stream"]
    return (f"fc_bench --mode stream --protocols {csv(STREAM_PROTOCOLS)} "
            f"--sizes {csv(s['sizes'])} --reps-bytes {s['bytes']}")


def same_on_both(script: str) -> dict[int, str]:
    return {0: script, 1: script}


def nptcp_run(d: dict, lo: int, hi: int) -> dict[int, str]:
    """NPtcp from lo to hi bytes: node 0 transmits, node 1 receives. Without perturbation
    NetPIPE goes from lo by a half and a quarter of the size reached (lo, 3lo/2, 2lo,
    3lo, 4lo, ...), which reaches every lo * 2^k up to hi."""
    opts = f"-P {NPTCP_PORT} -l {lo} -u {hi} -p 0 -n {d['tcp']['repeats']}"
    return {0: f"NPtcp -h node1 {opts} -o /dev/null", 1: f"NPtcp {opts} -o /dev/null >/dev/null"}


def tcp_scripts(d: dict, sizes) -> dict[int, str]:
    """NPtcp: node 0 transmits (its lines follow '@@tcp'), node 1 receives. Each size
    below [tcp] one_run_from in a run of its own, then one run over the others: before
    its first size NetPIPE times 100 round trips of that size, untimed, which run per
    size would be most of NPtcp's traffic at the largest sizes (bench/puma3.toml)."""
    own = [s for s in sizes if s < d["tcp"]["one_run_from"]]
    rest = [s for s in sizes if s not in own]
    runs = [nptcp_run(d, s, s) for s in own]
    if rest:
        lo, hi = min(rest), max(rest)
        odd = [s for s in rest if s % lo or (s // lo) & (s // lo - 1)]
        if odd:
            raise ValueError(f"one NPtcp run from {lo} bytes measures {lo} * 2^k bytes, "
                             f"not {csv(odd)}")
        runs.append(nptcp_run(d, lo, hi))
    # each NPtcp receiver is started before its transmitter tries to connect: the
    # transmitter retries its connect, the receiver waits in accept
    return {0: " && ".join(["echo @@tcp"] + [r[0] for r in runs]),
            1: " && ".join(r[1] for r in runs)}


def chain(*scripts: dict[int, str]) -> dict[int, str]:
    """Each node runs its scripts one after the other, as long as they succeed."""
    return {n: " && ".join(s[n] for s in scripts) for n in (0, 1)}


def nptcp_MBps(lines: list[str]) -> dict[str, float]:
    """size -> MB/s (10^6 bytes/s) from the transmitter's NPtcp lines after '@@tcp'."""
    out = {}
    for line in lines[lines.index("@@tcp") + 1:] if "@@tcp" in lines else []:
        m = NPTCP_LINE.match(line)
        if m:
            # NetPIPE's Mbps are 2^20 bits/s; its time is half the round trip, which
            # makes bytes per microsecond our MB/s (10^6 bytes/s) exactly
            out[m.group(1)] = round(int(m.group(1)) / float(m.group(3)), 3)
    return out


# The bandwidth machine's ping-pong in two boots of puma-iii (phase.run_at_once), PIO (the
# slower) first; a third streams, then runs NPtcp.
PINGPONG_BOOTS = (("fm_pio", "fm_split"), ("raw", "fm_zc_dma"))


def measure_pingpong(machine: Machine, art: Artifacts, d: dict, protocols) -> dict:
    """Ping-pong bandwidth {protocol: {size: MB/s}} of these protocols, one boot."""
    protocols = [p for p in protocols if p in d["protocols"]]
    result = _run(machine, art, same_on_both(fc_bench(d, protocols, d["sizes"])),
                  f"ping-pong bandwidth vs transfer size ({', '.join(protocols)})")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    return {proto: {str(s): point(res, proto, s).num("MBps") for s in d["sizes"]}
            for proto in protocols}


def measured_tcp(result, sizes) -> dict[str, float]:
    (n0,) = [r for r in result.nodes if r.node == 0]
    tcp = nptcp_MBps(n0.lines)
    missing = [s for s in sizes if str(s) not in tcp]
    if missing:
        raise StepFailed(f"NPtcp reported no bandwidth for {csv(missing)} bytes (logs: "
                         f"{result.run_dir})")
    return tcp


def measure_stream_tcp(machine: Machine, art: Artifacts, d: dict) -> tuple[dict, dict]:
    """FM streaming bandwidth {protocol: {size: MB/s}}, and NPtcp's {size: MB/s}."""
    result = _run(machine, art, chain(same_on_both(fc_stream(d)), tcp_scripts(d, d["sizes"])),
                  "FM streaming bandwidth (zero-copy DMA, split), TCP/IP bandwidth")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    stream = {proto: {str(s): stream_point(res, proto, s).num("MBps")
                      for s in d["stream"]["sizes"]} for proto in STREAM_PROTOCOLS}
    return stream, measured_tcp(result, d["sizes"])


def point(res, proto: str, size: int):
    (r,) = find(res, "pingpong", protocol=proto, size=size) or [None]
    if r is None:
        raise StepFailed(f"fc_bench printed no result for {proto} at {size} bytes")
    return r


def stream_point(res, proto: str, size: int):
    (r,) = find(res, "stream", protocol=proto, size=size) or [None]
    if r is None:
        raise StepFailed(f"fc_bench --mode stream printed no result for {proto} at {size} bytes")
    return r


def measure_latency(machine: Machine, art: Artifacts, d: dict) -> dict:
    """One-way latency vs size of each FM send mode, {mode: {size: us}}."""
    modes = [p for p in d["protocols"] if p.startswith("fm_")]
    script = fc_bench(d, modes, d["latency_sizes"])
    result = _run(machine, art, same_on_both(script), "FM one-way latency vs size")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    return {m: {str(s): point(res, m, s).num("latency_us") for s in d["latency_sizes"]}
            for m in modes}


def run_puma3(overrides: dict, art: Artifacts, quick: bool) -> dict:
    d = load_definition(quick)
    d.setdefault("protocols", list(PROTOCOLS))
    bw_machine = load_machine(d["machines"]["bandwidth"], overrides)
    lat_machine = load_machine(d["machines"]["latency"], overrides)
    # the latency machine's SPARCstations boot their own build (docs/sparc.md)
    lat_art = art if lat_machine.cluster.arch == "x86_64" else build_for(lat_machine)
    # the longest first
    jobs = [partial(measure_stream_tcp, bw_machine, art, d)]
    jobs += [partial(measure_pingpong, bw_machine, art, d, group) for group in PINGPONG_BOOTS
             if set(group) & set(d["protocols"])]
    jobs += [partial(measure_latency, lat_machine, lat_art, d)]
    (stream, tcp), *pingpong, lat = run_at_once(jobs)
    bw = {p: v for group in pingpong for p, v in group.items()}
    bw = {p: bw[p] for p in d["protocols"]} | {"tcp": {str(s): tcp[str(s)] for s in d["sizes"]}}
    out = {"bandwidth_MBps": bw,
           "peak_MBps": {k: max(v.values()) for k, v in bw.items()},
           # a sender preparing each buffer: zero-copy DMA against the split send API
           "stream_MBps": stream,
           # FM as designed: PIO sends for low latency (puma-iii.md); every mode beside it
           "fm_latency_us": lat[LATENCY_MODE],
           "fm_latency_us_by_mode": lat,
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
    lines += ["", "FM streaming bandwidth_MBps vs size (the sender prepares every buffer; "
              "split: the next one while the DMA runs)",
              "  size_B   " + "".join(f"{k:>11}" for k in STREAM_PROTOCOLS) + "  split/zc"]
    for s in sorted(r["stream_MBps"][STREAM_PROTOCOLS[0]], key=int):
        zc, split = (r["stream_MBps"][k][s] for k in STREAM_PROTOCOLS)
        lines.append(f"  {int(s):7d}  {zc:11.3f}{split:11.3f}{split / zc:10.2f}")
    modes = list(r["fm_latency_us_by_mode"])
    lines += ["", "FM one-way latency_us vs size (figure 3; fm_latency_us: fm_pio)",
              "  size_B   " + "".join(f"{m:>11}" for m in modes)]
    for s in sorted(r["fm_latency_us"], key=int):
        lines.append(f"  {int(s):7d}  " + "".join(
            f"{r['fm_latency_us_by_mode'][m][s]:11.1f}" for m in modes))
    return "\n".join(lines)


def plot(r: dict, path) -> None:
    """The paper's figure 2 (bandwidth vs size per protocol) and figure 3 (FM latency),
    and FM streaming bandwidth (zero-copy DMA against the split API)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(16, 4.2))
    labels = {"raw": "raw protocol", "fm_zc_dma": "FM zero-copy DMA", "fm_pio": "FM PIO",
              "fm_split": "FM split API", "tcp": "TCP/IP (NPtcp)"}
    color = {k: f"C{i}" for i, k in enumerate(KEYS)}    # a protocol's colour in every panel
    for k in KEYS:
        sizes = sorted(map(int, r["bandwidth_MBps"][k]))
        a.plot(sizes, [r["bandwidth_MBps"][k][str(s)] for s in sizes], marker="o", label=labels[k],
               color=color[k])
    a.set_xscale("log", base=2)
    a.set(xlabel="transfer size (bytes)", ylabel="bandwidth (MB/s)", title="bandwidth vs size")
    a.grid(True, alpha=0.3)
    a.legend(fontsize=8)
    for m, lat in r["fm_latency_us_by_mode"].items():
        sizes = sorted(map(int, lat))
        b.plot(sizes, [lat[str(s)] for s in sizes], marker="s", label=labels[m],
               color=color[m])
    b.legend(fontsize=8)
    b.set_xscale("log", base=2)
    b.set(xlabel="message size (bytes)", ylabel="one-way latency (us)", title="FM latency")
    b.grid(True, alpha=0.3)
    for k in STREAM_PROTOCOLS:
        st = r["stream_MBps"][k]
        sizes = sorted(map(int, st))
        c.plot(sizes, [st[str(s)] for s in sizes], marker="^", label=labels[k],
               color=color[k])
    c.legend(fontsize=8)
    c.set_xscale("log", base=2)
    c.set(xlabel="message size (bytes)", ylabel="bandwidth (MB/s)",
          title="FM streaming (sender prepares each buffer)")
    c.set_ylim(bottom=0)
    c.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})   # no version: byte-stable
    plt.close(fig)


def main(args, overrides: dict, sweeps) -> int:
    return harness.own_machines(
        args, overrides, sweeps, "puma3", load_definition,
        "PUMA-III benchmarks on the bandwidth and the latency machines (several boots, one per core at a time)",
        run_puma3, table, plot)
