"""The one reader of ptdp's JSON files in Python: results, sweep results, histories, benchmarks,
traces, configs and ledgers, for the report and every script (scripts/, scripts/campaign/).

Parsing is as strict as core/config/json_read.cpp: a key twice in one object, NaN or Infinity,
a number that overflows a double, or JSON that does not parse is refused (Refused, naming the
file, the field's JSON pointer and the rule); readers ignore fields they do not know.
Standard library only: the GPU campaign imports it where there is no matplotlib or numpy.
"""
import gzip
import json
import math
import re
import sys
from dataclasses import dataclass, field as dataclass_field
from pathlib import Path

SWEEP_RESULTS = "ptdp.sweep-results/1"
CPU_VS_PYTORCH = "ptdp.cpu-vs-pytorch/1"  # endtoend/cpu_vs_pytorch.py's record
# Files ptdp writes next to sweep results that the report does not draw as sweeps.
COMPANIONS = ("ptdp.validation/1", "ptdp.compare/1", "ptdp.compare/2", "ptdp.history/1", "ptdp.ablation/1",
              "ptdp.closure/1", CPU_VS_PYTORCH)


def number(x):
    """x as a float when it is a finite number (not a bool), else None."""
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    return float(x) if ok else None


class Refused(ValueError):
    """Input refused: "FILE: /json/pointer: rule", as core/config/json_read.h's JsonRefused."""

    def __init__(self, source, pointer, rule):
        super().__init__(f"{source}: {pointer}: {rule}" if pointer else f"{source}: {rule}")
        self.source, self.pointer, self.rule = str(source), pointer, rule


def pointer_of(path):
    """The JSON pointer of a path of keys and indices (RFC 6901: "~" and "/" escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


class _Twice(dict):
    """An object that held `key` twice; found again after parsing to name its pointer."""

    def __init__(self, pairs, key):
        super().__init__(pairs)
        self.key = key


def _first_twice(value, path=()):
    """(pointer, key) of the first _Twice in value, or None."""
    if isinstance(value, _Twice):
        return pointer_of(path), value.key
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _first_twice(v, path + (k,))
        if found:
            return found
    return None


def _refuse_constant(token):
    raise ValueError(f"the number {token} is not JSON")


def _finite(text):
    x = float(text)
    if number(x) is None:
        raise ValueError(f"the number {text} overflows a double")
    return x


def _null(token):
    return None


def parse_json(text, source, nan_as_null=False):
    """The value of JSON `text` (from `source`, named in the refusal). nan_as_null: a bare NaN or
    Infinity is read as null, as core/sim/calibrate.cpp reads Google Benchmark's output (it writes
    a statistic it cannot compute so)."""
    twice = []

    def pairs_hook(pairs):
        keys = set()
        for k, _ in pairs:
            if k in keys:
                twice.append(k)
                return _Twice(pairs, k)
            keys.add(k)
        return dict(pairs)

    try:
        value = json.loads(text, object_pairs_hook=pairs_hook, parse_float=_finite,
                           parse_constant=_null if nan_as_null else _refuse_constant)
    except RecursionError:
        raise Refused(source, "", "nests too deep") from None
    except ValueError as e:
        raise Refused(source, "", f"not valid JSON: {e}") from None
    if twice:
        pointer, key = _first_twice(value)
        raise Refused(source, pointer, f"the key {json.dumps(key)} appears twice in one object")
    return value


def read_json(path, nan_as_null=False):
    """The value of the JSON file at path (gzip-compressed when it ends in .gz); Refused when it
    is missing, unreadable or not strict JSON (parse_json's nan_as_null aside)."""
    try:
        if str(path).endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                text = f.read()
        else:
            text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise Refused(path, "", "no such file") from None
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise Refused(path, "", f"cannot be read: {e}") from None
    return parse_json(text, path, nan_as_null)


def read_or_none(path):
    """The value of the JSON file at path, or None when it is missing or not strict JSON: for
    outputs a step may have left unwritten or cut short (the GPU campaign's "no readable result")."""
    try:
        return read_json(path)
    except Refused:
        return None


# What a field must hold, by name; numbers are finite and not booleans.
KINDS = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
         "string": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool),
         "number": lambda v: number(v) is not None,
         "object or null": lambda v: v is None or isinstance(v, dict),
         "number or null": lambda v: v is None or number(v) is not None}


def field(value, pointer, source, kind=None):
    """The value at JSON `pointer` ("/metrics/iteration_s/median") inside `value`, read from
    `source`; Refused naming the pointer when a step is missing or the value is not of `kind`
    (a name in KINDS; None: anything)."""
    at = value
    for step in pointer.split("/")[1:]:
        step = step.replace("~1", "/").replace("~0", "~")
        if isinstance(at, dict) and step in at:
            at = at[step]
        elif isinstance(at, list) and step.isdigit() and int(step) < len(at):
            at = at[int(step)]
        else:
            raise Refused(source, pointer, "missing")
    if kind is not None and not KINDS[kind](at):
        raise Refused(source, pointer, f"must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}")
    return at


