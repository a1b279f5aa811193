"""Compare runs: other results trees (`compare.with`) beside this one in the report.

Each run is labelled from its provenance (server version, host). Every published-vs-reproduced
row gets a reproduced and a verdict column per run; each study's main measurement is drawn
with the runs overlaid, one colour per run; a run made with another scale or server config is
named with the keys that differ, each study's read from its own jobs' provenance (`study_config`), not from
the tree's run.json (a later run of other studies rewrites it). Trees are checked with
costlab.report.runs.check_tree first.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl

from costlab.config import SERVER_HASH_KEYS, config_hash, study_config_hash
from costlab.digests import EDITED_TEXT, edited_reason
from costlab.finding import read_samples
from costlab.intervals import adjusted_pvalues, compare_runs
from costlab.published import PUBLISHED_DIR
from costlab.registry import REGISTRY
from costlab.report.charts import ENGINE_LABEL, coincidence_note, coincident_series, titled
from costlab.report.runs import check_tree, read_manifest, results_dir
from costlab.report.settings import concerns, flatten
from costlab.server.provenance import is_stand_in
from costlab.study import EngineOverlay, Overlay

THIS_RUN = "this run"
KEYS = ("finding", "metric")
# Each run's verdict tables, compared row by row: a server run's, the engine lab's, the server-free model's.
VERDICT_TABLES = {"server": Path("tables") / "published_vs_reproduced.csv",
                  "engine": Path("engine") / "published_vs_engine.csv",
                  "model": Path("model") / "published_vs_model.csv"}


@dataclass
class Run:
    name: str
    folder: Path
    manifest: dict
    provenance: dict[str, list[dict]] = field(default_factory=dict)  # study -> records
    label: str = ""
    # study -> its engine-lab jobs' records (results/<study>/engine/**/provenance*.json)
    engine_provenance: dict[str, list[dict]] = field(default_factory=dict)

    @property
    def stand_in(self) -> bool:
        return any(is_stand_in(r) for records in self.provenance.values() for r in records)


# Each study's main measurement and its engine lab's, drawn for every run (Study.overlay, .engine_overlay).
OVERLAYS: dict[str, Overlay] = {name: s.overlay for name, s in REGISTRY.items() if s.overlay is not None}
ENGINE_OVERLAYS: dict[str, EngineOverlay] = {
    name: s.engine_overlay for name, s in REGISTRY.items() if s.engine_overlay is not None
}


def read_provenance_tree(folder: Path, pattern: str = "*/provenance/*.json") -> dict[str, list[dict]]:
    """study -> the records of its measuring jobs (`pattern`: the engine lab's, ENGINE_PROVENANCE)."""
    records: dict[str, list[dict]] = {}
    for path in sorted(folder.glob(pattern)):
        study = path.relative_to(folder).parts[0]
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            records.setdefault(study, []).append(record)
    return records


ENGINE_PROVENANCE = "*/engine/**/provenance*.json"


def run_label(name: str, provenance: dict[str, list[dict]]) -> str:
    """'<name>: MongoDB 8.0.4 on host-b' from the run's provenance (server version, host)."""
    records = [r for rs in provenance.values() for r in rs]
    versions = list(dict.fromkeys(str((r.get("server") or {}).get("version")) for r in records
                                  if (r.get("server") or {}).get("version")))
    hosts = list(dict.fromkeys(str((r.get("host") or {}).get("hostname")) for r in records
                               if (r.get("host") or {}).get("hostname")))
    if not records:
        return f"{name}: no server (engine lab and models)"
    kind = " (stand-in)" if any(is_stand_in(r) for r in records) else ""
    return f"{name}: {'/'.join(versions) or 'unknown version'}{kind} on {'/'.join(hosts) or 'unknown host'}"


def load_runs(this_results: str | Path, others: list[str | Path]) -> list[Run]:
    """This run first, then each compared tree (checked: an older costlab's tree is refused)."""
    this_folder = results_dir(this_results)
    this_manifest = read_manifest(this_folder) if (this_folder / "run.json").exists() else {}
    runs = [Run(THIS_RUN, this_folder, this_manifest, read_provenance_tree(this_folder))]
    names = {THIS_RUN}
    for other in others:
        folder = check_tree(other, this_folder)
        base = Path(other).name if Path(other).name != "results" else Path(other).resolve().parent.name
        name, i = base, 2
        while name in names:
            name, i = f"{base} #{i}", i + 1
        names.add(name)
        runs.append(Run(name, folder, read_manifest(folder), read_provenance_tree(folder)))
    for run in runs:
        run.label = run_label(run.name, run.provenance)
        run.engine_provenance = read_provenance_tree(run.folder, ENGINE_PROVENANCE)
    return runs


def _flat(mapping: dict, prefix: str = "") -> dict:
    return flatten(mapping or {}, prefix)


@dataclass
class Settings:
    """The config a study's results in one run were built with, part by part (`study`: its own keys,
    `server`: the server's that choose it, `engine`: the engine lab's), as dotted keys; a part no record
    says is absent. `unknown`: why the study's own keys could not be read (then nothing is compared)."""
    values: dict[str, Any]
    parts: frozenset[str]
    unknown: str | None = None


def _newest(records: list[dict]) -> dict | None:
    return max(records, key=lambda r: str(r.get("ended_at") or r.get("started_at") or ""), default=None)


def _manifest_matches(record: dict, manifest_config: dict, study: str, engine: bool) -> bool:
    """Whether the run manifest's config is the one a record without `study_config` (an older costlab's)
    was made with: its hash of the study's keys says so; a record with no hash at all, when the manifest's
    run had the study."""

    if not manifest_config:
        return False
    key = "engine_config_hash" if engine else "study_config_hash"
    if record.get(key):
        mine = (
            config_hash({"study": manifest_config.get(study), "engine": manifest_config.get("engine", {})})
            if engine
            else study_config_hash(manifest_config, study)
        )
        return record[key] == mine
    return study in (manifest_config.get("studies") or [])


def study_settings(study: str, run: Run) -> Settings:
    """The config `study`'s results in `run` were built with: what its jobs' provenance recorded
    (`study_config`, the newest job's), part by part; for a record from before costlab recorded it, the
    run's manifest (results/run.json) where the record's hash shows that config built it. The manifest
    alone is never taken for a study its run did not have: a later run of other studies rewrites it."""
    manifest_config = run.manifest.get("config") or {}
    groups = {"server": [r for r in run.provenance.get(study, []) if r.get("server_kind") != "engine"],
              "engine": run.engine_provenance.get(study, [])}
    configs: dict[str, dict | None] = {}
    for part, records in groups.items():
        newest = _newest(records)
        if newest is None:
            continue
        if isinstance(newest.get("study_config"), dict):
            configs[part] = newest["study_config"]
        elif _manifest_matches(newest, manifest_config, study, part == "engine"):
            configs[part] = manifest_config
        else:
            configs[part] = None
    if (
        not configs
    ):  # no job's record (an older tree's models): the manifest's run built them if it had the study
        known = study in (manifest_config.get("studies") or [])
        configs = {"study": manifest_config if known else None, "engine": manifest_config if known else None}
    if all(c is None for c in configs.values()):
        return Settings({}, frozenset(), unknown=f"its {study} config is not recorded (no job of the study "
                        "records it, and its results/run.json is another run's)")
    newest_known = _newest([r for part in ("server", "engine") for r in groups[part]
                            if configs.get(part) is not None]) or {}
    own = next(c for c in (newest_known.get("study_config"), configs.get("server"), configs.get("engine"),
                           configs.get("study")) if isinstance(c, dict))
    values = {k: v for k, v in _flat({study: own.get(study)}).items() if concerns(k, study)}
    parts = {"study"}
    if configs.get("server") is not None:
        server = configs["server"].get("server") or {}
        values |= {f"server.{k}": server.get(k) for k in SERVER_HASH_KEYS}
        parts.add("server")
    if configs.get("engine") is not None:
        values |= {k: v for k, v in _flat({"engine": configs["engine"].get("engine") or {}}).items()
                   if concerns(k, study)}
        parts.add("engine")
    return Settings(values, frozenset(parts))


def _part(key: str) -> str:
    return key.split(".", 1)[0] if key.split(".", 1)[0] in ("server", "engine") else "study"


def differences(study: str, this: Run, other: Run) -> list[str]:
    """'key = value (this run: value)' for the keys that can change the study's results (its own, the
    server's that choose it, the engine lab's shared keys and its engine section) and differ between the
    configs each run's results of the study were built with (study_settings: their provenance). A part only
    one run has (a server run beside an engine-lab-only one) is not compared: the notes say what each has."""
    a, b = study_settings(study, this), study_settings(study, other)
    both = a.parts & b.parts
    keys = sorted(k for k in set(a.values) | set(b.values) if _part(k) in both)
    return [f"{key} = {json.dumps(b.values.get(key))} (this run: {json.dumps(a.values.get(key))})"
            for key in keys if a.values.get(key) != b.values.get(key)]


def notes(study: str, runs: list[Run]) -> list[str]:
    """What differs between this run and each other run, named (never mixed silently)."""
    out = [f"Runs side by side: {'; '.join(r.label for r in runs)}."]
    for run in runs:
        unknown = study_settings(study, run).unknown
        if unknown:
            out.append(f"{run.name}: {unknown}; what it was measured with cannot be compared.")
    for other in runs[1:]:
        diffs = differences(study, runs[0], other)
        scale = [d for d in diffs if d.startswith(f"{study}.")]
        server = [d for d in diffs if d.startswith("server.")]
        engine = [d for d in diffs if d.startswith("engine.")]
        if scale:
            out.append(
                f"{other.name} was measured at another scale or config: "
                + "; ".join(scale)
                + ". Its values answer the same question on other data: compare findings, not numbers."
            )
        if engine:
            out.append(f"{other.name}'s engine lab ran with other settings: " + "; ".join(engine) + ".")
        if server:
            out.append(f"{other.name} used another server config: " + "; ".join(server) + ".")
        present = [kind for kind, path in VERDICT_TABLES.items() if (other.folder / study / path).exists()]
        if not present:
            out.append(f"{other.name} has no results for this study.")
        elif "server" not in present:
            out.append(f"{other.name} has no server measurement for this study; its "
                       + " and ".join({"engine": "engine-lab", "model": "model"}[k] + " results"
                                      for k in present)
                       + " are beside this run's.")
        for table in VERDICT_TABLES.values():   # the engine lab's and the model's too, not only the server's
            problem = published_problem(other.folder, study, table)
            if problem:
                out.append(f"{other.name} ({other.folder}): {problem}.")
    return out


PUBLISHED_NEEDS = (*KEYS, "unit", "published", "reproduced", "verdict")


def published_problem(folder: Path, study: str, table: Path = VERDICT_TABLES["server"]) -> str | None:
    """Why a run's verdict table (published_vs_reproduced.csv by default) cannot be put beside the others
    (None: it can, or it is absent)."""
    path = folder / study / table
    if not path.exists():
        return None
    reason = edited_reason(path)
    if reason:
        return f"{reason}: its verdicts are not counted"
    try:
        columns = pl.read_csv(path, n_rows=0).columns
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError) as err:
        return f"{path} cannot be read as CSV ({type(err).__name__}: {str(err).splitlines()[0][:120]})"
    absent = [c for c in PUBLISHED_NEEDS if c not in columns]
    return f"{path} lacks column(s) {', '.join(absent)} (has {', '.join(columns)})" if absent else None


