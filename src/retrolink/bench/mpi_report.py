"""`bench mpi`'s table (text, deterministic) and plot: one table per measurement, a
column per machine, rows by message size, as the OSU programs print them."""
from pathlib import Path

# the result's key -> title, unit
MEASURES = {"latency_us": ("point-to-point latency (osu_latency), ranks 0 and 1", "us"),
            "bw_MBps": ("bandwidth (osu_bw, window of 64), rank 0 to rank 1", "MB/s"),
            "bibw_MBps": ("bidirectional bandwidth (osu_bibw), ranks 0 and 1", "MB/s"),
            "allreduce_us": ("MPI_Allreduce latency (osu_allreduce), every rank", "us"),
            "alltoall_us": ("MPI_Alltoall latency (osu_alltoall), every rank", "us")}


def _setup(p: dict) -> str:
    nets = ", ".join(f"{n['topology']} {n['rate'] / 1e6:g} MB/s" for n in p["networks"].values())
    boards = ", ".join(sorted({b["model"] for b in p["boards"].values()}))
    return (f"{p['machine']}: {p['nodes']} nodes (ranks of the collectives) at "
            f"{p['cpu_mips']:g} MIPS, {boards}, {nets}")


def measured(r: dict) -> list[str]:
    """The machines with figures (a failed one holds {"failed": why} instead)."""
    return [n for n in r if "failed" not in r[n]]


def table(r: dict) -> str:
    names = measured(r)
    lines = ["MPI benchmarks: Open MPI over TCP/IP, the OSU micro-benchmarks' method (measured "
             "in the guests under the timed model; MB = 10^6 bytes, us = guest microseconds)"]
    lines += [f"  {n}: {_setup(r[n]['parameters'])}" for n in names]
    for key, (title, unit) in MEASURES.items():
        sizes = sorted({int(s) for n in names for s in r[n][key]})
        lines += ["", f"{title}, {unit}",
                  "  size_B  " + "".join(f"{n:>18}" for n in names)]
        for s in sizes:
            lines.append(f"  {s:>7}  " + "".join(
                f"{r[n][key][str(s)]:18.2f}" if str(s) in r[n][key] else f"{'-':>18}"
                for n in names))
    lines += [f"\n{n}: failed, no figures ({r[n]['failed'].splitlines()[0]})"
              for n in r if "failed" in r[n]]
    return "\n".join(lines)


def plot(r: dict, path: Path) -> Path:
    """A panel per measurement: the value vs message size, a line per machine."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.4))
    for ax, (key, (title, unit)) in zip(axes.flat, MEASURES.items()):
        for n in measured(r):
            sizes = sorted(map(int, r[n][key]))
            ax.plot(sizes, [r[n][key][str(s)] for s in sizes], marker="o", label=n)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(unit)
        ax.set_title(title.split(" (")[0] + f" ({unit})", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    axes.flat[-1].axis("off")
    fig.suptitle("retrolink bench mpi")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