def _expand(value, pointer, source):
    """The pointers `pointer` names in value, its "*" steps each every element or member there."""
    head, star, tail = pointer.partition("/*")
    if not star:
        return [pointer]
    found = field(value, head, source)
    keys = range(len(found)) if isinstance(found, list) else found if isinstance(found, dict) else None
    if keys is None:
        raise Refused(source, head, "must be an array or object")
    return [p for k in keys for p in _expand(value, f"{head}{pointer_of([k])}{tail}", source)]


def require(doc, source, fields):
    """doc, Refused unless every {pointer: kind} of `fields` holds (field's rules; a "*" step
    stands for every element of an array or member of an object)."""
    for pointer, kind in fields.items():
        for each in _expand(doc, pointer, source):
            field(doc, each, source, kind)
    return doc


def read_document(path, schema):
    """A JSON object whose "schema" is `schema`, from path; Refused otherwise."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise Refused(path, "", "must be a JSON object")
    if doc.get("schema") != schema:
        raise Refused(path, "/schema", f"{doc.get('schema')!r} is not {schema!r}")
    return doc


def read_optional(path, schema):
    """read_document(path, schema), or None when there is no file at path (a report section
    whose results were not made)."""
    return read_document(path, schema) if Path(path).exists() else None


def read_result(path):
    """One run's result (ptdp.result/N, or a baseline's in its format): an object with metrics."""
    doc = read_json(path)
    field(doc, "/metrics", path, "object")
    return doc


def check_sweep_results(doc, path):
    """doc (a ptdp.sweep-results/1 document read from path) as the report and closure read it:
    sweep.name a string, points an array of objects, each result an object or null."""
    require(doc, path, {"/sweep/name": "string", "/points": "array", "/points/*": "object"})
    for i, point in enumerate(doc["points"]):
        if "result" in point:
            field(doc, f"/points/{i}/result", path, "object or null")
    return doc


def read_sweep_results(path):
    """One ptdp.sweep-results/1 file (docs/results-format.md), checked as check_sweep_results."""
    return check_sweep_results(read_document(path, SWEEP_RESULTS), path)


def read_benchmarks(path):
    """Google Benchmark's JSON output (ptdp_bench_kernels --benchmark_out): each run named."""
    return require(read_json(path, nan_as_null=True), path, {"/benchmarks/*/name": "string"})


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
    header: dict                                           # the "sweep" object of the file
    points: list = dataclass_field(default_factory=list)   # point records (dicts), index order
    sources: list = dataclass_field(default_factory=list)  # Source, one per file
    derived_from: str | None = None                        # name of the sweep this one is computed from

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


def read_results_file(path, warn):
    """The checked document when `path` is a sweep-results file; None for ptdp's companion files
    and (with a warning) files of another schema. Refused when it is not strict JSON or a
    sweep-results file the report cannot read."""
    doc = read_json(path, nan_as_null=True)  # the folder holds Google Benchmark's outputs too
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema in COMPANIONS:  # ptdp's own summaries that live beside the results
        return None
    if schema != SWEEP_RESULTS:
        warn(f"skipping {path}: schema {schema!r} is not {SWEEP_RESULTS!r}")
        return None
    return check_sweep_results(doc, path)


def _point_order(point):
    index = point.get("index")
    return (index if isinstance(index, (int, float)) else float("inf"), str(point.get("mode")))


def _merge(sweep, doc, source):
    """Adds a file's points; a point whose key is already there is replaced (newer file wins)."""
    by_key = {p.get("key"): i for i, p in enumerate(sweep.points) if p.get("key")}
    for point in doc["points"]:
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
        name = header["name"]
        sweep = sweeps.setdefault(name, Sweep(name, header))
        sweep.header = header                                        # the newest file's header
        software = doc.get("software") if isinstance(doc.get("software"), dict) else {}
        _merge(sweep, doc, Source(rel, software.get("commit"), doc.get("updated")))
    for sweep in sweeps.values():
        sweep.points.sort(key=_point_order)
    return [sweeps[name] for name in sorted(sweeps)]


def main(argv):
    """`load.py get FILE POINTER [DEFAULT]`: one field of a JSON file for a shell script, printed
    as it is when a string, as JSON otherwise; DEFAULT when the field is missing (given), else
    exit 2 naming the file and the field, as for any refused file."""
    if len(argv) not in (3, 4) or argv[0] != "get":
        print("usage: load.py get FILE POINTER [DEFAULT]", file=sys.stderr)
        return 2
    try:
        doc = read_json(argv[1])
        try:
            value = field(doc, argv[2], argv[1])
        except Refused:
            if len(argv) == 3:
                raise
            value = argv[3]
    except Refused as e:
        print(f"load.py: {e}", file=sys.stderr)
        return 2
    print(value if isinstance(value, str) else json.dumps(value))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
