#!/usr/bin/env python3
"""The ledger of what has run on a GPU: every GPU test and every campaign step
with the commit, date and GPU it last passed on and its last run
(results/gpu/ledger.json, rendered as docs/gpu-ledger.md). Standard library only.

  gpu_ledger.py sync --binary ptdp_gpu_tests   the GPU tests the program lists: new ones added
                                               (never run), removed ones dropped; docs rewritten
  gpu_ledger.py check --binary ptdp_gpu_tests  exit 1 when the ledger's tests are not the program's
                                               or docs/gpu-ledger.md is not the ledger's rendering
  gpu_ledger.py record WORK --gpu h100         a campaign's unpacked work folder (tests.tsv,
                                               status.tsv, pack-manifest.json, campaign.log) merged
Exit status: 0 done or consistent, 1 inconsistent, 2 refused input (a ledger or manifest that
is not strict JSON or lacks a field: named with its JSON pointer).
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "report"))
from campaign.runner import write_atomic  # noqa: E402
from gpu_campaign import STEPS  # noqa: E402  (the campaign's steps, in order)
from gtest_driver import list_tests  # noqa: E402
from ptdp_report.load import Refused, read_document, read_json, read_or_none, require  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = "ptdp.gpu_ledger/1"


def refuse(why):
    print(f"gpu_ledger: refused: {why}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        ledger = require(read_document(path, SCHEMA), path, {"/tests": "object", "/steps": "object"}) \
            if os.path.exists(path) else {"schema": SCHEMA, "tests": {}, "steps": {}}
    except Refused as e:
        refuse(e)
    for s in STEPS:
        ledger["steps"].setdefault(s, {"last_passed": None, "last_run": None})
    return ledger


def save(ledger, path, doc):
    for p in (path, doc):
        os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
    write_atomic(path, json.dumps(ledger, indent=1, sort_keys=True) + "\n")
    write_atomic(doc, render(ledger))


def when(entry):
    if not entry:
        return "never"
    return f"{entry['date']}, {entry['commit'][:12]}, {entry['gpu']}" + (
        f" ({entry['status']})" if entry.get("status") not in (None, "passed", "ok") else "")


def render(ledger):
    tests, steps = ledger["tests"], ledger["steps"]
    passed = sum(1 for t in tests.values() if t["last_passed"])
    out = ["# What has run on a GPU: the ledger", "",
           "Written by `scripts/gpu_ledger.py` from `results/gpu/ledger.json`; do not edit by hand. A campaign's",
           "results enter it with `scripts/gpu_ledger.py record` (docs/gpu-campaign.md, \"Committing results\");",
           "a GPU test added to `tests/gpu/` enters it, as never run, with `scripts/gpu_ledger.py sync`.", "",
           f"GPU tests that have passed on a GPU: {passed} of {len(tests)}. Campaign steps that have completed on a "
           f"GPU: {sum(1 for s in steps.values() if s['last_passed'])} of {len(steps)}.", "",
           "## Campaign steps (scripts/gpu_campaign.py)", "", "| step | last completed on a GPU | last run |",
           "|---|---|---|"]
    out += [f"| {name} | {when(steps[name]['last_passed'])} | {when(steps[name]['last_run'])} |" for name in STEPS]
    out += ["", "## GPU tests (tests/gpu/, ptdp_gpu_tests)", "", "| test | last passed on a GPU | last run |",
            "|---|---|---|"]
    out += [f"| {n} | {when(t['last_passed'])} | {when(t['last_run'])} |" for n, t in sorted(tests.items())]
    return "\n".join(out) + "\n"


def table(path):
    with open(path) as f:
        lines = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    return [dict(zip(lines[0], l)) for l in lines[1:]] if lines else []


def record(ledger, work, gpu):
    manifest_path = os.path.join(work, "pack-manifest.json")
    if not os.path.isfile(manifest_path):
        refuse(f"{work}: no pack-manifest.json (not a campaign's work folder)")
    try:
        manifest = read_json(manifest_path)
    except Refused as e:
        refuse(e)
    commit = (manifest.get("commit") if isinstance(manifest, dict) else None) or "unknown"
    env = read_or_none(os.path.join(work, "env.json"))
    if not isinstance(env, dict):
        refuse(f"{work}: no env.json (the campaign's env step did not run)")
    if env.get("device") != "cuda" or not env.get("gpu"):
        refuse(f"{work}: a campaign without a GPU (device {env.get('device')}, GPU {env.get('gpu')}): nothing ran on one")
    date = (env.get("date") or "unknown")[:10]
    stamp = {"commit": commit, "date": date, "gpu": gpu}
    recorded = 0
    if os.path.isfile(os.path.join(work, "tests.tsv")):
        for row in table(os.path.join(work, "tests.tsv")):
            if row["status"] == "not-run":
                continue
            t = ledger["tests"].setdefault(row["test"], {"last_passed": None, "last_run": None})
            t["last_run"] = dict(stamp, status=row["status"])
            if row["status"] == "passed":
                t["last_passed"] = dict(stamp, status="passed")
            recorded += 1
    for row in table(os.path.join(work, "status.tsv")) if os.path.isfile(os.path.join(work, "status.tsv")) else []:
        if row["step"] not in ledger["steps"] or row["status"] == "skipped":
            continue
        s = ledger["steps"][row["step"]]
        s["last_run"] = dict(stamp, status=row["status"])
        if row["status"] == "ok":
            s["last_passed"] = dict(stamp, status="ok")
        recorded += 1
    return recorded


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ledger", default=os.path.join(ROOT, "results", "gpu", "ledger.json"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "gpu-ledger.md"))
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ("sync", "check"):
        sub.add_parser(name).add_argument("--binary", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("work")
    rec.add_argument("--gpu", required=True, help="the GPU's short name, as in results/gpu/<gpu>/ (h100, h200)")
    args = ap.parse_args()
    ledger = load(args.ledger)
    if args.command == "record":
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,31}", args.gpu):
            refuse("--gpu: a short lower-case name such as h100")
        n = record(ledger, args.work, args.gpu)
        save(ledger, args.ledger, args.doc)
        print(f"gpu_ledger: {n} tests and steps recorded from {args.work}")
        return 0
    names = list_tests(args.binary, "")
    if args.command == "sync":
        ledger["tests"] = {n: ledger["tests"].get(n, {"last_passed": None, "last_run": None}) for n in names}
        save(ledger, args.ledger, args.doc)
        print(f"gpu_ledger: {len(names)} GPU tests in the ledger")
        return 0
    problems = []
    if set(names) != set(ledger["tests"]):
        missing, stale = sorted(set(names) - set(ledger["tests"])), sorted(set(ledger["tests"]) - set(names))
        problems.append(f"the ledger lacks {missing[:5]} and holds removed {stale[:5]}: run scripts/gpu_ledger.py sync")
    try:
        with open(args.doc) as f:
            if f.read() != render(ledger):
                problems.append(f"{args.doc} is not the rendering of {args.ledger}: run scripts/gpu_ledger.py sync")
    except OSError:
        problems.append(f"{args.doc} is missing")
    for p in problems:
        print(f"gpu_ledger: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
