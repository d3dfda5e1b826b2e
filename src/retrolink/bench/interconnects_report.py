"""`bench interconnects`'s table and plot, in the form of the study's figures: figure 2,
latency per interconnect (a panel per protocol, a line per network); figure 3, latency per
protocol (a panel per network, a line per protocol); the CPU load of communication; and
the bandwidth of the protocols that measure it (VIA's, RDMA writes over rxe)."""

NETWORK_LABELS = {"hub": "100 Mb/s hub (82557, DMA)", "hub-copy": "100 Mb/s hub (RTL8139, copy)",
                  "clan": "cLAN 1.25 Gb/s", "backplane": "CompactPCI backplane",
                  "rxe": "1 Gb/s switch (e1000), soft-RoCE"}
PROTOCOL_LABELS = {"udp": "UDP", "tcp": "TCP_NODELAY", "via_poll": "VIA polling",
                   "via_block": "VIA blocking", "copy": "raw CPU copy",
                   "rxe": "RDMA verbs (rxe)"}


def _label(table: dict, key: str) -> str:
    return table.get(key, key)


def _describe(p: dict) -> str:
    nets = ", ".join(f"{n['topology']} {n['rate'] / 1e6:g} MB/s" for n in p["networks"].values())
    boards = ", ".join(b["model"] for b in p["boards"].values())
    return f"{p['machine']} ({p['nodes']} x {p['cpu_mips']:g} MIPS; {boards}; {nets})"


def table(r: dict) -> str:
    lat, load, bw = r["latency_us"], r["cpu_load_pct"], r.get("bandwidth_MBps", {})
    sizes = r["definition"]["sizes"]
    c = r["definition"]["cpu_load"]
    lines = ["The interconnect study (measured in the guests under the timed model; us = guest "
             "microseconds; UDP's 65536 is a 65507-byte datagram, UDP's largest)", ""]
    for net, by_proto in lat.items():
        protos, bw_protos = list(by_proto), list(bw.get(net, {}))
        lines.append(f"{_label(NETWORK_LABELS, net)}: {_describe(r['parameters'][net])}")
        lines.append("  one-way latency_us vs message size" +
                     (", and bandwidth (MB/s, 10^6 bytes/s)" if bw_protos else ""))
        lines.append("    size_B  " + "".join(f"{p:>11}" for p in protos)
                     + "".join(f"{p + '_MBps':>14}" for p in bw_protos))
        for s in sizes:
            lines.append(f"    {s:6d}  " + "".join(f"{by_proto[p][str(s)]:11.1f}" for p in protos)
                         + "".join(f"{bw[net][p][str(s)]:14.2f}" for p in bw_protos))
        lines.append("")
    lines.append(f"CPU load of communication, % of each side's CPU (a stream of "
                 f"{c['offered_MBps']:g} MB/s from node 0 to node 1, a {c['window_ms']} ms window; "
                 "idle: no traffic)")
    protos = list(next(iter(load.values())))
    lines.append("  network    " + "".join(f"{p + ' snd':>11}{p + ' rcv':>11}" for p in protos))
    for net, by_proto in load.items():
        lines.append(f"  {net:<10} " + "".join(
            f"{by_proto[p]['sender']:11.1f}{by_proto[p]['receiver']:11.1f}" for p in protos))
    return "\n".join(lines)


def plot(r: dict, path) -> None:
    """Top: figure 2 (a panel per protocol, a line per network). Middle: figure 3 (a panel
    per network, a line per protocol). Log-log, as the study's. Bottom, with any
    bandwidth: a line per network and protocol."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lat = r["latency_us"]
    nets = list(lat)
    protos = list(dict.fromkeys(p for by_proto in lat.values() for p in by_proto))
    bw = r.get("bandwidth_MBps", {})
    rows = 3 if any(bw.values()) else 2
    cols = max(len(protos), len(nets))
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.6 * rows), squeeze=False)

    def draw(ax, curves, title, ylabel="one-way latency (us)"):
        for label, points in curves:
            sizes = sorted(map(int, points))
            ax.plot(sizes, [points[str(s)] for s in sizes], marker="o", ms=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set(xlabel="message size (bytes)", ylabel=ylabel)
        ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)

    for i, p in enumerate(protos):
        draw(axes[0][i], [(_label(NETWORK_LABELS, n), lat[n][p]) for n in nets if p in lat[n]],
             f"{_label(PROTOCOL_LABELS, p)}: per interconnect")
    for i, n in enumerate(nets):
        draw(axes[1][i], [(_label(PROTOCOL_LABELS, p), pts) for p, pts in lat[n].items()],
             f"{_label(NETWORK_LABELS, n)}: per protocol")
    if rows == 3:
        draw(axes[2][0], [(f"{_label(PROTOCOL_LABELS, p)}, {_label(NETWORK_LABELS, n)}", pts)
                          for n, by_proto in bw.items() for p, pts in by_proto.items()],
             "bandwidth", "bandwidth (MB/s)")
    for row, used in ((0, len(protos)), (1, len(nets)), (2, 1))[:rows]:
        for ax in axes[row][used:]:
            ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})   # no version: byte-stable
    plt.close(fig)
