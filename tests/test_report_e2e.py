"""End to end: `snakemake results/report.html` on config/smoke.yaml against the test server.

Covers every study whose rules are in this checkout (its Study.targets measured on a server);
a study without rules must still appear, as "not run".
"""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from costlab.config import load_config
from costlab.registry import study as registered_study
from costlab.report.charts import STAND_IN_LABEL
from costlab.report.studies import STUDIES

ROOT = Path(__file__).resolve().parent.parent


def studies_with_rules() -> list[str]:
    """The studies measured on a server under the smoke config (files among their Study.targets' measured)."""
    config = load_config(ROOT / "config" / "smoke.yaml")
    return [s for s in STUDIES if registered_study(s).targets(config).measured]


@pytest.fixture(scope="module")
def built(smoke_all):
    """The session's one smoke run (`snakemake all`, which ends with results/report.html)."""
    return smoke_all.workdir, smoke_all.result


def section_of(page: str, study: str) -> str:
    match = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S)
    assert match, f"no section for {study}"
    return match.group(0)


def test_report_page_from_the_workflow(built, real_mongod):
    workdir, _ = built
    page = (workdir / "results" / "report.html").read_text()
    with_rules = studies_with_rules()
    assert re.findall(r'data-study="(\w+)"', page) == list(STUDIES)
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?(https?:)?//", page, re.I)
    assert ('id="stand-in-banner"' in page) == (not real_mongod)
    for study in STUDIES:
        section = section_of(page, study)
        if study not in with_rules:
            assert 'data-status="not run"' in section and "<pre>" in section
            continue
        provenance = sorted((workdir / "results" / study / "provenance").glob("*.json"))
        records = [json.loads(p.read_text()) for p in provenance]
        assert 'data-status="not run"' not in section
        assert "<h3>Published vs reproduced</h3>" in section and "<th>verdict</th>" in section
        for record in records:
            for value in (record["server"]["version"], record["backend"], record["profile"],
                          record["host"]["cpu_model"], record["server"]["storage_engine"]):
                assert str(value) in section, (study, value)
        # every registered figure is in the page; on the stand-in, one banner above them says so
        for spec_path in sorted((workdir / "results" / study / "figures").glob("*.vl.json")):
            name = spec_path.name[: -len(".vl.json")]
            assert f'data-figure="fig-{study}-{name}"' in section
            if not real_mongod:
                assert section.index('<div class="banner small">') < section.index(
                    f'id="fig-{study}-{name}-box"'
                )
        if not real_mongod:
            assert section.count(STAND_IN_LABEL) == 1 and '<div class="figbanner">' not in section
    # measured and reported in one run: the provenance's config hash is the report's
    assert "differs: rerun" not in page
    # the config differences: smoke.yaml and the external server differ from config/config.yaml
    assert "<td><code>server.backend</code></td><td>auto</td><td>external</td>" in page


def test_report_log_says_how_long(built):
    workdir, _ = built
    log = (workdir / "results" / "logs" / "report.log").read_text()
    assert re.match(r"wrote results/report.html in \d+\.\d\d s", log)


def test_snakemake_report_zip(built, server_uri):
    from tests.conftest import run_snakemake

    workdir, _ = built
    result = run_snakemake(
        workdir, ["results/report.html"], server_uri, extra_args=("--report", "report.zip")
    )
    assert result.returncode == 0, result.stderr[-4000:]
    with zipfile.ZipFile(workdir / "report.zip") as archive:
        names = {Path(name).name for name in archive.namelist()}
    # every study figure is declared with report(...), so Snakemake's report carries it
    for study in studies_with_rules():
        for png in sorted((workdir / "results" / study / "figures").glob("*.png")):
            assert png.name in names, f"{png} is not declared with report(...) in rules/{study}.smk"
