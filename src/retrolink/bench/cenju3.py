"""`retrolink bench cenju3`: the Cenju-3 figures (bench/cenju3.toml, docs/boards/norma.md),
measured in the guests under the timed model.

One boot of the 2-PE machine runs mach_bench on both PEs: PE 1 serves a port it
registered in the name service (`bench`), PE 0 looks it up and measures
- the round trip of inline messages vs size, remote and local (a second task on PE 0);
  one-way latency is half of it (figure 5);
- one 4-byte message traced step by step: each PE prints the virtual time of its steps
  (`RESULT step`), and the breakdown is the time from each step to the next (figure 6);
- out-of-line throughput for 1 .. 25 pages of 16 KB: size / (half the round trip), the
  average over the runs and the best run (figure 7).
One boot of the 8-PE machine: PE 0 serves one port, the other PEs all send to it at once;
every message must arrive (many_to_one).
"""
from functools import partial

from retrolink import headers, paths
from retrolink.bench import harness, results
from retrolink.bench.phase import run_measured
from retrolink.bench.results import csv, find, machine_parameters, parse_results
from retrolink.model.machine import Machine, load_machine
from retrolink.progress import StepFailed
from retrolink.run.node_command import Artifacts

DEFINITION = paths.REPO / "bench" / "cenju3.toml"
HELP = ("the Cenju-3 benchmarks (docs/boards/norma.md) on cenju-3 and cenju-3-8: Mach message "
        "latency remote and local, its breakdown by step, OOL throughput, many-to-one")
ONE_WAY_END = "rcv_done"
# OOL pages a (page) send permit names
PERMIT_PAGES = headers.guest_defines("kernel/norma/norma.h")["NORMA_PERMIT_PAGES"]


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def _run(machine: Machine, art: Artifacts, scripts: dict[int, str], what: str):
    return run_measured(machine, art, scripts, what, "bench-cenju3")


def pair_scripts(d: dict) -> dict[int, str]:
    lat, ool = d["latency"], d["ool"]
    client = (f"mach_bench client --server-node 1 --sizes {csv(d['sizes'])} "
              f"--reps {lat['reps']} --warmup {lat['warmup']} "
              f"--ool-pages {csv(d['ool_pages'])} --ool-runs {ool['runs']} "
              f"--ool-warmup {ool['warmup']} --local 1 --trace 1")
    return {0: client, 1: "mach_bench serve --trace 1"}


def many_scripts(d: dict, nodes: int) -> dict[int, str]:
    m = d["many_to_one"]
    senders = nodes - 1
    scripts = {0: f"mach_bench sink --senders {senders} --messages {m['messages']}"}
    for n in range(1, nodes):
        scripts[n] = f"mach_bench source --server-node 0 --messages {m['messages']} --size {m['size']}"
    return scripts


# the one RESULT line of a name and fields (mach_bench prints them)
one = partial(results.one, program="mach_bench")


def breakdown(res) -> dict[str, float]:
    """step -> us: the one-way path of the traced 4-byte message, from each step to the
    next in virtual time (both PEs' clocks are the one virtual clock): the sender's steps
    until the receiver's first one, then the receiver's up to its mach_msg returning
    (ONE_WAY_END). The sender's later steps (receive complete and the accept notice
    coming back) run beside the receiver's and are not on the path."""
    def steps(side):
        return sorted((int(r.fields["t_ns"]), r.fields["name"])
                      for r in find(res, "step", side=side))
    recv = steps("recv")
    ends = [i for i, (_, name) in enumerate(recv) if name == ONE_WAY_END]
    recv = recv[:ends[0] + 1] if ends else recv
    path = [s for s in steps("send") if not recv or s[0] <= recv[0][0]] + recv
    if len(path) < 2:
        raise StepFailed("mach_bench traced fewer than 2 steps of the 4-byte message")
    return {f"{a}->{b}": round((tb - ta) / 1000, 3)
            for (ta, a), (tb, b) in zip(path, path[1:])}


def ool_sweep(res, d: dict) -> dict:
    """Figure 7 from mach_bench's `RESULT ool` lines: the average and the maximum
    throughput at each page count of the definition, over its runs. Every count must
    have exactly one line, of that many runs, and no other count may: a sweep with a
    point missing (or measured otherwise) is not the figure."""
    runs = d["ool"]["runs"]
    ool = {str(p): one(res, "ool", pages=p) for p in d["ool_pages"]}
    extra = sorted({r.fields["pages"] for r in find(res, "ool")} - set(ool), key=int)
    if extra:
        raise StepFailed(f"mach_bench printed OOL results for pages {', '.join(extra)}, "
                         "which the definition does not sweep")
    for p, r in ool.items():
        if int(r.fields["runs"]) != runs:
            raise StepFailed(f"mach_bench measured {p} OOL pages over {r.fields['runs']} "
                             f"runs, not {runs}")
        if r.num("avg_MBps") > r.num("max_MBps"):
            raise StepFailed(f"mach_bench's OOL average for {p} pages is above its maximum")
    return {"ool_runs": runs,
            "ool_avg_MBps": {p: r.num("avg_MBps") for p, r in ool.items()},
            "ool_max_MBps": {p: r.num("max_MBps") for p, r in ool.items()}}


