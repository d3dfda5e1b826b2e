"""`retrolink bench interconnects`: the interconnect study (bench/interconnects.toml,
../shared/specs/interconnects.md, docs/interconnects.md), measured in the guests under the
timed model.

Each network of the definition is one boot of its machine (with the definition's --set for
it, then the user's). Node 0 sends, node 1 receives or answers:
1. CPU load: a slot of virtual time per protocol, at fixed times from power on (the nodes'
   clocks are the model's and agree): a baseline slot with no traffic ("idle"), then for
   each protocol a stream from node 0 to node 1 at the offered rate (udp_pingpong stream:
   each message at its time); inside it,
   cpu_meter (guest/bin/cpu) on both nodes measures the share of the CPU that is not left
   to an idle-priority spinner: the load of communication on the sending and on the
   receiving side.
2. Latency: one-way latency vs size (half the round trip of a 1:1 ping-pong), one
   protocol after another: UDP and TCP (TCP_NODELAY) with udp_pingpong (the median round
   trip), VIA polling and blocking with via_pingpong, the backplane's raw CPU copy with
   cpci_pingpong and RDMA verbs over soft-RoCE with perftest's ib_send_lat (rxe-perf,
   docs/rdma.md; the mean). A UDP datagram holds at most 65507 bytes: UDP's 64 KB point
   is a datagram of that size.
3. Bandwidth vs size, for the protocols a network's `bandwidth` names: VIA's stream
   (via_pingpong --bandwidth) and RDMA writes (ib_write_bw), `reps` messages a size.
"""
from dataclasses import dataclass
from typing import Callable

from retrolink import paths
from retrolink.bench import harness, results
from retrolink.bench.interconnects_report import plot, table
from retrolink.bench.phase import run_measured
from retrolink.bench.results import csv, machine_parameters, parse_results
from retrolink.model.machine import load_machine
from retrolink.progress import StepFailed
from retrolink.run.node_command import RTC_BASE_EPOCH_S, Artifacts

DEFINITION = paths.REPO / "bench" / "interconnects.toml"
HELP = ("the interconnect study (docs/interconnects.md): one-way latency vs size for every "
        "interconnect (hub, cLAN, backplane) and protocol, and the CPU load of TCP and UDP")
UDP_MAX = 65507              # the largest UDP datagram over IPv4
UDP_PORT, TCP_PORT, STREAM_PORT = 7777, 7778, 7779
IDLE = "idle"                # the CPU-load slot without traffic: the baseline


def load_definition(quick: bool) -> dict:
    return results.load_definition(DEFINITION, quick)


def udp_size(size: int) -> int:
    return min(size, UDP_MAX)


@dataclass(frozen=True)
class Protocol:
    """How one protocol's ping-pong runs: node 0's command, node 1's (None: the
    background echo servers answer it), given the definition and whether to measure the
    bandwidth too; its one-way latency from node 0's results, and its bandwidth (None:
    not measured)."""
    client: Callable[[dict, bool], str]
    server: Callable[[dict, bool], str] | None
    latency: Callable[[list, int], float]
    bandwidth: Callable[[list, int], float] | None = None


def _udp_ping(d: dict, tcp: bool) -> str:
    sizes = csv(sorted({udp_size(s) for s in d["sizes"]}))
    return (f"udp_pingpong ping {'--tcp ' if tcp else ''}--peer node1 --sizes {sizes} "
            f"--iters {d['reps']} --warmup {d['warmup']} --port {TCP_PORT if tcp else UDP_PORT}")


def _udp_latency(proto: str):
    return lambda res, s: results.one(res, "one_way_us", program="udp_pingpong",
                                      size=udp_size(s), proto=proto).num("value")


def _via(role: str, mode: str, d: dict, bw: bool = False) -> str:
    """With bw, via_pingpong streams each size after its ping-pongs."""
    return (f"via_pingpong --{role} --peer {1 if role == 'client' else 0} --mode {mode} "
            f"--sizes {csv(d['sizes'])} --reps {d['reps']}" + (" --bandwidth" if bw else ""))


def _via_latency(mode: str):
    return lambda res, s: results.one(res, "via_latency", program="via_pingpong", mode=mode,
                                      size=s).num("us")


