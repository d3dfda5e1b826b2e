"""What every benchmark's results are made of: the RESULT lines printed by in-guest
benchmark programs (`RESULT <name> key=value ...`), its definition (bench/*.toml) and the
parameters of the machines it measured."""
import re
from dataclasses import dataclass, field

LINE = re.compile(r"^RESULT (\S+)((?: \S+=\S+)*)\s*$")


@dataclass
class Result:
    node: int
    name: str
    fields: dict = field(default_factory=dict)

    def num(self, key: str) -> float:
        return float(self.fields[key])


def parse_results(node: int, lines: list[str]) -> list[Result]:
    out = []
    for line in lines:
        m = LINE.match(line.strip())
        if m:
            fields = dict(kv.split("=", 1) for kv in m.group(2).split())
            out.append(Result(node, m.group(1), fields))
    return out


def find(results: list[Result], name: str, **match) -> list[Result]:
    return [r for r in results if r.name == name
            and all(r.fields.get(k) == str(v) for k, v in match.items())]


def one(results: list[Result], name: str, *, program: str, **match) -> Result:
    """The one `RESULT name` line with those fields; a benchmark that finds none (or
    several) stops, naming the guest program that should have printed it."""
    from retrolink.progress import StepFailed
    found = find(results, name, **match)
    if len(found) != 1:
        raise StepFailed(f"{program} printed {len(found) or 'no'} {name} results for "
                         + ", ".join(f"{k}={v}" for k, v in match.items()) + " (one expected)")
    return found[0]


def load_definition(path, quick: bool) -> dict:
    """A benchmark definition (bench/*.toml); with quick, each value of its [quick] table
    replaces the value of that name at the top and in every table that has one (a [quick]
    `count` sets [throughput] count and [rates] count)."""
    import tomllib
    d = tomllib.loads(path.read_text())
    if not quick:
        return d
    for key, value in d["quick"].items():
        tables = [t for t in d.values() if isinstance(t, dict) and key in t]
        if key in d:
            d[key] = value
        elif not tables:
            raise ValueError(f"{path}: [quick] {key} replaces no value of that name")
        for table in tables:
            table[key] = value
    return d


def machine_parameters(m) -> dict:
    """What a result records of the machine it was measured on (a model.machine.Machine)."""
    return {"machine": m.cluster.name, "arch": m.cluster.arch, "nodes": m.cluster.nodes,
            "cpu_mips": m.cluster.cpu_mips,
            "cpu_mips_per_node": m.cluster.cpu_mips_per_node,
            "boards": {k: b.model_dump() for k, b in m.boards.items()},
            "networks": {k: n.model_dump() for k, n in m.networks.items()}}


def csv(values) -> str:
    return ",".join(str(v) for v in values)