def _read_published(folder: Path, study: str, table: Path = VERDICT_TABLES["server"]) -> pl.DataFrame | None:
    """A run's verdict table; an edited, unreadable or incomplete one keeps its rows' keys
    (where it has them) with no value and the verdict "invalid" or "edited after the run"."""
    path = folder / study / table
    if not path.exists():
        return None
    problem = published_problem(folder, study, table)
    if problem is None:
        return pl.read_csv(path, infer_schema_length=10000)
    verdict = EDITED_TEXT if EDITED_TEXT in problem else "invalid (see the notes above)"
    try:
        frame = pl.read_csv(path, infer_schema_length=10000)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError):
        frame = pl.DataFrame()
    if not all(c in frame.columns for c in KEYS):
        return pl.DataFrame(schema={c: pl.Utf8 for c in PUBLISHED_NEEDS})
    return frame.select(*[pl.col(c).cast(pl.Utf8) for c in KEYS],
                        *[(pl.col(c).cast(pl.Utf8) if c in frame.columns else pl.lit(None, pl.Utf8)).alias(c)
                          for c in ("unit", "published")],
                        pl.lit(None, pl.Utf8).alias("reproduced"), pl.lit(verdict, pl.Utf8).alias("verdict"))


def _complete(frame: pl.DataFrame | None) -> pl.DataFrame | None:
    """A frame with every column the merge reads (absent ones empty, verdict "invalid"); None without keys."""
    if frame is None or not all(c in frame.columns for c in KEYS):
        return None
    missing = [c for c in PUBLISHED_NEEDS if c not in frame.columns]
    if not missing:
        return frame
    return frame.with_columns(*[pl.lit(None, pl.Utf8).alias(c) for c in missing if c != "verdict"],
                              *([pl.lit("invalid (see the notes above)", pl.Utf8).alias("verdict")]
                                if missing else []))


