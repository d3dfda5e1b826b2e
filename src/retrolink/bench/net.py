"""`retrolink bench net`: the Ethernet benchmarks (bench/net.toml, docs/boards/ethernet.md), on
the hub machine and the switch machine, measured in the guests under the timed model.

One boot per machine measures UDP and TCP (TCP_NODELAY) one-way latency vs message size
(udp_pingpong, round trip / 2) and bulk TCP throughput (iperf3). One more boot of the hub
machine measures its load: for each number of busy stations and offered load, nodes
0..k-1 send iperf3 UDP streams at once to the last node, each point in its own slot of
virtual time (the guests' clocks agree: they are the model's); the delivered rate is what
the receiving iperf3 servers counted, and the collisions are the fabric's `collision`
trace events inside the slot. A point may add synthetic stations (traffic generators in
the fabric, docs/fabric.md): they send UDP-sized frames at the same offered load in the
same slot, and what they deliver is counted from the fabric's `arrive` trace events, as
UDP payload (the frame less its Ethernet, IP and UDP headers), as iperf3 counts it.
"""
import json
from retrolink import paths
from retrolink.bench import harness, report, results
from retrolink.bench.phase import run_measured
from retrolink.bench.results import csv, find, machine_parameters, parse_results
from retrolink.model.machine import Machine, load_machine
from retrolink.progress import StepFailed
from retrolink.run.node_command import RTC_BASE_EPOCH_S as RTC_BASE_EPOCH, Artifacts
from retrolink.topologies.base import Synthetic

DEFINITION = paths.REPO / "bench" / "net.toml"
HELP = ("the Ethernet benchmarks (docs/boards/ethernet.md) on eth-hub and eth-switch: UDP and "
        "TCP latency vs size, iperf3 throughput, the hub's throughput and collisions vs load")
UDP_PORT, TCP_PORT, IPERF_PORT = 7777, 7778, 5201
SLOT_MARGIN_S = 3            # idle virtual seconds after each hub load point
UDP_FRAME_HEADERS = 14 + 20 + 8   # Ethernet, IPv4, UDP: a datagram's frame is this much longer


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def _run(machine: Machine, art: Artifacts, scripts: dict[int, str], what: str, trace=False):
    return run_measured(machine, art, scripts, what, "bench-net", trace=trace)


def iperf_json(lines: list[str], tag: str) -> dict:
    """The JSON iperf3 -J printed between `@@iperf TAG` and `@@end TAG` (after any warning
    it prints first, e.g. that a UDP datagram exceeds the TCP MSS)."""
    body = lines[lines.index(f"@@iperf {tag}") + 1:lines.index(f"@@end {tag}")]
    return json.loads("\n".join(body[body.index("{"):]))


def iperf_client(tag: str, args: str) -> str:
    return f"echo '@@iperf {tag}' && iperf3 -J {args} && echo '@@end {tag}'"


def received_MBps(report: dict) -> float:
    """What the receiving iperf3 counted, in MB/s (10^6 bytes)."""
    r = report["end"]["sum_received"]
    return round(r["bytes"] / r["seconds"] / 1e6, 3)


def measure_latency_and_throughput(machine: Machine, art: Artifacts, d: dict) -> dict:
    lat, sizes = d["latency"], csv(d["sizes"])
    ping = f"--peer node1 --sizes {sizes} --iters {lat['iters']} --warmup {lat['warmup']}"
    node0 = (f"udp_pingpong ping {ping} --port {UDP_PORT} && "
             f"udp_pingpong ping --tcp {ping} --port {TCP_PORT} && "
             + iperf_client("tcp", f"-c node1 -p {IPERF_PORT} -t {d['throughput']['seconds']}"))
    node1 = (f"udp_pingpong echo --port {UDP_PORT} & udp_pingpong echo --tcp --port {TCP_PORT} & "
             f"iperf3 -s -1 -p {IPERF_PORT} >/dev/null && wait")
    result = _run(machine, art, {0: node0, 1: node1}, "latency (UDP, TCP) and TCP throughput")
    (n0,) = [r for r in result.nodes if r.node == 0]
    res = parse_results(0, n0.lines)
    out = {}
    for proto in ("udp", "tcp"):
        lat_us = {}
        for s in d["sizes"]:
            (r,) = find(res, "one_way_us", size=s, proto=proto) or [None]
            if r is None:
                raise StepFailed(f"udp_pingpong printed no {proto} one_way_us for size {s}")
            lat_us[str(s)] = r.num("value")
        out[f"{proto}_latency_us"] = lat_us
    out["throughput_MBps"] = received_MBps(iperf_json(n0.lines, "tcp"))
    return out


def hub_load_points(d: dict) -> list[tuple[int, int, float]]:
    """(VM senders, synthetic senders, offered MB/s per sender) of each point, in order."""
    h = d["hub_load"]
    return [(k, s, load) for k, s in h["stations"] for load in h["offered_MBps"]]


def slot_start_ns(start_epoch: int, slot_s: int, p: int) -> int:
    """Point p's slot in the fabric's (virtual) time."""
    return (start_epoch + slot_s * p - RTC_BASE_EPOCH) * 10**9


