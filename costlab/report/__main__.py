"""Build the report outside Snakemake from whatever is in results/ (for timing it, or a quick look).

.venv/bin/python -m costlab.report [--configfile config/smoke.yaml] [--results results] [--out
results/report.html]
"""
from __future__ import annotations

import argparse
import sys

from costlab.config import load_config
from costlab.report.page import build_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m costlab.report", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--configfile", action="append", default=[], help="config file(s) on top of the defaults"
    )
    parser.add_argument("--results", default="results", help="results folder (default: results)")
    parser.add_argument("--out", default="results/report.html", help="page to write")
    args = parser.parse_args(argv)
    config = load_config(*args.configfile)
    summary = build_report(args.results, args.out, config)
    for problem in summary.problems:
        print(f"warning: {problem}", file=sys.stderr)
    states = ", ".join(f"{study} {state}" for study, state in summary.studies.items())
    print(f"wrote {summary.path} in {summary.seconds:.2f} s ({states})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