def _verdict_words(frame: pl.DataFrame) -> pl.Expr:
    """The verdict member with its reason, as a reader sees it ("not comparable (stand-in)"); a table
    without a
    reason column (an older costlab's) shows its verdict as written."""
    verdict = pl.col("verdict").cast(pl.Utf8)
    if "reason" not in frame.columns:
        return verdict
    reason = pl.col("reason").cast(pl.Utf8)
    return pl.when(reason.is_null() | (reason == "")).then(verdict).otherwise(
        pl.format("{} ({})", verdict, reason))


DIFFERENCE = "difference: this run vs {}"   # one column per other run


def _number(value: object) -> float | None:
    try:
        number = None if value is None else float(value)
    except (TypeError, ValueError):
        return None   # a value in words (uniqueidx's outcomes): nothing to compare
    return number if number is not None and math.isfinite(number) else None


def _tolerance_ratios(row: dict) -> tuple[float, float] | None:
    """The finding's own tolerance as a band of ratios: its band (`band_low`, `band_high`; a one-sided
    rule's open side infinite) over its published value. None where the row has no band (an older tree,
    a rule with none) or no published value to scale it by."""
    published = _number(row.get("published"))
    if not published or ("band_low" not in row and "band_high" not in row):
        return None
    low, high = _number(row.get("band_low")), _number(row.get("band_high"))
    if low is None and high is None:
        return None
    ends = sorted(((-math.inf if low is None else low) / published,
                   (math.inf if high is None else high) / published))
    return ends[0], ends[1]