def with_synthetic_senders(machine: Machine, d: dict, start_epoch: int) -> tuple[Machine, dict]:
    """The hub machine with each point's synthetic senders added to its network, and
    their fabric node ids by point. Each sends `datagram`-byte UDP payloads (as frames
    with their headers) at the point's offered load for `seconds`, to the last node, whose
    NIC drops them (they are not addressed to it)."""
    h, points = d["hub_load"], hub_load_points(d)
    slot = h["seconds"] + SLOT_MARGIN_S
    (net_name, net), = [(n, v) for n, v in machine.networks.items() if v.topology == "hub"]
    gens, ids = list(net.synthetic), {}
    next_id = machine.total_nodes()
    for p, (_, s, load) in enumerate(points):
        interval = round(h["datagram"] / (load * 1e6) * 1e9)
        count = max(1, round(h["seconds"] * 1e9 / interval))
        ids[p] = list(range(next_id, next_id + s))
        next_id += s
        gens += [Synthetic(name=f"load{p}x{i}", dst=machine.cluster.nodes - 1,
                                    size=h["datagram"] + UDP_FRAME_HEADERS, interval_ns=interval,
                                    start_ns=slot_start_ns(start_epoch, slot, p), count=count)
                 for i in range(s)]
    nets = dict(machine.networks, **{net_name: net.model_copy(update={"synthetic": gens})})
    return machine.model_copy(update={"networks": nets}), ids


def trace_events(trace_text: str, event: str):
    """(time_ns, fields) of each `event` line of the fabric's trace (docs/fabric.md:
    `<time_ns> <event> src=<id> dst=<id> len=<n> seq=<n> [net=<n>]`)."""
    for line in trace_text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1] == event:
            yield int(parts[0]), {k: int(v) for k, v in (f.split("=") for f in parts[2:])}


def synthetic_delivered_MBps(trace_text: str, senders: set[int], seconds: float) -> float:
    """UDP payload the given synthetic senders delivered (the fabric's `arrive` events)."""
    total = sum(f["len"] - UDP_FRAME_HEADERS for _, f in trace_events(trace_text, "arrive")
                if f["src"] in senders)
    return round(total / seconds / 1e6, 3)


def hub_load_scripts(machine: Machine, d: dict, start_epoch: int) -> dict[int, str]:
    """Each node's script: the last node serves, nodes 0..k-1 send in point i's slot."""
    h, sink = d["hub_load"], machine.cluster.nodes - 1
    slot = h["seconds"] + SLOT_MARGIN_S
    points = hub_load_points(d)
    senders = max(k for k, _, _ in points)
    if senders >= machine.cluster.nodes:
        raise StepFailed(f"hub_load: {senders} busy stations need {senders + 1} nodes")
    # wait for the slot's start; a node already past it would shift every later point
    wait = ('s=$(({t} - $(date +%s))); [ $s -gt 0 ] || {{ echo "ERROR late for the slot at {t}"; '
            'exit 1; }}; sleep $((s - 1)); until [ $(date +%s) -ge {t} ]; do sleep 0.05; done')
    scripts = {sink: " ".join(f"iperf3 -s -p {IPERF_PORT + i} >/dev/null &" for i in range(senders))
               + f" {wait.format(t=start_epoch + slot * len(points))}"}
    for i in range(senders):
        steps = []
        for p, (k, _, load) in enumerate(points):
            if i < k:
                steps.append("{ " + wait.format(t=start_epoch + slot * p) + "; " + iperf_client(
                    f"p{p}", f"-u -c node{sink} -p {IPERF_PORT + i} -b {round(load * 8e6)} "
                             f"-l {h['datagram']} -t {h['seconds']}") + "; }")
        scripts[i] = " && ".join(steps)
    return scripts


def count_collisions(trace_text: str, start_epoch: int, slot_s: int, npoints: int) -> list[int]:
    """The fabric's collision events in each point's slot of virtual time."""
    counts = [0] * npoints
    for time_ns, _ in trace_events(trace_text, "collision"):
        p = (time_ns / 1e9 + RTC_BASE_EPOCH - start_epoch) // slot_s
        if 0 <= p < npoints:
            counts[int(p)] += 1
    return counts


def measure_hub_load(machine: Machine, art: Artifacts, d: dict) -> list[dict]:
    h, points = d["hub_load"], hub_load_points(d)
    slot = h["seconds"] + SLOT_MARGIN_S
    # the first slot begins once every node has booted and brought its interface up
    start = RTC_BASE_EPOCH + h["start_s"]
    loaded, synthetic_ids = with_synthetic_senders(machine, d, start)
    result = _run(loaded, art, hub_load_scripts(machine, d, start),
                  "aggregate throughput and collisions vs busy stations and offered load",
                  trace=True)
    trace = (result.run_dir / "fabric-trace.txt").read_text()
    collisions = count_collisions(trace, start, slot, len(points))
    out = []
    for p, (k, s, load) in enumerate(points):
        delivered = sum(received_MBps(iperf_json(r.lines, f"p{p}"))
                        for r in result.nodes if r.node < k)
        delivered += synthetic_delivered_MBps(trace, set(synthetic_ids[p]), h["seconds"])
        out.append({"stations": k + s, "vm_stations": k, "synthetic_stations": s,
                    "offered_MBps": round((k + s) * load, 3),
                    "delivered_MBps": round(delivered, 3), "collisions": collisions[p]})
    return out


def run_net(overrides: dict, art: Artifacts, quick: bool) -> dict:
    d = load_definition(quick)
    out = {}
    for name, machine_name in sorted(d["machines"].items()):
        machine = load_machine(machine_name, overrides)
        r = measure_latency_and_throughput(machine, art, d)
        if name == "hub":
            r["hub_load"] = measure_hub_load(machine, art, d)
        r["parameters"] = machine_parameters(machine)
        out[name] = r
    return out


def main(args, overrides: dict, sweeps) -> int:
    return harness.own_machines(
        args, overrides, sweeps, "net", load_definition,
        "Ethernet benchmarks on the hub and the switch machines (boots 3 times)",
        run_net, report.net_table, report.net_plot)
