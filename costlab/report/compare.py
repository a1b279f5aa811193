"""Compare runs: other results trees (`compare.with`) beside this one in the report.

Each run is labelled from its provenance (server version, host). Every published-vs-reproduced
row gets a reproduced and a verdict column per run; each study's main measurement is drawn
with the runs overlaid, one colour per run; a run made with another scale or server config is
named with the keys that differ. Trees are checked with costlab.report.runs.check_tree first.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import altair as alt
import polars as pl

from costlab.digests import EDITED_TEXT, edited_reason
from costlab.report.charts import titled
from costlab.report.runs import check_tree, read_manifest, results_dir
from costlab.report.settings import concerns, flatten
from costlab.server.provenance import is_stand_in

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

    @property
    def stand_in(self) -> bool:
        return any(is_stand_in(r) for records in self.provenance.values() for r in records)


@dataclass(frozen=True)
class Overlay:
    """A study's main measurement, from one of its tables, drawn for every run."""
    table: str
    x: str
    y: str
    x_type: str              # Q | O
    title: str
    y_title: str
    facet: str | None = None
    filters: tuple[tuple[str, str], ...] = ()


OVERLAYS: dict[str, Overlay] = {
    "docsize": Overlay("summary", "size_kb", "client_ms_p50", "O", "Client time by document size, runs overlaid",
                       "median client ms, default cache, same window", facet="shape",
                       filters=(("run", "same_window"), ("variant", "base"))),
    "arraygrowth": Overlay("runs", "n", "log_bytes", "Q", "Journal bytes of N $push, runs overlaid",
                           "wiredTiger.log bytes written", facet="profile", filters=(("workload", "push"),)),
    "appversions": Overlay("collection_stats", "version", "total_storage_bytes_per_event", "O",
                           "Storage per event by app version, runs overlaid", "storage + index bytes per event"),
    "flatnested": Overlay("comparison", "fields", "reproduced_improvement_pct", "Q",
                          "Structured over flat, runs overlaid", "improvement of structured over flat (%)"),
}