def _values(frame: pl.DataFrame | None) -> dict[tuple[str, str], tuple[list[float], str, float | None,
                                                                      tuple[float, float] | None]]:
    """(finding, metric) -> (the values its value came from, their unit, its value, its tolerance as ratios)
    for the rows with a value: each repeat's or each query's (the `samples` column); a run without them (one
    run, or an older costlab's tree) gives its one value."""
    if frame is None or "reproduced" not in frame.columns:
        return {}
    out = {}
    for row in frame.iter_rows(named=True):
        value = _number(row["reproduced"])
        samples = read_samples(row.get("samples")) if "samples" in frame.columns else []
        if value is None and not samples:
            continue
        unit = re.search(r"\((?:median|mean) of \d+ (?:of \d+ )?(\w+)", str(row.get("interval") or ""))
        key = (str(row["finding"]), str(row["metric"]))
        out[key] = (samples or [value], unit.group(1) if unit else "repeats", value, _tolerance_ratios(row))
    return out


def _differences(this: pl.DataFrame, other: pl.DataFrame | None, label: str) -> pl.DataFrame:
    """Per (finding, metric) both runs have a value of: the ratio of the other run to this one with its
    interval, held to the finding's tolerance (costlab.intervals.compare_runs: "same within tolerance",
    "changed", "cannot tell"; "one run each: not tested" where either has one value), and the p-value of
    any difference adjusted over the table's rows together (Benjamini-Hochberg)."""
    mine, theirs = _values(this), _values(other)
    keys = [key for key in mine if key in theirs]
    compared = [compare_runs(mine[key][0], theirs[key][0], mine[key][3], unit=mine[key][1],
                             reference=mine[key][2]) for key in keys]
    adjusted = adjusted_pvalues([c.pvalue for c in compared])
    tested = sum(p is not None for p in adjusted)
    rows = [(*key, c.describe(q, tested)) for key, c, q in zip(keys, compared, adjusted)]
    schema = {"finding": pl.Utf8, "metric": pl.Utf8, DIFFERENCE.format(label): pl.Utf8}
    return pl.DataFrame(rows, schema=schema, orient="row")


