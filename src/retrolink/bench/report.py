"""Tables (text, deterministic) and plots (PNG) in the form of the papers."""
from pathlib import Path

from retrolink.model.units import parse_rate


def sx_table(r: dict) -> str:
    p = r["parameters"]
    (dev,) = [b for b in p["boards"].values() if b["model"] == "sx"]
    link = p["networks"][dev["network"]]
    lines = [
        f"SURE-SX message benchmarks, machine {p['machine']}: SXM {dev['sxm']['mips']:g} MIPS, "
        f"PM-SXM bus {dev['pm_bus']['channels']} x {dev['pm_bus']['channel_rate'] / 1e6:g} MB/s, "
        f"{link['topology']} {link['rate'] / 1e6:g} MB/s",
        "(measured in the guests under the timed model; MB = 10^6 bytes, us = guest microseconds)",
        "",
        f"  send_msgs_per_s   {r['send_msgs_per_s']:10.1f}   (one node streaming to two, delivery confirmed)",
        f"  recv_msgs_per_s   {r['recv_msgs_per_s']:10.1f}   (two nodes streaming to one)",
        f"  max_latency_us    {r['max_latency_us']:10.1f}   (one-way, largest message)",
        "",
        "  length_B   latency_us   throughput_MBps",
    ]
    for size in sorted(r["latency_us"], key=int):
        lines.append(f"  {int(size):8d}   {r['latency_us'][size]:10.1f}   "
                     f"{r['throughput_MBps'][size]:15.3f}")
    return "\n".join(lines)


def sweep_table(s: dict) -> str:
    sizes = sorted(s["points"][0]["throughput_MBps"], key=int)
    head = f"  {s['key']:>14}  " + "".join(f"{int(x):>8}B" for x in sizes) + "   saturating_length_B"
    lines = [f"throughput_MBps vs message length, sweeping {s['key']}", head]
    for p in s["points"]:
        sat = p["saturating_length"]
        lines.append(f"  {str(p['value']):>14}  "
                     + "".join(f"{p['throughput_MBps'][x]:9.3f}" for x in sizes)
                     + f"   {sat if sat is not None else '> ' + str(max(map(int, sizes)))}")
    return "\n".join(lines)