# perftest refuses fewer iterations (its parser: "between 5 and 100000000")
PERFTEST_MIN_ITERS = 5


def _rxe(role: str, d: dict, bw: bool) -> str:
    """rxe-perf (the RDMA layer's, docs/rdma.md): ib_send_lat at every size, then
    ib_write_bw at every size with bw; `reps` iterations, at least perftest's least."""
    reps = max(d["reps"], PERFTEST_MIN_ITERS)
    return (f"rxe-perf --{role}{' node1' if role == 'client' else ''} --sizes {csv(d['sizes'])} "
            f"--reps {reps}" + (f" --bw-sizes {csv(d['sizes'])}" if bw else ""))


def _cpci(d: dict, bw: bool = False) -> str:
    """The same command on both nodes: node 0 pings, node 1 answers."""
    return f"cpci_pingpong --sizes {csv(d['sizes'])} --reps {d['reps']} --warmup {d['warmup']}"


PROTOCOLS = {
    "udp": Protocol(lambda d, bw: _udp_ping(d, False), None, _udp_latency("udp")),
    "tcp": Protocol(lambda d, bw: _udp_ping(d, True), None, _udp_latency("tcp")),
    "via_poll": Protocol(lambda d, bw: _via("client", "poll", d, bw),
                         lambda d, bw: _via("server", "poll", d, bw), _via_latency("poll"),
                         lambda res, s: results.one(res, "via_bandwidth", program="via_pingpong",
                                                    mode="poll", size=s).num("MBps")),
    "via_block": Protocol(lambda d, bw: _via("client", "block", d),
                          lambda d, bw: _via("server", "block", d), _via_latency("block")),
    "copy": Protocol(_cpci, _cpci,
                     lambda res, s: results.one(res, "cpci_latency", program="cpci_pingpong",
                                                mode="copy", size=s).num("us")),
    "rxe": Protocol(lambda d, bw: _rxe("client", d, bw), lambda d, bw: _rxe("server", d, bw),
                    lambda res, s: results.one(res, "rxe_latency", program="ib_send_lat",
                                               size=s).num("us"),
                    lambda res, s: results.one(res, "rxe_bandwidth", program="ib_write_bw",
                                               size=s).num("MBps")),
}


def load_slots(d: dict) -> list[tuple[str, int]]:
    """(protocol, slot start in ms since 1970) of each CPU-load slot, in order."""
    c = d["cpu_load"]
    slot_ms = c["stream_ms"] + c["slot_gap_ms"]
    first = (RTC_BASE_EPOCH_S + c["start_s"]) * 1000
    return [(p, first + k * slot_ms) for k, p in enumerate([IDLE] + c["protocols"])]


def _stream(d: dict, proto: str, role: str) -> str:
    """One slot's stream: node 0 sends (udp_pingpong stream: each message at its time, the
    offered rate for stream_ms), node 1 takes it (udp_pingpong sink)."""
    c = d["cpu_load"]
    tcp = "--tcp " if proto == "tcp" else ""
    if role == "sink":
        return f"udp_pingpong sink {tcp}--port {STREAM_PORT}"
    return (f"udp_pingpong stream {tcp}--peer node1 --port {STREAM_PORT} --size {c['message']} "
            f"--rate {round(c['offered_MBps'] * 1000)} --ms {c['stream_ms']}")


def _meter(d: dict, proto: str, at_ms: int) -> str:
    c = d["cpu_load"]
    return f"cpu_meter --at {at_ms + c['settle_ms']} --ms {c['window_ms']} --tag {proto}"