def merged_published(study: str, runs: list[Run], this_frame: pl.DataFrame | None = None,
                     table: Path = VERDICT_TABLES["server"]) -> pl.DataFrame | None:
    """One row per (finding, metric) of any run: published, then reproduced and verdict per run, then per
    other run how it compares with this one, held to the finding's tolerance (DIFFERENCE: "changed: ratio
    1.39 (1.36 to 1.43 at 96.8%; tolerance 0.9 to 1.1), 5 vs 5 repeats; …", "same within tolerance: …",
    "cannot tell: …", "one run each: not tested"; docs/uncertainty.md).

    `table`: which verdict table of each run (VERDICT_TABLES: the server run's, the engine lab's, the
    model's).

    Rows keep this run's order; rows only another run has (another N in the metric) follow.
    The last column is this run's server_kind (the report's stand-in marking reads it).
    """
    frames = [this_frame if this_frame is not None else _read_published(runs[0].folder, study, table)]
    frames += [_read_published(run.folder, study, table) for run in runs[1:]]
    frames = [_complete(frame) for frame in frames]
    if all(f is None for f in frames):
        return None
    base_cols = [*KEYS, "unit", "published"]
    keys = pl.concat(
        [f.select([pl.col(c).cast(pl.Utf8) for c in base_cols]) for f in frames if f is not None],
        how="vertical",
    ).unique(subset=list(KEYS), keep="first", maintain_order=True)
    merged = keys.with_row_index("_order")
    for run, frame in zip(runs, frames):
        if frame is None:
            merged = merged.with_columns(pl.lit(None, pl.Utf8).alias(f"reproduced: {run.label}"),
                                         pl.lit("not in this run", pl.Utf8).alias(f"verdict: {run.label}"))
            continue
        part = frame.select(*[pl.col(k).cast(pl.Utf8) for k in KEYS],
                            pl.col("reproduced").alias(f"reproduced: {run.label}"),
                            _verdict_words(frame).alias(f"verdict: {run.label}"))
        merged = merged.join(part, on=list(KEYS), how="left")
    if frames[0] is not None:
        for run, frame in zip(runs[1:], frames[1:]):
            merged = merged.join(_differences(frames[0], frame, run.label), on=list(KEYS), how="left")
    this_kind = frames[0].select(*[pl.col(k).cast(pl.Utf8) for k in KEYS], "server_kind") \
        if frames[0] is not None and "server_kind" in frames[0].columns else None
    if this_kind is not None:
        merged = merged.join(this_kind, on=list(KEYS), how="left")
    return merged.sort("_order").drop("_order")


