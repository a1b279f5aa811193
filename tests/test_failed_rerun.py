"""A failed rerun keeps the last good result (issue #33): a measuring job's outputs are update()-flagged, so
Snakemake keeps them while the job reruns and puts them back when it fails; the job records the failure,
the next run measures again, and the page says which run it shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from workflow import run_workflow

from costlab.config import ROOT, load_config
from costlab.jobs import after_failed_run, rerun_failed_notes
from costlab.registry import EXTRA_PACKAGES_ENV, KEPT_RULES, REGISTRY
from costlab.report.collect import collect_sections


def test_every_kept_measuring_job_is_planned_with_its_outputs_kept(smoke_plan):
    # a dry run of `all` in an empty directory lists every job with its outputs (the session's plan:
    # tests/conftest.py smoke_plan)
    plan = smoke_plan
    assert plan.returncode == 0, plan.stderr[-3000:]
    text = plan.stdout + plan.stderr
    jobs = re.findall(r"rule (\w+):\n((?:    .*\n)+)", text)
    kept = {rule for rule, body in jobs if rule in KEPT_RULES}
    # smoke runs neither the authors' driver nor the fallback sweep on a server
    assert kept == KEPT_RULES - {"appversions_loadtest_authors", "arraygrowth_fallback"}, kept
    for rule, body in jobs:
        found = re.search(r"output: (.*)", body)
        if found is None:        # `all` and other targets without outputs
            continue
        outputs = found.group(1)
        if rule in KEPT_RULES:
            assert all(o.endswith("(update)") for o in outputs.split(", ")), (rule, outputs)
        else:
            assert "(update)" not in outputs, (rule, outputs)


JOB = textwrap.dedent("""
    import sys
    from snakemake.iocontainers import Namedlist as N, Snakemake
    outputs = ["results/appversions/raw/loadtest_appV4.parquet",
               "results/appversions/provenance/loadtest_appV4.json"]
    snakemake = Snakemake(N(), N(outputs), N(), N(), 1, N(), N(["results/logs/lt.log"]), {},
                          "appversions_loadtest", 0)
    import costlab
    if sys.argv[1] == "fail":
        raise RuntimeError("Unable to allocate 62.9 TiB")
    for path in outputs:
        open(path, "w").write("new")
""")


def test_a_failed_rerun_is_recorded_redated_and_named_on_the_page(tmp_path):
    raw = tmp_path / "results/appversions/raw/loadtest_appV4.parquet"
    provenance = tmp_path / "results/appversions/provenance/loadtest_appV4.json"
    for path in (raw, provenance):
        path.parent.mkdir(parents=True)
    raw.write_text("the last good run")
    provenance.write_text(json.dumps({"started_at": "2026-11-30T10:00:00+00:00"}))
    script = tmp_path / "job.py"
    script.write_text(JOB)
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    failed = subprocess.run(
        [sys.executable, str(script), "fail"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert failed.returncode == 1
    marker = tmp_path / "results/appversions/.rerun_failed/loadtest_appV4.parquet.json"
    record = json.loads(marker.read_text())
    assert record["rule"] == "appversions_loadtest" and "62.9 TiB" in record["why"]
    # (Snakemake now puts the kept outputs back; here they never left.) Its onerror:
    os.chdir(tmp_path)
    try:
        assert sorted(map(str, after_failed_run("results"))) == [
            "results/appversions/provenance/loadtest_appV4.json",
            "results/appversions/raw/loadtest_appV4.parquet",
        ]
        assert raw.stat().st_mtime == 1  # older than any input: the next run measures again
        notes = rerun_failed_notes("results/appversions")
        assert len(notes) == 1
        assert notes[0].startswith("last rerun of appversions_loadtest failed (")
        assert notes[0].endswith("showing the run of 2026-11-30T10:00:00+00:00")
        sections = collect_sections(tmp_path / "results", load_config(), None, ROOT / "rules" / "captions")
        shown = next(s for s in sections if s.info.name == "appversions")
        assert notes[0] in shown.problems
    finally:
        os.chdir(ROOT)
    ok = subprocess.run(
        [sys.executable, str(script), "ok"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60
    )
    assert ok.returncode == 0, ok.stderr
    assert not marker.exists() and rerun_failed_notes(tmp_path / "results/appversions") == []


TOY = "toykept"
TOY_STUDY = textwrap.dedent('''
    """A study of the test's own (tests/test_failed_rerun.py): one measuring rule, its outputs kept."""
    from pathlib import Path

    from costlab.study import RuleAsk, Study

    STUDY = Study(
        name="toykept",
        title="Toy kept",
        source='"A toy article"',
        measured="One number, measured by a rule that fails when asked to.",
        rules_file=str(Path(__file__).with_name("rules.smk")),
        measuring_rules={"toykept_measure": RuleAsk(work_s=lambda config: 1.0, jobs=lambda config: 1)},
        kept_rules=("toykept_measure",),
        config_schema={"type": "object", "default": {}, "additionalProperties": False,
                       "properties": {"value": {"type": "integer", "default": 1}}},
    )
