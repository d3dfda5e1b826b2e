"""A run's timeline in the Chrome trace event format (Perfetto, chrome://tracing): the
fabric's frame trace (fabric-trace.txt) and the boards' QEMU trace events (nodeN-trace.txt),
in virtual time, written as timeline.json in the run directory (docs/fabric.md)."""
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

TIMELINE = "timeline.json"
BROADCAST = 4294967295          # a broadcast's dst in the frame trace
# an arrival is an instant: its slice on the receiver lasts this long (ns) so that the
# flow's end has a slice to bind to ("bp": "e")
ARRIVAL_NS = 1
NETWORK_PID = 1000              # network k is process NETWORK_PID + k; node n is n + 1

# fabric/core/main.c fabric_trace(): "<t> <event> src=<id> dst=<id> len=<n> seq=<n>[ net=<id>]"
FABRIC_LINE = re.compile(r"(\d+) (\S+) src=(\d+) dst=(\d+) len=(\d+) seq=(\d+)(?: net=(\d+))?")
# qemu/trace-events: "<name> node <n>: ... at <ns>..." (the log backend may put
# "<pid>@<seconds>:" before the name); the first "at <ns>" is the event's virtual time
QEMU_LINE = re.compile(r"(retrolink_\w+) (.*)")
QEMU_TIME = re.compile(r"\bat (\d+)\b")


@dataclass
class Frame:
    """One frame of the fabric trace: its sender's ready, start(s), arrival(s) or drop."""
    net: int
    src: int
    dst: int
    length: int
    seq: int
    ready: int | None = None
    starts: list = field(default_factory=list)
    arrivals: list = field(default_factory=list)        # (time, receiver)
    drop: tuple | None = None                           # (time, reason)
    first: int = 0

    def begin(self) -> int:
        return self.ready if self.ready is not None else self.first

    def end(self) -> int:
        times = self.starts + [t for t, _ in self.arrivals] + ([self.drop[0]] if self.drop else [])
        return max([self.begin()] + times)


class Tracks:
    """Processes and their threads, a thread per lane: slices on one thread never overlap
    (a sender's frames do: the next one is ready before the last has arrived)."""

    def __init__(self):
        self.events: list[dict] = []
        self.lanes: dict[tuple, list] = {}      # (pid, name) -> [(tid, busy until)]
        self.next_tid: dict[int, int] = {}

    def process(self, pid: int, name: str, order: int) -> None:
        self.events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                            "args": {"name": name}})
        self.events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                            "args": {"sort_index": order}})

    def thread(self, pid: int, name: str, begin: int | None = None, end: int = 0) -> int:
        """The first thread named name (then 'name (2)', ...) free from begin on (with no
        begin, for instants: the first)."""
        lanes = self.lanes.setdefault((pid, name), [])
        for i, (tid, busy) in enumerate(lanes):
            if begin is None:
                return tid
            if busy <= begin:
                lanes[i] = (tid, max(busy, end))
                return tid
        # tids unique across processes: Perfetto takes a tid for one thread, as Linux does
        tid = self.next_tid[pid] = self.next_tid.get(pid, pid * 1000) + 1
        lanes.append((tid, end))
        label = name if len(lanes) == 1 else f"{name} ({len(lanes)})"
        self.events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                            "args": {"name": label}})
        self.events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                            "args": {"sort_index": tid - pid * 1000}})
        return tid

    def slice(self, pid: int, thread: str, name: str, begin: int, end: int,
              args: dict) -> tuple[int, int]:
        end = max(end, begin + ARRIVAL_NS)
        tid = self.thread(pid, thread, begin, end)
        self.events.append({"ph": "X", "cat": "frame", "name": name, "pid": pid, "tid": tid,
                            "ts": us(begin), "dur": us(end - begin), "args": args})
        return pid, tid


def us(ns: int) -> float:
    return ns / 1000.0


def read_frames(text: str) -> tuple[list[Frame], list[tuple], int]:
    """The frames of a fabric trace, its hub events (collision, notice) and the number of
    lines not understood (a fabric killed mid-line leaves a partial last one)."""
    frames: dict[tuple, Frame] = {}
    others, bad = [], 0
    for line in text.splitlines():
        m = FABRIC_LINE.fullmatch(line.strip())
        if not m:
            bad += bool(line.strip())
            continue
        t, what, src, dst, length, seq = (int(m[1]), m[2], int(m[3]), int(m[4]),
                                          int(m[5]), int(m[6]))
        net = int(m[7] or 0)
        if what in ("collision", "notice"):
            others.append((t, what, net, src, dst, length))
            continue
        fr = frames.get((net, src, seq))
        if fr is None:
            fr = frames[(net, src, seq)] = Frame(net, src, dst, length, seq, first=t)
        if what == "ready":
            fr.ready, fr.dst = t, dst
        elif what == "start":
            fr.starts.append(t)
        elif what == "arrive":
            fr.arrivals.append((t, dst))
        elif what.startswith("drop:"):
            fr.drop = (t, what.removeprefix("drop:"))
        else:
            bad += 1
    return list(frames.values()), others, bad