def _selected(path: Path, x: str, ys: tuple[str, ...], x_type: str, facet: str | None,
              filters: tuple[tuple[str, str], ...], series: str) -> pl.DataFrame | None:
    """(x, y, series[, facet]) from one CSV: rows kept by `filters`, y the sum of `ys`; None when the file is
    absent, unreadable (the run's notes say what is wrong with its tree) or lacks a column."""
    if not path.exists():
        return None
    try:
        frame = pl.read_csv(path, infer_schema_length=10000)
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError):
        return None
    if any(c not in frame.columns for c in (x, *ys, *(filter(None, [facet])), *(k for k, _ in filters))):
        return None
    for column, value in filters:
        frame = frame.filter(pl.col(column).cast(pl.Utf8) == value)
    cols = [pl.col(x).cast(pl.Utf8 if x_type == "O" else pl.Float64).alias("x"),
            pl.sum_horizontal(pl.col(y).cast(pl.Float64, strict=False) for y in ys).alias("y"),
            pl.lit(series).alias("run")]
    if facet:
        cols.append(pl.col(facet).cast(pl.Utf8).alias("facet"))
    # a row missing any part of y is not drawn (sum_horizontal would count it as 0)
    present = pl.all_horizontal(pl.col(y).is_not_null() for y in ys)
    return frame.filter(present).select(cols).drop_nulls(["x", "y"])


# Vega's category10, one per run in order; the published values, where drawn, in black.
RUN_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


# Axis scales an overlay may ask for: Vega-Lite scale properties by name.
SCALES = {"linear": {}, "log": {"type": "log"}, "log2": {"type": "log", "base": 2},
          "symlog": {"type": "symlog", "constant": 1000}}   # bytes: 0 B on a log-like axis above 1 kB


def _runs_chart(
    data: pl.DataFrame,
    labels: list[str],
    x_type: str,
    x_title: str,
    y_title: str,
    facet: str | None,
    scales: tuple[str, str] = ("linear", "linear"),
    published: str | None = None,
) -> alt.TopLevelMixin:
    """One line with hollow points per run (colour = run, the legend naming each run); the `published` series'
    rows as black hollow diamonds. scales: the x and y axes' (SCALES); an ordinal x keeps the data's order."""
    domain = labels + ([published] if published else [])
    colors = [RUN_COLORS[i % len(RUN_COLORS)] for i in range(len(labels))] + (
        ["#000000"] if published else []
    )
    x_values = sorted(set(data["x"].to_list())) if x_type == "Q" and scales[0] != "linear" else alt.Undefined
    base = alt.Chart(data).encode(
        x=alt.X(f"x:{x_type}", title=x_title, sort=None if x_type == "O" else alt.Undefined,
                scale=alt.Scale(**SCALES[scales[0]]), axis=alt.Axis(values=x_values)),
        y=alt.Y("y:Q", title=y_title, scale=alt.Scale(**SCALES[scales[1]]),
                axis=alt.Axis(format="~s") if scales[1] != "linear" else alt.Axis()),
        color=alt.Color("run:N", title="run", scale=alt.Scale(domain=domain, range=colors),
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=600)),
        tooltip=["run:N", "x", alt.Tooltip("y:Q", format=",.4g")])
    # the same field and title as the colour: one legend, each entry drawn as its points are (hollow)
    shape = alt.Shape("run:N", title="run", scale=alt.Scale(
        domain=domain, range=["circle"] * len(labels) + (["diamond"] if published else [])))
    runs = base.transform_filter(alt.datum.run != (published or ""))
    layers = [runs.mark_line(), runs.mark_point(filled=False, size=60, strokeWidth=2).encode(shape=shape)]
    if published:
        layers.append(base.transform_filter(alt.datum.run == published).mark_point(
            filled=False, size=130, strokeWidth=2).encode(shape=shape))
    chart = alt.layer(*layers).properties(width=260 if facet else 420, height=240)
    return chart.facet(column=alt.Column("facet:N", title=facet)) if facet else chart


