"""`retrolink bench puma2`: the PUMA-II figures (bench/puma2.toml, docs/boards/puma2.md),
measured in the guests under the timed model.

One boot of machines/puma-ii.toml (two SPARCstation 2 nodes). Node 0, the server, makes
an ext2 file system on the shared RAM disk, on a kernel RAM disk (brd) and on its SCSI
disk (docs/boards/scsi-disk.md) and writes the same 1 MB file to each. Then, each with a
cold buffer cache, node 0 reads it from the shared disk (the pages are on its own board),
from brd and from the SCSI disk, and node 1 reads it from the shared disk (every page
comes from node 0's board over the ring) and over NFS from node 0 (NFSv4 on the 10 Mb/s
Ethernet hub: docs/nfs.md; the server's copy is in its memory). Each read reports its
time and what the board counted meanwhile: the VME bus time of the host's programmed I/O
and the time a request waited on the ring while the bus was idle; the kernel's share is
the rest. Then node 1's board fetches pages node 0 wrote, with nothing copied to the host
(the board-to-board page copy throughput), and the mapped DSM's faults are timed: node 1
reads pages node 0 wrote (each a fetch), node 0 writes them again (each an invalidation
of node 1's copy).

`--sweep KEY=V1,V2,...` (any machine key, e.g. networks.ring.rate or
boards.dsm.vme.rate) boots once more per value and measures the remote read and the page
copy there: the paper's "a faster bus or network would help", measured.
"""
import time
from functools import partial

from retrolink import paths
from retrolink.bench import harness, results
from retrolink.bench.phase import run_measured
from retrolink.bench.results import machine_parameters, parse_results
from retrolink.model.machine import Machine, load_machine
from retrolink.progress import StepFailed, say
from retrolink.run.node_command import Artifacts

DEFINITION = paths.REPO / "bench" / "puma2.toml"
HELP = ("the PUMA-II benchmarks (docs/boards/puma2.md) on puma-ii: 1 MB cold read from the "
        "shared RAM disk (local, remote) and a kernel RAM disk, the remote read's breakdown, "
        "board-to-board page copy, mapped DSM fault times; --sweep a machine key")
PATHS = ("dsm_local", "dsm_remote", "ramdisk", "scsi", "nfs")
MNT = "/mnt"
FILE = f"{MNT}/f"
# a cold buffer cache: what the paper's "right after mount" means
COLD = "sync && echo 3 > /proc/sys/vm/drop_caches"


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def md5(path: str, label: str) -> str:
    return f'echo "RESULT md5 path={label} sum=$(md5sum < {path} | cut -d" " -f1)"'


def timed_read(dev: str, label: str, d: dict, mount: str = "mount -o ro") -> list[str]:
    return [COLD, f"{mount} {dev} {MNT}",
            f"puma2ctl read {FILE} --bs {d['read_bs']} --label {label}", md5(FILE, label),
            f"umount {MNT}"]


def fill(dev: str) -> list[str]:
    return [f"mke2fs -q -b 4096 {dev}", f"mount {dev} {MNT}", f"cp /tmp/f {FILE}",
            f"umount {MNT}"]


