"""A study's engine keys belong to that study: on its page section (with the N the engine really ran) and
in its engine job's params, so changing one reruns that study's engine job alone."""
from __future__ import annotations

import json
import re

import polars as pl

from costlab.report.page import build_report
from test_report import smoke_config
from workflow import external, planned, workflow


def section_of(page: str, study: str) -> str:
    return re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)


def test_a_changed_engine_key_and_the_engines_n_are_on_the_page(tmp_path):
    results = tmp_path / "results"
    engine = results / "arraygrowth" / "engine"
    engine.mkdir(parents=True)
    pl.DataFrame({"profile": ["standalone"] * 2, "workload": ["push"] * 2, "n": [150, 450],
                  "log_bytes": [1000, 9000], "journal_compressor": ["lz4", "lz4"], "server_kind": ["engine"] * 2}
                 ).write_csv(engine / "log_bytes.csv")
    (engine / "provenance.json").write_text(json.dumps({"server_kind": "engine", "server": {"wiredtiger_version": "11.2.0"}}))
    (results / "docsize" / "model").mkdir(parents=True)
    pl.DataFrame({"size_kb": [1], "documents": [5], "avg_doc_bytes": [1024.0], "data_bytes": [5120]}).write_csv(
        results / "docsize" / "model" / "collections.csv")
    defaults = smoke_config()
    config = smoke_config(engine={"arraygrowth": {"ns": [150, 450]}})
    build_report(results, results / "report.html", config, defaults=defaults)
    page = (results / "report.html").read_text()
    arraygrowth, docsize = section_of(page, "arraygrowth"), section_of(page, "docsize")
    differences = arraygrowth[arraygrowth.index("Config values that differ"):]
    assert "<code>engine.arraygrowth.ns</code>" in differences and "[150, 450]" in differences
    assert "at their defaults" not in differences
    assert "engine.arraygrowth.ns" not in docsize   # another study's engine key leaves docsize alone
    assert "<dt>N (from the results)</dt><dd>150, 450</dd>" in arraygrowth
    assert "<dt>journal compressor used (from the results)</dt><dd>lz4</dd>" in arraygrowth


def test_one_studys_engine_keys_plan_only_its_engine_job(smoke_all, server_uri):
    """It used to plan appversions_engine and docsize_engine too: every engine rule took all of `engine`."""
    plan = planned(workflow(smoke_all.workdir, external(server_uri), "-n", "all",
                            config=("engine={arraygrowth: {ns: [200, 400]}}",)))
    assert plan["arraygrowth_engine"] == 1, plan
    assert not {"appversions_engine", "docsize_engine"} & set(plan), plan
