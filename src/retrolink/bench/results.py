"""RESULT lines printed by in-guest benchmark programs: `RESULT <name> key=value ...`."""
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


def load_definition(path, quick: bool) -> tuple[dict, dict | None]:
    """A benchmark definition (bench/*.toml); with quick, its [quick] sizes and latency
    iterations replace the full ones, and the [quick] table is returned for the rest."""
    import tomllib
    d = tomllib.loads(path.read_text())
    if not quick:
        return d, None
    q = d["quick"]
    d["sizes"] = q["sizes"]
    d["latency"] = {"iters": q["iters"], "warmup": q["warmup"]}
    return d, q


def csv(values) -> str:
    return ",".join(str(v) for v in values)
