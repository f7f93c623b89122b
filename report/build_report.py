#!/usr/bin/python3
"""ptdp's report: one figure per sweep and report.md, from ptdp.sweep-results/1 files.

Usage: /usr/bin/python3 report/build_report.py --results DIR [--out DIR] [--reference FILE]
Exit status: 0 written, 1 no sweep results found, 2 input refused (no such folder, or a file
that is not strict JSON or misses a field the report needs: named with the field's JSON pointer).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ptdp_report import derive, figures, markdown  # noqa: E402
from ptdp_report.layouts import report_order  # noqa: E402
from ptdp_report.load import Refused, load_sweeps, read_json, warn_stderr  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "out"
DEFAULT_REFERENCE = HERE / "reference" / "megatron-sc21.json"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", required=True, type=Path,
                        help="folder searched recursively for *.json sweep results")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"folder for the PNGs and report.md (default {DEFAULT_OUT})")
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE,
                        help="the paper's published numbers (Figure 8's, for the derived figure)")
    return parser.parse_args(argv)


def build(args):
    """Reads the results and writes the figures and report.md; Refused on malformed input."""
    sweeps = load_sweeps(args.results)
    if not sweeps:
        print(f"error: no ptdp.sweep-results/1 files under {args.results}", file=sys.stderr)
        return 1
    sweeps = derive.with_figure8(sweeps, read_json(args.reference), warn_stderr)
    sweeps.sort(key=report_order)
    args.out.mkdir(parents=True, exist_ok=True)
    for sweep in sweeps:
        figures.draw_sweep(sweep, args.out)
    report = markdown.write_report(sweeps, args.out, args.results)
    print(f"report: {len(sweeps)} experiment(s), {report}")
    return 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if not args.results.is_dir():
        print(f"error: --results {args.results}: no such folder", file=sys.stderr)
        return 2
    try:
        return build(args)
    except Refused as e:
        print(f"error: refused: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