def measure_pair(machine: Machine, art: Artifacts, d: dict) -> dict:
    result = _run(machine, art, pair_scripts(d),
                  "inline latency (remote, local), 4-byte breakdown, OOL throughput")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    lat = {w: {str(s): one(res, "latency", where=w, size=s).num("oneway_us")
               for s in d["sizes"]} for w in ("remote", "local")}
    return {"latency_us": lat["remote"], "local_latency_us": lat["local"],
            "breakdown_us": breakdown(res), **ool_sweep(res, d)}


def measure_many(machine: Machine, art: Artifacts, d: dict) -> dict:
    nodes = machine.cluster.nodes
    result = _run(machine, art, many_scripts(d, nodes),
                  f"many-to-one: {nodes - 1} PEs send to one port")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    r = one(res, "many_to_one")
    out = {"senders": int(r.fields["senders"]), "messages": int(r.fields["messages"]),
           "delivered": int(r.fields["delivered"])}
    if out["delivered"] != out["messages"]:
        raise StepFailed(f"many-to-one: {out['delivered']} of {out['messages']} messages "
                         f"delivered (logs: {result.run_dir})")
    return out


def run_cenju3(overrides: dict, art: Artifacts, quick: bool) -> dict:
    d = load_definition(quick)
    pair = load_machine(d["machines"]["pair"], overrides)
    many = load_machine(d["machines"]["many"], overrides)
    out = measure_pair(pair, art, d)
    out["many_to_one"] = measure_many(many, art, d)
    out["parameters"] = {"pair": machine_parameters(pair), "many": machine_parameters(many)}
    return out


def permits(pages: int) -> int:
    """The permits a transfer of that many OOL pages waits for: the send permit, then a
    page send permit per further batch of NORMA_PERMIT_PAGES (8)."""
    return -(-pages // PERMIT_PAGES)


def table(r: dict) -> str:
    p = r["parameters"]["pair"]
    nets = ", ".join(f"{n['topology']} {n['rate'] / 1e6:g} MB/s" for n in p["networks"].values())
    lines = [
        f"Cenju-3, machine {p['machine']} ({p['cpu_mips']:g} MIPS), network {nets}",
        "(measured in the guests under the timed model; MB = 10^6 bytes, us = guest microseconds)",
        "",
        "one-way latency_us of inline messages (figure 5)",
        "  size_B      remote      local",
    ]
    for s in sorted(r["latency_us"], key=int):
        lines.append(f"  {int(s):6d}  {r['latency_us'][s]:10.1f} {r['local_latency_us'][s]:10.1f}")
    lines += ["", "4-byte one-way breakdown_us by step (figure 6)"]
    lines += [f"  {k:<40} {v:8.2f}" for k, v in r["breakdown_us"].items()]
    lines += [f"  {'total':<40} {sum(r['breakdown_us'].values()):8.2f}",
              "", "OOL throughput MB/s, size / (half the round trip), average and maximum "
              f"of {r['ool_runs']} runs (figure 7)",
              "  pages   avg_MBps   max_MBps  permits"]
    for pg in sorted(r["ool_avg_MBps"], key=int):
        lines.append(f"  {int(pg):5d} {r['ool_avg_MBps'][pg]:10.2f} {r['ool_max_MBps'][pg]:10.2f}"
                     f" {permits(int(pg)):8d}")
    m = r["many_to_one"]
    lines += ["", f"many-to-one: {m['senders']} senders, {m['messages']} messages, "
              f"{m['delivered']} delivered"]
    return "\n".join(lines)


def plot(r: dict, path) -> None:
    """Figures 5, 6 and 7 of the paper side by side."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.2))
    for key, label in (("latency_us", "remote (NORMA IPC/DE)"), ("local_latency_us", "local")):
        sizes = sorted(map(int, r[key]))
        a.plot(sizes, [r[key][str(s)] for s in sizes], marker="o", label=label)
    a.set(xlabel="inline data (bytes)", ylabel="one-way latency (us)", title="latency (fig. 5)")
    a.grid(True, alpha=0.3)
    a.legend(fontsize=8)
    steps = list(r["breakdown_us"])
    b.barh(range(len(steps)), [r["breakdown_us"][k] for k in steps])
    b.set_yticks(range(len(steps)), steps, fontsize=7)
    b.invert_yaxis()
    b.set(xlabel="us", title="4-byte one-way breakdown (fig. 6)")
    pages = sorted(map(int, r["ool_avg_MBps"]))
    for key, label in (("ool_avg_MBps", "average"), ("ool_max_MBps", "maximum")):
        c.plot(pages, [r[key][str(p)] for p in pages], marker="s", markersize=3, label=label)
    # a transfer past each of these waits for one more page send permit
    for i, edge in enumerate(range(PERMIT_PAGES, pages[-1], PERMIT_PAGES)):
        c.axvline(edge + 0.5, color="grey", linestyle=":", linewidth=1,
                  label=None if i else "one more permit")
    c.set(xlabel="OOL data (16 KB pages)", ylabel="MB/s",
          title=f"OOL throughput, {r['ool_runs']} runs (fig. 7)")
    c.grid(True, alpha=0.3)
    c.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})   # no version: byte-stable
    plt.close(fig)


def main(args, overrides: dict, sweeps) -> int:
    return harness.own_machines(
        args, overrides, sweeps, "cenju3", load_definition,
        "Cenju-3 benchmarks on the 2-PE and the 8-PE machines (boots 2 times)",
        run_cenju3, table, plot)
