"""Measure the appversions engine lab's run-to-run spread at a config's scale, once, and keep it
(costlab/engine/spread.py says what it is for):

    .venv/bin/python -m costlab.appversions.spread --configfile config/smoke.yaml --runs 5

runs every published version's engine job (repeat 1: the same events every time) `--runs` times and keeps
each run's storage / data, stored bytes and appV6R4 / appV6R3's stored bytes in
resources/engine_spread/appversions.csv, beside the scales measured before.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from costlab.appversions.params import EngineVersionParams
from costlab.appversions.registry import PUBLISHED_NAMES
from costlab.config import load_config, run_facts
from costlab.engine.spread import SEPARATOR, scale_key, spread_path, write_spreads


def measure(config: dict, runs: int, versions: list[str], command: str) -> list[dict]:
    from costlab.appversions.engine import ZSTD_PAIR, run_version_job  # noqa: PLC0415  heavy: multiprocessing (the load test's workers): a module that starts none stays without it

    params, facts = EngineVersionParams.from_config(config), run_facts(config, "appversions")
    rows: dict[str, list[dict]] = {v: [] for v in versions}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            for name in versions:
                record = run_version_job(params, facts, name, Path(tmp) / f"{name}_{run}.json", rep=1)
                rows[name].append(record["row"])
                print(f"run {run + 1}/{runs} {name}: {record['row']['storage_bytes']:,} B", file=sys.stderr)
    measured_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    per_year = int(config["engine"]["appversions"]["events_per_year"])

    def kept(version: str, column: str, values, storage, scale: str) -> dict:
        return {"scale": scale, "version": version, "column": column, "runs": len(values),
                "values": SEPARATOR.join(f"{v:.6g}" for v in values),
                "storage_values": SEPARATOR.join(f"{v:.0f}" for v in storage),
                "events_per_year": per_year, "measured_at": measured_at, "command": command}

    out = []
    for name, found in rows.items():
        scales = {scale_key(r) for r in found}
        assert len(scales) == 1, scales   # identical runs: one scale
        out.append(kept(name, "storage_over_data", [r["storage_bytes"] / r["data_bytes"] for r in found],
                        [r["storage_bytes"] for r in found], scales.pop()))
    if "appV6R4" in rows and "appV6R3" in rows:
        pairs = list(zip(rows["appV6R4"], rows["appV6R3"]))
        ratios = [a["storage_bytes"] / b["storage_bytes"] for a, b in pairs]
        out.append(kept(ZSTD_PAIR, "storage_bytes_ratio", ratios, [], scale_key(rows["appV6R4"][0])))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", nargs="*", default=[])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--versions", nargs="*", default=list(PUBLISHED_NAMES))
    args = parser.parse_args(argv)
    config = load_config(*args.configfile)
    files = f" --configfile {' '.join(args.configfile)}" if args.configfile else ""
    command = f"python -m costlab.appversions.spread{files} --runs {args.runs}"
    write_spreads(measure(config, args.runs, args.versions, command), spread_path("appversions"))
    print(f"kept in {spread_path('appversions')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
