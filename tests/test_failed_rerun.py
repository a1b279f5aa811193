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

from costlab.config import ROOT
from costlab.jobs import KEPT_RULES, after_failed_run, rerun_failed_notes


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
        from costlab.config import load_config
        from costlab.report.collect import collect_sections

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