def read_provenance_tree(folder: Path) -> dict[str, list[dict]]:
    records: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*/provenance/*.json")):
        try:
            records.setdefault(path.parent.parent.name, []).append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return records


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
    return runs


def _flat(mapping: dict, prefix: str = "") -> dict:
    return flatten(mapping or {}, prefix)


def differences(study: str, this: Run, other: Run) -> list[str]:
    """'key = value (this run: value)' for the keys that can change the study's results (its own, the
    server's, the engine lab's shared keys and its engine section) and differ between the runs."""
    a = {k: v for k, v in _flat(this.manifest.get("config") or {}).items() if concerns(k, study)}
    b = {k: v for k, v in _flat(other.manifest.get("config") or {}).items() if concerns(k, study)}
    return [f"{key} = {json.dumps(b.get(key))} (this run: {json.dumps(a.get(key))})"
            for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]


def notes(study: str, runs: list[Run]) -> list[str]:
    """What differs between this run and each other run, named (never mixed silently)."""
    out = [f"Runs side by side: {'; '.join(r.label for r in runs)}."]
    for other in runs[1:]:
        diffs = differences(study, runs[0], other)
        scale = [d for d in diffs if d.startswith(f"{study}.")]
        server = [d for d in diffs if d.startswith("server.")]
        engine = [d for d in diffs if d.startswith("engine.")]
        if scale:
            out.append(f"{other.name} was measured at another scale or config: " + "; ".join(scale)
                       + ". Its values answer the same question on other data: compare findings, not numbers.")
        if engine:
            out.append(f"{other.name}'s engine lab ran with other settings: " + "; ".join(engine) + ".")
        if server:
            out.append(f"{other.name} used another server config: " + "; ".join(server) + ".")
        present = [kind for kind, path in VERDICT_TABLES.items() if (other.folder / study / path).exists()]
        if not present:
            out.append(f"{other.name} has no results for this study.")
        elif "server" not in present:
            out.append(f"{other.name} has no server measurement for this study; its "
                       + " and ".join({"engine": "engine-lab", "model": "model"}[k] + " results" for k in present)
                       + " are beside this run's.")
        problem = published_problem(other.folder, study)
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


def merged_published(study: str, runs: list[Run], this_frame: pl.DataFrame | None = None,
                     table: Path = VERDICT_TABLES["server"]) -> pl.DataFrame | None:
    """One row per (finding, metric) of any run: published, then reproduced and verdict per run.

    `table`: which verdict table of each run (VERDICT_TABLES: the server run's, the engine lab's, the model's).

    Rows keep this run's order; rows only another run has (another N in the metric) follow.
    The last column is this run's server_kind (the report's stand-in marking reads it).
    """
    frames = [this_frame if this_frame is not None else _read_published(runs[0].folder, study, table)]
    frames += [_read_published(run.folder, study, table) for run in runs[1:]]
    frames = [_complete(frame) for frame in frames]
    if all(f is None for f in frames):
        return None
    base_cols = [*KEYS, "unit", "published"]
    keys = pl.concat([f.select([pl.col(c).cast(pl.Utf8) for c in base_cols]) for f in frames if f is not None],
                     how="vertical").unique(subset=list(KEYS), keep="first", maintain_order=True)
    merged = keys.with_row_index("_order")
    for run, frame in zip(runs, frames):
        if frame is None:
            merged = merged.with_columns(pl.lit(None, pl.Utf8).alias(f"reproduced: {run.label}"),
                                         pl.lit("not in this run", pl.Utf8).alias(f"verdict: {run.label}"))
            continue
        part = frame.select(*[pl.col(k).cast(pl.Utf8) for k in KEYS],
                            pl.col("reproduced").alias(f"reproduced: {run.label}"),
                            pl.col("verdict").alias(f"verdict: {run.label}"))
        merged = merged.join(part, on=list(KEYS), how="left")
    this_kind = frames[0].select(*[pl.col(k).cast(pl.Utf8) for k in KEYS], "server_kind") \
        if frames[0] is not None and "server_kind" in frames[0].columns else None
    if this_kind is not None:
        merged = merged.join(this_kind, on=list(KEYS), how="left")
    return merged.sort("_order").drop("_order")


def overlay_spec(study: str, runs: list[Run]) -> dict | None:
    """Vega-Lite spec of the study's main measurement with one colour per run (None: nothing to draw)."""
    overlay = OVERLAYS.get(study)
    if overlay is None:
        return None
    parts = []
    for run in runs:
        path = run.folder / study / "tables" / f"{overlay.table}.csv"
        if not path.exists():
            continue
        try:
            frame = pl.read_csv(path, infer_schema_length=10000)
        except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError):
            continue   # an unreadable table of one run: the run's notes say what is wrong with its tree
        if any(c not in frame.columns for c in (overlay.x, overlay.y, *(filter(None, [overlay.facet])),
                                                 *(k for k, _ in overlay.filters))):
            continue
        for column, value in overlay.filters:
            frame = frame.filter(pl.col(column).cast(pl.Utf8) == value)
        cols = [pl.col(overlay.x).cast(pl.Utf8 if overlay.x_type == "O" else pl.Float64).alias("x"),
                pl.col(overlay.y).cast(pl.Float64, strict=False).alias("y"), pl.lit(run.label).alias("run")]
        if overlay.facet:
            cols.append(pl.col(overlay.facet).cast(pl.Utf8).alias("facet"))
        parts.append(frame.select(cols).drop_nulls(["x", "y"]))
    data = pl.concat(parts) if parts else pl.DataFrame()
    if data.is_empty():
        return None
    labels = [r.label for r in runs]
    base = alt.Chart(data).encode(
        x=alt.X(f"x:{overlay.x_type}", title=overlay.x),
        y=alt.Y("y:Q", title=overlay.y_title),
        color=alt.Color("run:N", title="run", scale=alt.Scale(domain=labels, scheme="category10"),
                        legend=alt.Legend(orient="bottom", columns=1, labelLimit=600)),
        tooltip=["run:N", "x", alt.Tooltip("y:Q", format=",.4g")])
    chart = base.mark_line(point=True).properties(width=260 if overlay.facet else 420, height=240)
    if overlay.facet:
        chart = chart.facet(column=alt.Column("facet:N", title=overlay.facet))
    stand_in = any(r.stand_in for r in runs)
    return titled(chart, overlay.title, stand_in=stand_in,
                  subtitle=f"one colour per run; tables/{overlay.table}.csv of each").to_dict()