''')
TOY_RULES = textwrap.dedent("""
    rule toykept_measure:
        output:
            kept("results/toykept/raw/measured.csv"),
        log:
            "results/logs/toykept_measure.log",
        params:
            value=config["toykept"]["value"],
        script:
            "measure.py"
""")
TOY_SCRIPT = textwrap.dedent("""
    import costlab  # a Snakemake script job: installs the failure record (costlab/jobs.py)

    value = snakemake.params.value
    with open(snakemake.output[0], "w") as out:
        out.write("partial")   # what a job that dies part-way leaves
        if value < 0:
            raise RuntimeError(f"the toy measurement failed at value {value}")
        out.seek(0)
        out.truncate()
        out.write(f"value\\n{value}\\n")
""")


@pytest.mark.workflow
def test_a_new_studys_kept_measuring_rule_keeps_its_last_result_on_a_failed_rerun(tmp_path, monkeypatch):
    """A study declared only in its own package (its Study.kept_rules, a rules file wrapping the output in
    kept(...)), registered with COSTLAB_STUDY_PACKAGES: no shared file knows its rule, yet a failed rerun
    puts its last good result back, records the failure and says so."""
    package = tmp_path / "packages" / TOY
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(TOY_STUDY)
    (package / "rules.smk").write_text(TOY_RULES)
    (package / "measure.py").write_text(TOY_SCRIPT)
    monkeypatch.setenv(EXTRA_PACKAGES_ENV, TOY)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(package.parent), str(ROOT)]))
    assert TOY not in REGISTRY and "toykept_measure" not in KEPT_RULES   # this process: built-in only
    toy_config = tmp_path / "toy.yaml"
    workdir = tmp_path / "run"
    workdir.mkdir()
    measured = workdir / "results" / TOY / "raw" / "measured.csv"

    def run(value: int) -> subprocess.CompletedProcess:
        toy_config.write_text(yaml.safe_dump({"studies": [TOY], "engine": {"enabled": False},
                                              TOY: {"value": value}}))
        return run_workflow(workdir, "{backend: none}", (str(measured.relative_to(workdir)),),
                            configfiles=("config/smoke.yaml", str(toy_config)))

    first = run(7)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert measured.read_text() == "value\n7\n"
    failed = run(-1)   # a changed param reruns the job, which fails after writing part of its output
    assert failed.returncode != 0
    assert "the toy measurement failed at value -1" in failed.stdout + failed.stderr
    assert measured.read_text() == "value\n7\n"   # the last good result, back in place
    record = json.loads((workdir / "results" / TOY / ".rerun_failed" / "measured.csv.json").read_text())
    assert record["rule"] == "toykept_measure" and "failed at value -1" in record["why"]
    assert measured.stat().st_mtime == 1   # dated before its inputs: the next run measures again
    monkeypatch.chdir(workdir)   # the record names its outputs as the run did, from its directory
    notes = rerun_failed_notes(Path("results") / TOY)
    assert len(notes) == 1 and notes[0].startswith("last rerun of toykept_measure failed ("), notes
