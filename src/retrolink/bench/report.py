"""Tables (text, deterministic) and plots (PNG) in the form of the papers."""
from pathlib import Path


def sx_table(r: dict) -> str:
    p = r["parameters"]
    dev, link = p["device"], p["link"]
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


def sweep_plot(s: dict, path: Path, title: str) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for p in s["points"]:
        sizes = sorted(map(int, p["throughput_MBps"]))
        a.plot(sizes, [p["throughput_MBps"][str(x)] for x in sizes], marker="o",
               label=f"{s['key']}={p['value']}")
    a.set_xlabel("message length (bytes)")
    a.set_ylabel("throughput (MB/s)")
    a.set_title("throughput vs message length")
    a.legend(fontsize=8)
    a.grid(alpha=0.3)
    xs = [float(p["value"]) for p in s["points"]]
    sizes = sorted(map(int, s["points"][0]["throughput_MBps"]))
    for size in sorted({sizes[0], sizes[len(sizes) // 2], sizes[-1]}):
        b.plot(xs, [p["throughput_MBps"][str(size)] for p in s["points"]], marker="s",
               label=f"{size} B")
    b.set_xscale("log")
    b.set_xticks(xs, [f"{x:g}" for x in xs])
    b.minorticks_off()
    b.set_xlabel(s["key"])
    b.set_ylabel("throughput (MB/s)")
    b.set_title("throughput vs " + s["key"])
    b.legend(fontsize=8)
    b.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