def scripts(d: dict, full: bool) -> dict[int, str]:
    """Node 0 fills both disks and reads locally; node 1 reads remotely; both then copy
    and fault (puma2ctl's own barriers). Without full: the remote read and the copy."""
    blocks = d["file_bytes"] // 4096
    server = ["set -e", f"mkdir -p {MNT}",
              f"dd if=/dev/urandom of=/tmp/f bs=4096 count={blocks} 2>/dev/null",
              md5("/tmp/f", "written"), *fill("/dev/puma2disk")]
    if full:
        server += ["modprobe brd rd_nr=1 rd_size=8192", *fill("/dev/ram0"), *fill("/dev/sda"),
                   "mkdir -p /srv", "cp /tmp/f /srv/f", "nfs-serve /srv"]
    server += ["puma2ctl barrier 0"]
    if full:
        server += timed_read("/dev/puma2disk", "dsm_local", d)
        server += timed_read("/dev/ram0", "ramdisk", d)
        server += timed_read("/dev/sda", "scsi", d)
    server += ["puma2ctl barrier 1", "puma2ctl barrier 2"]
    reader = ["set -e", f"mkdir -p {MNT}", "puma2ctl barrier 0", "puma2ctl barrier 1",
              *timed_read("/dev/puma2disk", "dsm_remote", d)]
    if full:
        reader += timed_read("node0:/srv", "nfs", d, mount="nfs-mount")
    reader += ["puma2ctl barrier 2"]
    both = [f"puma2ctl copy --pages {d['copy']['copy_pages']}"]
    if full:
        both += [f"puma2ctl faults --pages {d['faults']['pages']}"]
    return {0: " && ".join(server + both), 1: " && ".join(reader + both)}


# the one RESULT line of a name and fields (puma2ctl prints them)
one = partial(results.one, program="puma2ctl")


def measure(machine: Machine, art: Artifacts, d: dict, full: bool, what: str) -> dict:
    result = run_measured(machine, art, scripts(d, full), what, "bench-puma2")
    res = [x for r in result.nodes for x in parse_results(r.node, r.lines)]
    written = one(res, "md5", path="written").fields["sum"]
    paths_read = PATHS if full else ("dsm_remote",)
    for p in paths_read:
        got = one(res, "md5", path=p).fields["sum"]
        if got != written:
            raise StepFailed(f"the {p} read gave md5 {got}, the file written was {written} "
                             f"(logs: {result.run_dir})")
    reads = {p: one(res, "read", path=p) for p in paths_read}
    out = {"read_ms": {p: round(r.num("read_ns") / 1e6, 3) for p, r in reads.items()},
           "bus_ms": {p: round(r.num("bus_ns") / 1e6, 3) for p, r in reads.items()},
           "network_ms": {p: round(r.num("net_ns") / 1e6, 3) for p, r in reads.items()}}
    remote = reads["dsm_remote"]
    total, bus, net = remote.num("read_ns"), remote.num("bus_ns"), remote.num("net_ns")
    out["breakdown_pct"] = {"kernel": round(100 * (total - bus - net) / total, 1),
                            "bus": round(100 * bus / total, 1),
                            "network": round(100 * net / total, 1)}
    copy = one(res, "copy")
    out["page_copy_MBps"] = round(copy.num("pages") * 4096 / copy.num("ns") * 1e3, 3)
    if full:
        rf, wf = one(res, "faults", kind="read"), one(res, "faults", kind="write")
        if rf.num("wrong"):
            raise StepFailed(f"node 1 read {rf.fields['wrong']} DSM pages with other bytes "
                             f"than node 0 wrote (logs: {result.run_dir})")
        out["fault_us"] = {"read": round(rf.num("ns") / rf.num("pages") / 1e3, 1),
                           "write": round(wf.num("ns") / wf.num("pages") / 1e3, 1)}
        out["fault_MBps"] = {"read": round(rf.num("pages") * 4096 / rf.num("ns") * 1e3, 3),
                             "write": round(wf.num("pages") * 4096 / wf.num("ns") * 1e3, 3)}
    return out


def run_puma2(overrides: dict, art: Artifacts, quick: bool, sweeps=()) -> dict:
    d = load_definition(quick)
    machine = load_machine(d["machine"], overrides)
    out = measure(machine, art, d, True, "1 MB cold reads, page copy, DSM faults")
    out["parameters"] = machine_parameters(machine)
    out["sweeps"] = {}
    for key, values in sweeps:
        out["sweeps"][key] = {}
        for v in values:
            m = load_machine(d["machine"], {**overrides, key: v})
            r = measure(m, art, d, False, f"remote read and page copy at {key}={v}")
            out["sweeps"][key][str(v)] = {"read_ms": r["read_ms"]["dsm_remote"],
                                          "breakdown_pct": r["breakdown_pct"],
                                          "page_copy_MBps": r["page_copy_MBps"]}
    return out