def read_qemu_events(text: str) -> tuple[list[tuple], int]:
    """(virtual ns, event name, message) of a node's QEMU trace; and how many events were
    skipped, having no virtual time."""
    events, skipped = [], 0
    for line in text.splitlines():
        m = QEMU_LINE.search(line)
        if not m:
            continue
        t = QEMU_TIME.search(m[2])
        if t:
            events.append((int(t[1]), m[1], m[2]))
        else:
            skipped += 1
    return events, skipped


def frame_name(fr: Frame) -> str:
    if fr.drop:
        return f"drop:{fr.drop[1]}"
    return "broadcast" if fr.dst == BROADCAST else f"to node {fr.dst}"


def build(fabric_text: str, node_texts: dict[int, str],
          network_names: dict[int, str] | None = None) -> tuple[dict, dict]:
    """The timeline (a JSON object) and counts of what it holds."""
    frames, others, bad = read_frames(fabric_text)
    qemu = {n: read_qemu_events(text) for n, text in sorted(node_texts.items())}
    tr = Tracks()
    nodes = {fr.src for fr in frames} | {n for fr in frames for _, n in fr.arrivals}
    nodes |= {o[3] for o in others} | set(qemu)
    for n in sorted(nodes):
        tr.process(n + 1, f"node {n}", n)
    for net in sorted({fr.net for fr in frames} | {o[2] for o in others}):
        name = (network_names or {}).get(net)
        tr.process(NETWORK_PID + net, f"network {net}" + (f" ({name})" if name else ""),
                   NETWORK_PID + net)
    arrivals = []
    for fr in sorted(frames, key=lambda f: (f.begin(), f.net, f.src, f.seq)):
        args = {"src": fr.src, "dst": fr.dst, "len": fr.length, "seq": fr.seq, "net": fr.net,
                "ready_ns": fr.ready, "start_ns": fr.starts,
                "arrive_ns": [t for t, _ in fr.arrivals]}
        if fr.drop:
            args["drop_ns"] = fr.drop[0]
        pid, tid = tr.slice(NETWORK_PID + fr.net, f"node {fr.src} sends", frame_name(fr),
                            fr.begin(), fr.end(), args)
        for t, receiver in fr.arrivals:
            flow = {"cat": "frame", "name": "frame", "id": len(arrivals) + 1}
            # after its slice: at one instant, the slice opens before the flow binds
            tr.events.append({**flow, "ph": "s", "pid": pid, "tid": tid, "ts": us(fr.begin())})
            arrivals.append((t, receiver, fr, flow))
    for t, receiver, fr, flow in sorted(arrivals, key=lambda a: (a[0], a[1], a[3]["id"])):
        pid, tid = tr.slice(receiver + 1, "frames in", f"from node {fr.src}", t, t,
                            {"src": fr.src, "len": fr.length, "seq": fr.seq, "net": fr.net,
                             "arrive_ns": t})
        tr.events.append({**flow, "ph": "f", "bp": "e", "pid": pid, "tid": tid, "ts": us(t)})
    for t, what, net, src, dst, length in others:
        tid = tr.thread(NETWORK_PID + net, f"node {src} sends")
        tr.events.append({"ph": "i", "s": "t", "cat": "hub", "name": what,
                          "pid": NETWORK_PID + net, "tid": tid, "ts": us(t),
                          "args": {"src": src, "dst": dst, "len": length}})
    instants = skipped = 0
    for n, (events, missing) in qemu.items():
        skipped += missing
        tid = tr.thread(n + 1, "QEMU trace events") if events else 0
        for t, name, message in events:
            tr.events.append({"ph": "i", "s": "t", "cat": "qemu", "name": name, "pid": n + 1,
                              "tid": tid, "ts": us(t), "args": {"message": message}})
            instants += 1
    counts = {"frames": len(frames), "flows": len(arrivals), "qemu_events": instants,
              "qemu_events_without_time": skipped, "lines_not_understood": bad}
    return {"traceEvents": tr.events, "displayTimeUnit": "ns",
            "otherData": {"clock": "virtual time", **counts}}, counts


def network_names(run_dir: Path) -> dict[int, str]:
    """Network names from the fabric's stats, when it wrote them."""
    try:
        stats = json.loads((run_dir / "fabric-stats.json").read_text())
        return {int(n["id"]): str(n["name"]) for n in stats.get("networks", [])}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def write(run_dir: Path) -> tuple[Path, dict]:
    """Write run_dir/timeline.json from its fabric-trace.txt and nodeN-trace.txt."""
    nodes = {}
    for p in run_dir.glob("node*-trace.txt"):
        if m := re.fullmatch(r"node(\d+)-trace\.txt", p.name):
            nodes[int(m[1])] = p.read_text(errors="replace")
    timeline, counts = build((run_dir / "fabric-trace.txt").read_text(errors="replace"),
                             nodes, network_names(run_dir))
    out = run_dir / TIMELINE
    out.write_text(json.dumps(timeline, separators=(",", ":")) + "\n")
    return out, counts