def sweep_plot(s: dict, path: Path, title: str, projection_sizes=(256, 4096)) -> Path:
    """Three panels: throughput vs length for each value; the paper's figure 2 form
    (throughput vs the swept parameter for the projection sizes); its figure 1 form (the
    length needed to saturate the link vs the parameter)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.2))
    sizes = sorted(map(int, s["points"][0]["throughput_MBps"]))
    for p in s["points"]:
        a.plot(sizes, [p["throughput_MBps"][str(x)] for x in sizes], marker="o",
               label=f"{s['key']}={p['value']}")
    _axes(a, "message length (bytes)", "throughput (MB/s)", "throughput vs message length")
    xs, log_scale = _positions([p["value"] for p in s["points"]])
    labels = [str(p["value"]) for p in s["points"]]
    shown = [x for x in projection_sizes if x in sizes] or sorted({sizes[0], sizes[-1]})
    for size in shown:
        b.plot(xs, [p["throughput_MBps"][str(size)] for p in s["points"]], marker="s",
               label=f"{size} B messages")
    _parameter_axis(b, xs, labels, log_scale)
    _axes(b, s["key"], "throughput (MB/s)", "throughput vs " + s["key"])
    # points where even the longest length does not saturate the link sit above the top
    top = max(sizes)
    sat = [(x, p["saturating_length"]) for x, p in zip(xs, s["points"])]
    c.plot([x for x, v in sat if v is not None], [v for x, v in sat if v is not None],
           marker="D", label="shortest length at >= 95% of the link")
    beyond = [x for x, v in sat if v is None]
    if beyond:
        c.plot(beyond, [top * 1.1] * len(beyond), linestyle="none", marker="^",
               label=f"not saturated up to {top} B")
    _parameter_axis(c, xs, labels, log_scale)
    c.set_ylim(0, top * 1.2)
    _axes(c, s["key"], "message length (bytes)", "length needed to saturate the link")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _positions(values) -> tuple[list[float], bool]:
    """Where each swept value goes on the x axis, and whether the axis is logarithmic:
    numbers and rates ("125MB/s") by size, anything else (a topology name) in order."""
    try:
        xs = [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool)
              else float(parse_rate(v)) for v in values]
    except ValueError:
        return [float(i) for i in range(len(values))], False
    return xs, all(x > 0 for x in xs)


def _parameter_axis(ax, xs, labels, log_scale):
    if log_scale:
        ax.set_xscale("log")
    ax.set_xticks(xs, labels)
    ax.minorticks_off()


def _axes(ax, xlabel, ylabel, title):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def _net_setup(p: dict) -> str:
    (board,) = p["boards"].values()
    (net,) = p["networks"].values()
    return f"{p['machine']}: {p['nodes']} x {board['model']}, {net['topology']} {net['rate'] * 8 / 1e6:g} Mb/s"


def net_table(r: dict) -> str:
    """`bench net`: latency vs size for each machine and protocol, throughput, hub load."""
    names = sorted(r)
    lines = ["Ethernet benchmarks (measured in the guests under the timed model; "
             "MB = 10^6 bytes, us = guest microseconds)"]
    lines += [f"  {n}: {_net_setup(r[n]['parameters'])}" for n in names]
    lines += ["", "one-way latency (round trip / 2), us",
              "  size_B" + "".join(f"  {n + '_udp':>11}  {n + '_tcp':>11}" for n in names)]
    for size in sorted(r[names[0]]["udp_latency_us"], key=int):
        lines.append(f"  {int(size):6d}" + "".join(
            f"  {r[n]['udp_latency_us'][size]:11.1f}  {r[n]['tcp_latency_us'][size]:11.1f}"
            for n in names))
    lines += ["", "bulk TCP throughput (iperf3, node 0 -> node 1), MB/s"]
    lines += [f"  {n:>8}  {r[n]['throughput_MBps']:9.3f}" for n in names]
    for n in names:
        if "hub_load" in r[n]:
            lines += ["", f"{n}: aggregate UDP throughput vs busy stations (VMs: iperf3 to the "
                          "last node; synthetic: the fabric's generators)",
                      "  stations  VMs  synthetic  offered_MBps  delivered_MBps  collisions"]
            lines += [f"  {p['stations']:8d}  {p['vm_stations']:3d}  {p['synthetic_stations']:9d}"
                      f"  {p['offered_MBps']:12.3f}  {p['delivered_MBps']:14.3f}"
                      f"  {p['collisions']:10d}" for p in r[n]["hub_load"]]
    return "\n".join(lines)


def net_plot(r: dict, path: Path) -> Path:
    """Latency vs size (UDP and TCP, each machine), and the hub's delivered throughput and
    collisions vs offered load, a line per number of busy stations."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.2))
    for n in sorted(r):
        for proto in ("udp", "tcp"):
            lat = r[n][f"{proto}_latency_us"]
            sizes = sorted(map(int, lat))
            a.plot(sizes, [lat[str(s)] for s in sizes], marker="o", label=f"{n} {proto.upper()}")
    a.set_xscale("log", base=2)
    _axes(a, "message size (bytes)", "one-way latency (us)", "latency vs message size")
    loads = [(n, r[n]["hub_load"]) for n in sorted(r) if "hub_load" in r[n]]
    for n, points in loads:
        for k in sorted({(p["vm_stations"], p["synthetic_stations"]) for p in points}):
            mine = [p for p in points if (p["vm_stations"], p["synthetic_stations"]) == k]
            xs = [p["offered_MBps"] for p in mine]
            what = f"{n}, {k[0]} VM" + (f" + {k[1]} synthetic" if k[1] else "")
            b.plot(xs, [p["delivered_MBps"] for p in mine], marker="s", label=what)
            c.plot(xs, [p["collisions"] for p in mine], marker="D", label=what)
    _axes(b, "offered load (MB/s)", "delivered (MB/s)", "hub: aggregate throughput")
    _axes(c, "offered load (MB/s)", "collisions", "hub: collisions")
    fig.suptitle("retrolink bench net")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