def scripts(d: dict, protocols: list[str], bandwidth=()) -> dict[int, str]:
    """Node 0 sends the streams and pings; node 1 takes them, answers, and measures its
    own load. A step's background part is waited for, and its status counts."""
    # the first IP frame to a peer may find its link down (the backplane's netdev brings its
    # pair's link up at the first frame and drops it, as Ethernet does before link-up):
    # one ping first, so that no measurement pays for ARP's retry
    node0 = ["ping -c 1 -W 5 node1 >/dev/null || { echo 'ERROR no IP path to node1'; exit 1; }"]
    node1 = []
    for proto, at in load_slots(d):
        if proto == IDLE:
            node0.append(_meter(d, proto, at))
            node1.append(_meter(d, proto, at))
            continue
        node0.append(f"cpu_meter --at {at} --ms 0 && {{ {_meter(d, proto, at)} & M=$!; "
                     f"{_stream(d, proto, 'send')} && wait $M; }}")
        node1.append(f"{{ {_stream(d, proto, 'sink')} & S=$!; {_meter(d, proto, at)} && wait $S; }}")
    for proto in protocols:
        bw = proto in bandwidth
        node0.append(PROTOCOLS[proto].client(d, bw))
        if PROTOCOLS[proto].server:
            node1.append(PROTOCOLS[proto].server(d, bw))
    echo = (f"udp_pingpong echo --port {UDP_PORT} & udp_pingpong echo --tcp --port {TCP_PORT} & ")
    return {0: " && ".join(node0), 1: echo + " && ".join(node1) + " && wait"}


def measure(name: str, net: dict, overrides: dict, art: Artifacts, d: dict) -> dict:
    machine = load_machine(net["machine"], {**net.get("set", {}), **overrides})
    bandwidth = net.get("bandwidth", [])
    result = run_measured(machine, art, scripts(d, net["protocols"], bandwidth),
                          f"{name}: CPU load ({', '.join(d['cpu_load']['protocols'])}), "
                          f"latency vs size ({', '.join(net['protocols'])})",
                          f"bench-interconnects-{name}")
    lines = {r.node: parse_results(r.node, r.lines) for r in result.nodes}
    if set(lines) != {0, 1}:
        raise StepFailed(f"{name}: results from nodes {sorted(lines)}, expected 0 and 1")
    latency = {p: {str(s): PROTOCOLS[p].latency(lines[0], s) for s in d["sizes"]}
               for p in net["protocols"]}
    load = {p: {side: results.one(lines[node], "cpu_load", program="cpu_meter",
                                  tag=p).num("busy_pct")
                for side, node in (("sender", 0), ("receiver", 1))}
            for p, _ in load_slots(d)}
    bw = {p: {str(s): PROTOCOLS[p].bandwidth(lines[0], s) for s in d["sizes"]}
          for p in bandwidth}
    return {"latency_us": latency, "bandwidth_MBps": bw, "cpu_load_pct": load,
            "parameters": machine_parameters(machine)}


def check_definition(d: dict) -> None:
    for name, net in d["networks"].items():
        unknown = set(net["protocols"]) - set(PROTOCOLS)
        if unknown:
            raise StepFailed(f"bench/interconnects.toml: network {name}: no protocol "
                             f"{', '.join(sorted(unknown))} (known: {', '.join(PROTOCOLS)})")
        no_bw = [p for p in net.get("bandwidth", [])
                 if p not in net["protocols"] or PROTOCOLS[p].bandwidth is None]
        if no_bw:
            raise StepFailed(f"bench/interconnects.toml: network {name}: bandwidth of "
                             f"{', '.join(no_bw)}: not among its protocols, or not measured "
                             f"(those with bandwidth: "
                             f"{', '.join(p for p, v in PROTOCOLS.items() if v.bandwidth)})")


def run_interconnects(overrides: dict, art: Artifacts, quick: bool) -> dict:
    d = load_definition(quick)
    check_definition(d)
    out = {"latency_us": {}, "bandwidth_MBps": {}, "cpu_load_pct": {}, "parameters": {}}
    for name, net in d["networks"].items():
        r = measure(name, net, overrides, art, d)
        for key in out:
            out[key][name] = r[key]
    out["definition"] = {k: d[k] for k in ("sizes", "reps", "warmup", "cpu_load")}
    return out


def machines(quick: bool) -> dict[str, str]:
    """What the harness checks before it builds: each network's machine."""
    return {name: net["machine"] for name, net in load_definition(quick)["networks"].items()}


def main(args, overrides: dict, sweeps) -> int:
    harness.no_sweep("interconnects", sweeps)
    for name, net in load_definition(args.quick)["networks"].items():
        load_machine(net["machine"], {**net.get("set", {}), **overrides})
    return harness.own_machines(
        args, overrides, sweeps, "interconnects",
        lambda quick: {"machines": machines(quick)},
        "the interconnect study: every network boots once", run_interconnects, table, plot)
