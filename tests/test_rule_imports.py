"""Parsing the workflow stays cheap: rule files import only light modules (no altair, faker, polars, pymongo).

Every Snakemake invocation parses rules/*.smk; the study dependencies cost most of a no-op run
when they are imported there (benchmarks/README.md). Name lists live in stdlib-only modules
(costlab/docsize/names.py, costlab/appversions/names.py, costlab/flatnested/shapes.py) that the
heavy modules take them from. Checks run in a fresh interpreter: this one already has them all.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

from costlab.config import ROOT

# Study dependencies the workflow must not import to plan jobs (snakemake itself imports numpy).
HEAVY = ("altair", "faker", "polars", "pymongo", "bson")
IMPORT_RE = re.compile(r"^\s*(?:from\s+(costlab[\w.]*)\s+import|import\s+(costlab[\w.]*))", re.MULTILINE)


def heavy_after(code: str, *args: str, cwd=ROOT) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run code in a fresh interpreter; which HEAVY packages were imported by the time it exits."""
    probe = ("import atexit, json, sys\n"
             f"atexit.register(lambda: sys.__stdout__.write('HEAVY ' + json.dumps("
             f"sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})) + '\\n'))\n" + code)
    proc = subprocess.run([sys.executable, "-c", probe, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("HEAVY ")]
    assert lines, (
        f"probe did not report (rc {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    )
    return proc, json.loads(lines[-1].removeprefix("HEAVY "))


def rule_file_imports() -> set[str]:
    modules = set()
    for path in [ROOT / "Snakefile", *sorted((ROOT / "rules").glob("*.smk"))]:
        modules |= {a or b for a, b in IMPORT_RE.findall(path.read_text())}
    return modules


def test_rule_files_import_only_light_modules():
    modules = rule_file_imports()
    # The regex must find the imports this test is about (else it would pass on nothing).
    # (costlab.snakefile plans with every study's targets module: the name lists come with it)
    assert {"costlab.snakefile", "costlab.docsize.params", "costlab.appversions.params"} <= modules
    proc, heavy = heavy_after("".join(f"import {m}\n" for m in sorted(modules)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert heavy == [], f"rule files' imports {sorted(modules)} pull in {heavy}"


def test_the_probe_sees_a_heavy_import():
    proc, heavy = heavy_after("import costlab.docsize.figures, costlab.flatnested.generate\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {"altair", "faker", "polars", "pymongo"} <= set(heavy)


def test_planning_the_workflow_imports_no_study_dependency(tmp_path):
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles"):
        (tmp_path / name).symlink_to(ROOT / name)
    code = ("import sys\nfrom snakemake.cli import main\nsys.argv[0] = 'snakemake'\nmain()\n")
    proc, heavy = heavy_after(code, "-n", "all", "-q", "--directory", str(tmp_path),
                              "--snakefile", str(tmp_path / "Snakefile"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert heavy == [], f"planning `snakemake -n all` imported {heavy}"


def test_name_lists_have_one_source():
    from costlab.appversions import figures as av_figures
    from costlab.appversions import names as av_names
    from costlab.docsize import figures as ds_figures
    from costlab.docsize import names as ds_names
    from costlab.docsize import run as ds_run
    from costlab.docsize import tables as ds_tables
    from costlab.flatnested import generate, shapes

    assert ds_figures.FIGURES is ds_names.FIGURES
    assert ds_run.RUNS is ds_names.RUNS and ds_tables.RUNS is ds_names.RUNS
    assert ds_tables.table_names is ds_names.table_names and ds_tables.QUERY_TABLES is ds_names.QUERY_TABLES
    assert av_figures.figure_names is av_names.figure_names
    assert av_figures.loadtest_figures is av_names.loadtest_figures
    # The workflow plans shapes with shapes.MAX_FIELDS; the generator must hold exactly that many fields.
    assert generate.MAX_FIELDS == shapes.MAX_FIELDS == sum(len(fields) for _, fields in generate.GROUPS)