def overlay_spec(study: str, runs: list[Run]) -> dict | None:
    """Vega-Lite spec of the study's main measurement with one colour per run (None: nothing to draw)."""
    overlay = OVERLAYS.get(study)
    if overlay is None:
        return None
    parts = [_selected(run.folder / study / "tables" / f"{overlay.table}.csv", overlay.x, (overlay.y,),
                       overlay.x_type, overlay.facet, overlay.filters, run.label) for run in runs]
    data = (
        pl.concat([p for p in parts if p is not None])
        if any(p is not None for p in parts)
        else pl.DataFrame()
    )
    if data.is_empty():
        return None
    chart = _runs_chart(
        data, [r.label for r in runs], overlay.x_type, overlay.x, overlay.y_title, overlay.facet
    )
    stand_in = any(r.stand_in for r in runs)
    return titled(chart, overlay.title, stand_in=stand_in,
                  subtitle=f"one colour per run; tables/{overlay.table}.csv of each").to_dict()


PUBLISHED_SERIES = "published"


def engine_overlay_spec(study: str, runs: list[Run], published_dir: Path | None = None) -> dict | None:
    """Vega-Lite spec of the study's engine-lab results in every run that has them (at least two), one colour
    per run, the published values as black diamonds; the subtitle names the settings that differ between
    the runs (another N, cache or compressor answers the same question on other data). None: nothing to
    overlay."""

    overlay = ENGINE_OVERLAYS.get(study)
    if overlay is None:
        return None
    parts = [_selected(run.folder / study / "engine" / f"{overlay.table}.csv", overlay.x, overlay.y,
                       overlay.x_type, overlay.facet, overlay.filters, run.label) for run in runs]
    drawn = [p for p in parts if p is not None and not p.is_empty()]
    if len(drawn) < 2:
        return None
    if overlay.published:
        published = _selected(
            Path(published_dir or PUBLISHED_DIR) / overlay.published,
            overlay.x,
            overlay.published_y,
            overlay.x_type,
            overlay.facet,
            overlay.published_filters,
            PUBLISHED_SERIES,
        )
    else:
        published = _selected(
            runs[0].folder / study / "engine" / f"{overlay.table}.csv",
            overlay.x,
            overlay.published_y,
            overlay.x_type,
            overlay.facet,
            overlay.filters,
            PUBLISHED_SERIES,
        )
    if published is not None and not published.is_empty():
        drawn.append(published)
    else:
        published = None
    chart = _runs_chart(
        pl.concat(drawn, how="vertical_relaxed"),
        [r.label for r in runs],
        overlay.x_type,
        overlay.x,
        overlay.y_title,
        overlay.facet,
        overlay.scales,
        PUBLISHED_SERIES if published is not None else None,
    )
    differing = [f"{other.name}: " + "; ".join(diffs) for other in runs[1:]
                 if (diffs := [d for d in differences(study, runs[0], other) if not d.startswith("server.")])]
    unknown = [r.name for r in runs if study_settings(study, r).unknown]
    names = {r.label: r.name for r in runs}   # the note names runs by name; the legend has their labels
    mine = pl.concat(drawn[:len(drawn) - (published is not None)], how="vertical_relaxed").with_columns(
        pl.col("run").replace_strict(names, default=pl.col("run")))
    overlap = coincidence_note(coincident_series(mine, "run", "x", "y", "facet" if overlay.facet else None))
    subtitle = (f"{ENGINE_LABEL}; one colour per run, engine/{overlay.table}.csv of each"
                + ("; black diamonds: published" if published is not None else "")
                + (f"; {overlap}" if overlap else "")
                + ("; settings that differ: " + " | ".join(differing) if differing
                   else "" if unknown else "; the runs' engine settings are the same")
                + (f"; settings not recorded: {', '.join(unknown)}" if unknown else ""))
    return titled(chart, overlay.title, subtitle=subtitle).to_dict()