def table(r: dict) -> str:
    p = r["parameters"]
    (dsm,) = [b for b in p["boards"].values() if b["model"] == "puma2"]
    ring = p["networks"][dsm["network"]]
    lines = [
        f"PUMA-II, machine {p['machine']} ({p['nodes']} nodes, {p['cpu_mips']:g} MIPS): "
        f"{ring['topology']} {ring['rate'] / 1e6:g} MB/s, VME {dsm['vme']['overhead_ns']} ns "
        f"+ 4 B at {dsm['vme']['rate'] / 1e6:g} MB/s a transaction",
        "(measured in the guests under the timed model; MB = 10^6 bytes, ms and us of "
        "guest time)", "",
        "1 MB sequential read right after mount (figure 3)",
        "  path          read_ms    bus_ms  network_ms",
    ]
    for path, ms in r["read_ms"].items():
        lines.append(f"  {path:<12}{ms:9.1f}{r['bus_ms'][path]:10.1f}"
                     f"{r['network_ms'][path]:12.1f}")
    b = r["breakdown_pct"]
    lines += ["", f"remote read: kernel {b['kernel']}%, VME bus {b['bus']}%, "
              f"network {b['network']}%",
              f"board-to-board page copy: {r['page_copy_MBps']:.2f} MB/s (the paper's peak: "
              "11.5 MB/s)"]
    if "fault_us" in r:
        f, t = r["fault_us"], r["fault_MBps"]
        lines += [f"mapped DSM: read fault {f['read']} us ({t['read']:.2f} MB/s), write "
                  f"fault with an invalidation {f['write']} us ({t['write']:.2f} MB/s)"]
    for key, points in r.get("sweeps", {}).items():
        lines += ["", f"sweep of {key}: remote read and page copy",
                  f"  {'value':<14}read_ms  kernel%  bus%  network%  copy_MBps"]
        for v, s in points.items():
            bd = s["breakdown_pct"]
            lines.append(f"  {v:<14}{s['read_ms']:7.1f}  {bd['kernel']:7.1f}{bd['bus']:6.1f}"
                         f"{bd['network']:10.1f}{s['page_copy_MBps']:11.2f}")
    return "\n".join(lines)


def plot(r: dict, path) -> None:
    """The paper's figure 3 (access time per path) and the remote read's breakdown."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4), gridspec_kw={"width_ratios": [3, 1]})
    names = list(r["read_ms"])
    a.barh(names, [r["read_ms"][n] for n in names], color="tab:blue")
    a.invert_yaxis()
    a.set(xlabel="time to read 1 MB after mount (ms)", title="1 MB sequential read")
    a.grid(True, axis="x", alpha=0.3)
    bottom = 0.0
    for part, color in (("kernel", "tab:gray"), ("bus", "tab:orange"),
                        ("network", "tab:green")):
        share = r["breakdown_pct"][part]
        b.bar(["remote"], [share], bottom=bottom, color=color, label=part)
        bottom += share
    b.set(ylabel="% of the remote read", title="breakdown", ylim=(0, 100))
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})   # no version: byte-stable
    plt.close(fig)


def main(args, overrides: dict, sweeps) -> int:
    from retrolink.build.pipeline import build_all
    d = load_definition(args.quick)
    harness.check_machine(d["machine"], overrides, sweeps)
    art = build_all()
    start = time.monotonic()
    say("PUMA-II benchmarks on puma-ii (boots " + str(1 + sum(len(v) for _, v in sweeps))
        + " times)")
    result = run_puma2(overrides, art, args.quick, sweeps)
    print(table(result), flush=True)
    png = harness.plot_path(f"puma2{'-quick' if args.quick else ''}", overrides)
    harness.write_plot(lambda p: plot(result, p), png)
    harness.write_json(args, result, time.monotonic() - start)
    return 0
