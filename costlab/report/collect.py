"""Collecting the report: what each study produced (results/<study>/...) read into sections.

This module reads files and knows nothing of HTML; costlab.report.views turns its sections into
the page's values and costlab.report.page writes the page. Direction: page -> views -> collect.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import polars as pl

from costlab.digests import edited_reason, without_edited_verdicts
from costlab.inputs import InputError, rebuild_command
from costlab.jobs import rerun_failed_notes
from costlab.report.charts import STAND_IN_LABEL
from costlab.report.compare import (
    VERDICT_TABLES,
    engine_overlay_spec,
    load_runs,
    merged_published,
    notes,
    overlay_spec,
)
from costlab.report.studies import STUDIES, StudyInfo
from costlab.server.provenance import is_stand_in, read_provenance
from costlab.server.setup import not_run_record
from costlab.targets import VS_MONGOD_FILE
from costlab.yourschema import load

PUBLISHED_TABLE = "published_vs_reproduced"
ENGINE_PUBLISHED_TABLE = "published_vs_engine"
MODEL_PUBLISHED_TABLE = "published_vs_model"   # results/<study>/model/: the server-free model's verdicts
# results/<study>/engine/your_*.csv and tables/your_*.csv: a study's rows of your variants (kind
# "user variant") in verdict tables of their own, written by a step after the study's engine or measuring
# jobs (docsize: your_documents.csv); findings.csv reads them beside the study's verdict tables
USER_VARIANTS_PREFIX = "your_"
ENGINE_RAW_TABLES = ("queries",)   # per-query rows: linked from the CSVs, not shown
NOT_RUN_FILE = "not_run.json"
PUBLISHED_COLUMNS = ("finding", "metric", "unit", "published", "reproduced", "ratio", "verdict",
                     "server_kind")
MAX_TABLE_ROWS = 200
RUN_COMMAND = ".venv/bin/snakemake --profile profiles/default results/report.html"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND\xaeB`\x82"   # the IEND chunk's type and CRC: the last 8 bytes of every whole PNG


# ---------------------------------------------------------------- what a section holds

@dataclass
class FigureItem:
    name: str
    caption: str | None           # HTML
    spec: dict | None = None      # Vega-Lite
    svg: str | None = None
    png: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)  # suffix -> path on disk
    stand_in: bool = False


@dataclass
class TableItem:
    name: str
    path: Path
    frame: pl.DataFrame
    caption: str | None
    stand_in: bool


@dataclass
class StudySection:
    info: StudyInfo
    enabled: bool
    has_rules: bool
    provenance: list[dict] = field(default_factory=list)
    figures: list[FigureItem] = field(default_factory=list)
    tables: list[TableItem] = field(default_factory=list)
    model_tables: list[TableItem] = field(
        default_factory=list
    )  # server-free numbers (results/<study>/model/)
    published: TableItem | None = None
    engine: list[TableItem] = field(default_factory=list)        # results/<study>/engine/*.csv (engine lab)
    engine_provenance: list[dict] = field(default_factory=list)  # results/<study>/engine/*.json
    missing: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # results/<study>/not_run.json when this run had no server: {"part", "reason", "fix"}
    not_run: dict | None = None
    compare_notes: list[str] = field(default_factory=list)  # compare.with: the runs and what differs
    # results/<study>/engine_vs_mongod.csv: the engine lab against mongod on the same work
    vs_mongod: TableItem | None = None
    # the user's own variants' costs beside their compare_to (Study.your_schema; the page's first block)
    your_schema: object | None = None   # costlab.yourschema.YourSchema

    @property
    def has_results(self) -> bool:
        return bool(self.provenance or self.figures or self.tables or self.model_tables or self.published
                    or self.engine)

    @property
    def server_results(self) -> bool:
        """Results of a server run (or server-free models), as opposed to the engine lab's alone."""
        return bool(self.provenance or self.figures or self.tables or self.model_tables or self.published)

    @property
    def status(self) -> str:
        """not run | engine lab (its results alone) | server-free (no server: models and engine lab) |
        stand-in | measured."""
        if not self.has_results:
            return "not run"
        if not self.server_results:
            return "engine lab"
        if self.not_run is not None:
            return "server-free"
        return "stand-in" if self.stand_in else "measured"

    @property
    def stand_in(self) -> bool:
        return (any(is_stand_in(r) for r in self.provenance) or any(f.stand_in for f in self.figures)
                or any(t.stand_in for t in self.tables) or bool(self.published and self.published.stand_in))


