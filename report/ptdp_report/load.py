"""Reading ptdp.sweep-results/1 files (docs/results-format.md) and grouping them by sweep.

Holds the Sweep record that figures and report.md are drawn from, and small accessors
for points (metric paths, plan fields, labels and series in index order).
Readers ignore fields they do not know; files of another schema are skipped with a warning.
"""
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA = "ptdp.sweep-results/1"


@dataclass
class Source:
    """One results file a sweep was read from."""
    path: str              # relative to the results folder
    commit: str | None     # software.commit of the runner
    updated: str | None    # the file's "updated" time stamp


@dataclass
class Sweep:
    """The points of one sweep (keyed by sweep.name), merged over its files, in index order."""
    name: str
    header: dict                                  # the "sweep" object of the file
    points: list = field(default_factory=list)    # point records (dicts), index order
    sources: list = field(default_factory=list)   # Source, one per file
    derived_from: str | None = None               # name of the sweep this one is computed from

    @property
    def slug(self):
        """The name made safe as a file name (the figure is <slug>.png)."""
        return re.sub(r"[^A-Za-z0-9_.-]", "_", self.name).lstrip(".") or "sweep"

    @property
    def reproduces(self):
        return self.header.get("reproduces") or self.name

    @property
    def metric(self):
        for p in self.points:
            if p.get("metric"):
                return p["metric"]
        return self.header.get("metric") or ""


def warn_stderr(message):
    """Default warning sink: one line on stderr."""
    print(f"warning: {message}", file=sys.stderr)


# Files ptdp writes next to sweep results that the report does not draw.
COMPANIONS = ("ptdp.validation/1", "ptdp.compare/1", "ptdp.compare/2", "ptdp.history/1", "ptdp.ablation/1",
              "ptdp.closure/1")


def read_results_file(path, warn):
    """The parsed document when `path` is a sweep-results file, else None (with a warning)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        warn(f"skipping {path}: not readable JSON ({str(e).splitlines()[0]})")
        return None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema in COMPANIONS:  # ptdp's own summaries that live beside the results
        return None
    if schema != SCHEMA:
        warn(f"skipping {path}: schema {schema!r} is not {SCHEMA!r}")
        return None
    if not isinstance(doc.get("sweep"), dict) or not doc["sweep"].get("name"):
        warn(f"skipping {path}: no sweep.name")
        return None
    return doc


def _point_order(point):
    index = point.get("index")
    return (index if isinstance(index, (int, float)) else float("inf"), str(point.get("mode")))


def _merge(sweep, doc, source):
    """Adds a file's points; a point whose key is already there is replaced (newer file wins)."""
    by_key = {p.get("key"): i for i, p in enumerate(sweep.points) if p.get("key")}
    for point in doc.get("points") or []:
        if not isinstance(point, dict):
            continue
        key = point.get("key") if isinstance(point.get("key"), str) else None
        if key in by_key:
            sweep.points[by_key[key]] = point
        else:
            sweep.points.append(point)
    sweep.sources.append(source)


def load_sweeps(results_dir, warn=warn_stderr):
    """Every sweep found under results_dir (recursively), merged by sweep.name, sorted by name."""
    root = Path(results_dir)
    docs = []
    for path in sorted(root.rglob("*.json")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue                          # hidden: e.g. ptdp sweep's .<name>.work/ folders
        doc = read_results_file(path, warn)
        if doc is not None:
            docs.append((path.relative_to(root).as_posix(), doc))
    docs.sort(key=lambda item: str(item[1].get("updated") or ""))   # older first: newer points win
    sweeps = {}
    for rel, doc in docs:
        header = doc["sweep"]
        name = str(header["name"])
        sweep = sweeps.setdefault(name, Sweep(name, header))
        sweep.header = header                                        # the newest file's header
        software = doc.get("software") if isinstance(doc.get("software"), dict) else {}
        _merge(sweep, doc, Source(rel, software.get("commit"), doc.get("updated")))
    for sweep in sweeps.values():
        sweep.points.sort(key=_point_order)
    return [sweeps[name] for name in sorted(sweeps)]


def lookup(obj, dotted):
    """obj["a"]["b"] for "a.b"; None when a step is missing."""
    for part in dotted.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def number(x):
    """x as a float when it is a finite number (not a bool), else None."""
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    return float(x) if ok else None


def result_metric(point, dotted):
    """A number from the point's result.metrics ("iteration_s.median", "bubble.measured")."""
    return number(lookup(point.get("result"), "metrics." + dotted))


def plan_field(point, name):
    """A plan field of the point: from its result's resolved plan, else its overrides."""
    value = lookup(point.get("result"), "plan." + name)
    if value is None and isinstance(point.get("overrides"), dict):
        value = point["overrides"].get("plan." + name)
    return value


def ordered_unique(values):
    """values without repeats, in first-seen order."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def label_of(point):
    """The point's x position or category, as text ("" when missing)."""
    return "" if point.get("label") is None else str(point["label"])


def series_name(point):
    """The curve the point belongs to, as text ("" when missing)."""
    return "" if point.get("series") is None else str(point["series"])


def labels_of(points):
    return ordered_unique(map(label_of, points))


def series_of(points):
    return ordered_unique(map(series_name, points))