# ---------------------------------------------------------------- reading one study

def caption_html(captions_dir: Path | None, study: str, name: str) -> str | None:
    """rules/captions/<study>_<name>.rst as HTML (inline ``code``, *emphasis*, paragraphs)."""
    if captions_dir is None:
        return None
    path = Path(captions_dir) / f"{study}_{name}.rst"
    if not path.exists():
        return None
    text = html.escape(path.read_text().strip())
    text = re.sub(r"``(.+?)``", r"<code>\1</code>", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*", r"<em>\1</em>", text)
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "".join(f"<p>{p}</p>" for p in paragraphs)


# The engine lab's figures (rules/<study>.smk: figures/engine_<name>.*), drawn with no server.
ENGINE_FIGURE_PREFIX = "engine_"


def _figure_name(path: Path) -> str:
    name = path.name
    return name[: -len(".vl.json")] if name.endswith(".vl.json") else path.stem


def _classify(paths: Iterable[Path], study_dir: Path) -> dict[str, list[Path]]:
    kinds: dict[str, list[Path]] = {"tables": [], "model": [], "figures": [], "provenance": [], "engine": [],
                                    "engine_provenance": []}
    for path in paths:
        try:
            part = path.resolve().relative_to(study_dir.resolve()).parts[0]
        except (ValueError, IndexError):
            continue
        if part in ("tables", "model") and path.suffix == ".csv":
            kinds[part].append(path)
        elif part == "figures" and (path.name.endswith(".vl.json") or path.suffix in (".svg", ".png")):
            kinds["figures"].append(path)
        elif part == "provenance" and path.suffix == ".json":
            kinds["provenance"].append(path)
        elif part == "engine" and path.suffix == ".csv" and path.stem not in ENGINE_RAW_TABLES:
            kinds["engine"].append(path)
        elif part == "engine" and path.suffix == ".json":
            kinds["engine_provenance"].append(path)
    return kinds


def _spec_mentions_stand_in(spec: dict) -> bool:
    return STAND_IN_LABEL in json.dumps(spec, ensure_ascii=False)


def read_table(
    path: Path, study: str, captions_dir: Path | None, problems: list[str] | None = None
) -> TableItem:
    """The table; one changed after its step wrote it (costlab/digests.py) has its verdicts replaced
    by "edited after the run" and a line in `problems`."""
    frame = pl.read_csv(path, infer_schema_length=10000)
    frame, edited = without_edited_verdicts(frame, path)
    if edited and problems is not None:
        problems.append(edited)
    stand_in = "server_kind" in frame.columns and frame["server_kind"].cast(pl.Utf8).eq("stand-in").any()
    return TableItem(path.stem, path, frame, caption_html(captions_dir, study, path.stem), bool(stand_in))


def figure_problem(path: Path) -> str | None:
    """Why a figure file must not be shown: edited after its step, or (without a record) a PNG cut short."""
    reason = edited_reason(path)
    if reason:
        return f"{reason}; rebuild it: {rebuild_command(path)}"
    if path.suffix == ".png":
        with open(path, "rb") as handle:
            head = handle.read(8)
            handle.seek(max(0, path.stat().st_size - 12))
            tail = handle.read()
        if head != PNG_SIGNATURE or not tail.endswith(PNG_END):
            return f"{path} is not a whole PNG (cut short or garbled); rebuild it: {rebuild_command(path)}"
    return None


def read_not_run(path: Path) -> dict:
    """The study's not_run.json; an unreadable one still says the mongod part was not run."""
    try:
        record = json.loads(path.read_text())
        if isinstance(record, dict) and record.get("reason"):
            return record
    except (OSError, ValueError):
        pass
    return not_run_record()


def _records(paths: list[Path], what: str, problems: list[str]) -> list[dict]:
    """Each provenance JSON (with its path); an unreadable one is a problem of the study, not an error."""
    records = []
    for path in dict.fromkeys(paths):
        try:
            records.append(read_provenance(path) | {"_path": str(path)})
        except (OSError, ValueError, InputError) as err:
            problems.append(f"{what} {path} unreadable: {err}")
    return records


def _tables(paths: list[Path], what: str, study: str, captions_dir: Path | None, problems: list[str],
            verdicts_first: str) -> list[TableItem]:
    """Each table, the verdict table named `verdicts_first` first; an unreadable one is a problem, not an
    error."""
    tables = []
    for path in dict.fromkeys(paths):
        try:
            tables.append(read_table(path, study, captions_dir, problems))
        except Exception as err:  # a broken CSV is shown as a problem, the rest of the page still renders
            problems.append(f"{what} {path} unreadable: {err}")
    return sorted(tables, key=lambda t: t.name != verdicts_first)


def collect_study(study: str, results_dir: Path, config: dict, registered: list[str] | None,
                  captions_dir: Path | None) -> StudySection:
    """Read what one study produced. `registered` = its Study.targets paths (None: scan its folders)."""
    info = STUDIES[study]
    study_dir = Path(results_dir) / study
    section = StudySection(info, enabled=study in config.get("studies", []), has_rules=True)
    if not section.enabled:
        return section

    section.problems.extend(rerun_failed_notes(study_dir))   # "last rerun failed; showing the run of <time>"
    if registered is None:
        candidates = [p for sub in ("tables", "model", "figures", "provenance", "engine")
                      for p in sorted((study_dir / sub).glob("*"))]
        # a no-server run says so (else its models alone would read "measured")
        candidates += [p for p in (study_dir / NOT_RUN_FILE,) if p.exists()]
    else:
        candidates = [Path(p) for p in registered]
        section.missing = [p for p in candidates if not p.exists()]
        candidates = [p for p in candidates if p.exists()]
    not_run_path = study_dir / NOT_RUN_FILE
    if any(p.resolve() == not_run_path.resolve() for p in candidates):
        section.not_run = read_not_run(not_run_path)
    kinds = _classify(candidates, study_dir)
    if registered is not None and not kinds["provenance"] and (study_dir / "provenance").is_dir():
        # A study that did not register its provenance files still has them beside its results.
        kinds["provenance"] = sorted((study_dir / "provenance").glob("*.json"))

    section.provenance = _records(kinds["provenance"], "provenance", section.problems)

    for path in dict.fromkeys(kinds["tables"]):
        try:
            table = read_table(path, study, captions_dir, section.problems)
        except Exception as err:  # a broken CSV is shown as a problem, the rest of the page still renders
            section.problems.append(f"table {path} unreadable: {err}")
            continue
        if "server_kind" not in table.frame.columns:
            section.problems.append(
                f"table {path.name} has no server_kind column (the results contract needs one)"
            )
        if table.name == PUBLISHED_TABLE:
            absent = [c for c in PUBLISHED_COLUMNS if c not in table.frame.columns]
            if absent:
                section.problems.append(f"{path.name} lacks column(s) {', '.join(absent)}; "
                                        f"expected {', '.join(PUBLISHED_COLUMNS)}")
            section.published = table
        else:
            section.tables.append(table)

    # the published-vs-engine verdicts first, then the study's engine tables; likewise the model's
    section.engine = _tables(kinds["engine"], "engine table", study, captions_dir, section.problems,
                             ENGINE_PUBLISHED_TABLE)
    section.engine_provenance = _records(kinds["engine_provenance"], "engine provenance", section.problems)
    section.model_tables = _tables(kinds["model"], "model table", study, captions_dir, section.problems,
                                   MODEL_PUBLISHED_TABLE)

    vs_mongod = study_dir / VS_MONGOD_FILE
    if vs_mongod.is_file():
        try:
            section.vs_mongod = read_table(vs_mongod, study, captions_dir, section.problems)
        except Exception as err:  # shown as a problem; the rest of the page still renders
            section.problems.append(f"table {vs_mongod} unreadable: {err}")

    if info.your_schema is not None:
        try:
            section.your_schema = load(info.your_schema)(study_dir, config)
        except Exception as err:  # shown as a problem; the rest of the page still renders
            section.problems.append(f"your variants' costs unreadable: {type(err).__name__}: {err}")

    figures: dict[str, FigureItem] = {}
    for path in kinds["figures"]:
        name = _figure_name(path)
        item = figures.setdefault(name, FigureItem(name, caption_html(captions_dir, study, name)))
        suffix = ".vl.json" if path.name.endswith(".vl.json") else path.suffix
        item.files[suffix] = path
    study_stand_in = any(is_stand_in(r) for r in section.provenance)
    for item in figures.values():
        unfit = [problem for problem in map(figure_problem, item.files.values()) if problem]
        if unfit:
            section.problems.extend(f"figure {item.name} not shown: {problem}" for problem in unfit)
            continue
        try:
            if ".vl.json" in item.files:
                item.spec = json.loads(item.files[".vl.json"].read_text())
            elif ".svg" in item.files:
                item.svg = re.sub(r"^<\?xml[^>]*>\s*", "", item.files[".svg"].read_text())
            elif ".png" in item.files:
                item.png = item.files[".png"]
        except (OSError, ValueError) as err:
            section.problems.append(f"figure {item.name} unreadable: {err}")
            continue
        # Conservative: every figure of a study measured on the stand-in carries the banner, except the
        # engine lab's (engine_<name>), which never touches a server and says so in its own subtitle.
        engine_figure = item.name.startswith(ENGINE_FIGURE_PREFIX)
        item.stand_in = (study_stand_in and not engine_figure) \
            or (item.spec is not None and _spec_mentions_stand_in(item.spec)) \
            or (item.svg is not None and STAND_IN_LABEL in item.svg)
        section.figures.append(item)
    return section


def add_comparison(sections: list[StudySection], results_dir: Path, compare_with: list[str | Path]) -> None:
    """Put the other runs beside this one: merged verdict tables (server run, engine lab, model), overlaid
    figures, notes naming the settings that differ."""
    runs = load_runs(results_dir, list(compare_with))
    for section in sections:
        study = section.info.name
        if not section.enabled or not section.has_results:
            continue
        section.compare_notes = notes(study, runs)
        frame = merged_published(study, runs, section.published.frame if section.published else None)
        if frame is not None:
            path = Path(results_dir) / study / "tables" / f"{PUBLISHED_TABLE}.csv"
            stand_in = bool(section.published and section.published.stand_in) or any(r.stand_in for r in runs)
            section.published = TableItem(PUBLISHED_TABLE, path, frame, None, stand_in)
        # the engine lab's and the model's verdicts side by side too (a run with no server has only these)
        for tables, name, kind in ((section.engine, ENGINE_PUBLISHED_TABLE, "engine"),
                                   (section.model_tables, MODEL_PUBLISHED_TABLE, "model")):
            mine = next((t for t in tables if t.name == name), None)
            merged = merged_published(study, runs, mine.frame if mine else None, VERDICT_TABLES[kind])
            if merged is None:
                continue
            item = TableItem(name, Path(results_dir) / study / VERDICT_TABLES[kind], merged,
                             mine.caption if mine else None, False)
            tables[:] = [item] + [t for t in tables if t.name != name]
        spec = overlay_spec(study, runs)
        if spec is not None:
            caption = ("<p>The study's main measurement in every run, one colour per run, read from each "
                       "run's own tables; the legend names each run's server version and host.</p>")
            section.figures.insert(0, FigureItem("compare_runs", caption, spec=spec,
                                                 stand_in=any(r.stand_in for r in runs)))
        engine_spec = engine_overlay_spec(study, runs)
        if engine_spec is not None:
            caption = (
                "<p>The study's engine-lab results in every run that has them (WiredTiger driven as mongod "
                "drives it, no server), one colour per run, the published values in black; the subtitle "
                "names "
                "the settings that differ between the runs.</p>"
            )
            section.figures.insert(
                0, FigureItem("engine_compare_runs", caption, spec=engine_spec, stand_in=False)
            )


def collect_sections(
    results_dir: Path,
    config: dict,
    study_targets: dict[str, list[str]] | None,
    captions_dir: Path | None,
    compare_with: list[str | Path] | None = None,
) -> list[StudySection]:
    """Every known study's section, in STUDIES order; study_targets None scans the folders instead.

    A study enabled in config but absent from study_targets has no rules yet; compare_with adds
    the other runs' results beside this run's.
    """
    sections = []
    for study in STUDIES:
        registered = None if study_targets is None else study_targets.get(study)
        if study_targets is not None and registered is None:
            section = StudySection(
                STUDIES[study], enabled=study in config.get("studies", []), has_rules=False
            )
        else:
            section = collect_study(study, Path(results_dir), config, registered, captions_dir)
        sections.append(section)
    if compare_with:
        add_comparison(sections, Path(results_dir), compare_with)
    return sections
