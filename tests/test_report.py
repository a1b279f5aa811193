"""The HTML report built from small synthetic results/ trees (no server, no Snakemake)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import altair as alt
import polars as pl
import pytest

from costlab.config import load_config
from costlab.registry import STUDY_NAMES as REGISTERED
from costlab.report.charts import STAND_IN_LABEL, save_chart, titled
from costlab.report.page import build_report
from costlab.report.settings import config_differences
from costlab.report.views import vega_bundle

STUDY_NAMES = list(REGISTERED)   # the report's sections: the registry's order


def provenance(kind: str, *, version: str, engine: str, backend: str, profile: str, cpu: str,
               job: str, config_hash: str = "abc123") -> dict:
    return {
        "job": job,
        "server": {"version": version, "git_version": "f00dfeed" + version, "storage_engine": engine,
                   "process": "secantus" if kind == "stand-in" else kind, "server_kind": kind,
                   "uri": "mongodb://127.0.0.1:27017/"},
        "server_kind": kind, "backend": backend, "profile": profile,
        "applied_options": {"wiredTigerCacheSizeGB": 0.25} if "small" in profile else {},
        "host": {"hostname": "labhost", "cpu_model": cpu, "cpu_cores_logical": 8, "cpu_cores_physical": 4,
                 "memory_bytes": 16 * 2**30, "os": "Linux-6.1-x86_64", "python": "3.11.9"},
        "config_hash": config_hash, "costlab_version": "0.1.0", "costlab_commit": "1234abcd",
        "started_at": "2026-11-30T10:00:00+00:00", "ended_at": "2026-11-30T10:05:00+00:00",
    }


def write_study(root: Path, study: str, kind: str, *, figure: str | None = "svg", cpu: str = "Fake CPU 9000",
                version: str = "8.0.4", verdict: str = "reproduced") -> None:
    base = root / "results" / study
    for sub in ("tables", "figures", "provenance"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    record = provenance(kind, version=version, engine="WiredTiger", backend="docker", profile="standalone",
                        cpu=cpu, job=f"{study}_measure")
    (base / "provenance" / f"{study}_measure.json").write_text(json.dumps(record))
    pl.DataFrame({"size_kb": [1, 64], "p50_ms": [0.5, 12.25], "server_kind": [kind, kind]}).write_csv(
        base / "tables" / "latency.csv")
    pl.DataFrame({"finding": [f"{study} finding one"], "metric": ["ratio 64KB/1KB"], "unit": ["x"],
                  "published": [30.0], "reproduced": [24.5], "ratio": [0.82], "verdict": [verdict],
                  "server_kind": [kind]}).write_csv(base / "tables" / "published_vs_reproduced.csv")
    chart = titled(alt.Chart(pl.DataFrame({"x": [1, 2], "y": [1.0, 3.0]})).mark_line().encode(
        x=alt.X("x:Q", title="size (KB)"), y=alt.Y("y:Q", title="time (ms)")),
        f"{study} latency", stand_in=kind == "stand-in")
    figures = base / "figures"
    if figure == "spec":
        save_chart(chart, figures / "latency.png", figures / "latency.svg", figures / "latency.vl.json")
    elif figure == "svg":
        save_chart(chart, figures / "latency.svg")


@pytest.fixture
def captions(tmp_path) -> Path:
    folder = tmp_path / "captions"
    folder.mkdir()
    (folder / "docsize_latency.rst").write_text("Look at the ``64 KB`` line. It rises *steeply*.\n")
    (folder / "appversions_latency.rst").write_text("Version caption sentence one. Sentence two.\n")
    return folder


def smoke_config(**overrides) -> dict:
    config = load_config(Path(__file__).resolve().parent.parent / "config" / "smoke.yaml",
                         overrides=overrides or None)
    return config


@pytest.fixture
def mixed_tree(tmp_path) -> Path:
    """docsize on the stand-in (with a Vega-Lite spec), appversions and uniqueidx on mongod,
    arraygrowth enabled without results, flatnested disabled."""
    write_study(tmp_path, "docsize", "stand-in", figure="spec", version="0.9.0-secantus")
    write_study(tmp_path, "appversions", "mongod", figure="svg")
    write_study(tmp_path, "uniqueidx", "mongod", figure=None, verdict="not reproduced")
    write_study(tmp_path, "flatnested", "mongod", figure="svg")  # results exist but the study is disabled
    return tmp_path


def build(tree: Path, config: dict, captions: Path | None, **kwargs) -> tuple[str, object]:
    out = tree / "results" / "report.html"
    summary = build_report(tree / "results", out, config, captions_dir=captions, **kwargs)
    return out.read_text(), summary


def section_of(page: str, study: str) -> str:
    match = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S)
    assert match, f"no section for {study}"
    return match.group(0)


@pytest.fixture
def mixed_page(mixed_tree, captions) -> tuple[str, object]:
    config = smoke_config(studies=["docsize", "appversions", "arraygrowth", "uniqueidx"])
    return build(mixed_tree, config, captions)


def test_every_study_has_a_section_with_its_state(mixed_page):
    page, summary = mixed_page
    assert re.findall(r'data-study="(\w+)"', page) == STUDY_NAMES
    assert summary.studies == {"docsize": "shown", "appversions": "shown", "arraygrowth": "no results",
                               "flatnested": "disabled", "uniqueidx": "shown"}
    assert 'data-status="stand-in"' in section_of(page, "docsize")
    assert 'data-status="measured"' in section_of(page, "appversions")


def test_missing_and_disabled_studies_show_not_run_with_a_command(mixed_page):
    page, _ = mixed_page
    missing = section_of(page, "arraygrowth")
    assert "not run" in missing and "has no results yet" in missing
    assert ".venv/bin/snakemake" in missing
    disabled = section_of(page, "flatnested")
    assert "not run" in disabled and "not in <code>studies</code>" in disabled
    # the command enables the study on top of the ones already enabled
    command = re.search(r"<pre>(.*?)</pre>", disabled, re.S).group(1)
    assert "flatnested" in command and "docsize" in command
    # its results on disk are not shown: the run's config disabled it
    assert "flatnested finding one" not in page


def test_stand_in_banner_at_top_and_on_affected_figures_only(mixed_page):
    page, summary = mixed_page
    assert summary.stand_in
    assert page.index('id="stand-in-banner"') < page.index('<section class="study"')
    docsize, appversions = section_of(page, "docsize"), section_of(page, "appversions")
    # One banner per study says it for all its figures and tables (it used to repeat on each).
    assert docsize.count('<div class="banner small">') == 1 and docsize.count(STAND_IN_LABEL) == 1
    assert '<div class="figbanner">' not in docsize
    assert docsize.index('<div class="banner small">') < docsize.index(
        '<figure id="fig-docsize-latency-box">'
    )
    assert "<div class=\"figbanner\">" not in appversions and STAND_IN_LABEL not in appversions


def test_no_banner_when_every_result_is_from_mongod(tmp_path, captions):
    write_study(tmp_path, "docsize", "mongod", figure="spec")
    write_study(tmp_path, "appversions", "mongod")
    page, summary = build(tmp_path, smoke_config(), captions)
    assert not summary.stand_in
    assert 'id="stand-in-banner"' not in page and '<div class="figbanner">' not in page
    assert STAND_IN_LABEL not in page


def test_stand_in_table_without_provenance_still_raises_the_banner(tmp_path, captions):
    # a server-free study whose table still says stand-in (e.g. computed from a stand-in run)
    base = tmp_path / "results" / "uniqueidx" / "tables"
    base.mkdir(parents=True)
    pl.DataFrame({"case": ["nulls"], "outcome": ["E11000"], "server_kind": ["stand-in"]}).write_csv(
        base / "cases.csv")
    page, summary = build(tmp_path, smoke_config(), captions)
    assert summary.stand_in and 'id="stand-in-banner"' in page


def test_no_network_script_or_stylesheet_and_vega_inlined_once(mixed_page):
    page, _ = mixed_page
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?(https?:)?//", page, re.I)
    assert not re.search(r"@import\s+(url\()?[\"']?(https?:)?//", page, re.I)
    assert page.count(vega_bundle()) == 1
    # the spec is embedded as data for vegaEmbed, not fetched
    specs = re.findall(r'<script type="application/json" data-figure="([^"]+)">(.*?)</script>', page, re.S)
    assert [name for name, _ in specs] == ["fig-docsize-latency"]
    spec = json.loads(specs[0][1])
    assert spec["title"]["text"] == "docsize latency" and "datasets" in spec


def test_svg_only_figure_is_inlined(mixed_page):
    page, _ = mixed_page
    appversions = section_of(page, "appversions")
    assert re.search(r'<div class="svg"><svg', appversions)
    assert "<?xml" not in appversions


def test_provenance_values_appear_in_the_header(mixed_page):
    page, _ = mixed_page
    docsize, appversions = section_of(page, "docsize"), section_of(page, "appversions")
    for text in ("8.0.4", "f00dfeed8.0.4", "WiredTiger", "docker", "standalone", "Fake CPU 9000",
                 "16.0 GiB", "2026-11-30 10:00:00 UTC", "2026-11-30 10:05:00 UTC"):
        assert text in appversions, text
    assert "0.9.0-secantus" in docsize and "stand-in" in docsize
    assert "0.9.0-secantus" not in appversions


def test_config_hash_and_differences_from_defaults(mixed_page):
    page, _ = mixed_page
    docsize = section_of(page, "docsize")
    # smoke.yaml sets docsize.docs_per_collection 2000 and sizes_kb [1, 4]; defaults 50000 and [1, 4, 16, 64]
    assert "<tr><td><code>docsize.docs_per_collection</code></td><td>50000</td><td>2000</td></tr>" in docsize
    assert "<tr><td><code>docsize.sizes_kb</code></td><td>[1, 4, 16, 64]</td><td>[1, 4]</td></tr>" in docsize
    # the scale: the study's own keys, changed ones marked
    assert '<code>docs_per_collection</code> = 2000 <span class="changed">(changed)</span>' in docsize
    # appversions' keys belong to its own section, not docsize's
    assert "appversions.events_per_year" not in docsize
    assert "appversions.events_per_year" in section_of(page, "appversions")
    # the provenance was measured with another config hash than this report's: said so
    assert "abc123" in docsize and "differs" in docsize


def test_config_differences_redact_passwords():
    defaults = load_config()
    config = load_config(overrides={"server": {"backend": "external",
                                               "uri": "mongodb://alice:s3cret@db.example:27017/"}})
    diffs = {key: (default, value) for key, default, value in config_differences(config, defaults)}
    assert diffs["server.backend"] == ("auto", "external")
    assert diffs["server.uri"] == (None, "mongodb://alice@db.example:27017/")
    assert "docsize.docs_per_collection" not in diffs


def test_published_vs_reproduced_table_and_verdicts(mixed_page):
    page, _ = mixed_page
    docsize = section_of(page, "docsize")
    pvr = re.search(r"<h3>Published vs reproduced</h3>(.*?)<h3>", docsize, re.S).group(1)
    for header in ("finding", "metric", "unit", "published", "reproduced", "ratio", "verdict", "server_kind"):
        assert f"<th>{header}</th>" in pvr
    assert "<td>docsize finding one</td>" in pvr
    assert '<td class="num">24.5</td>' in pvr and '<td class="num">0.82</td>' in pvr
    assert '<td class="verdict v-yes">reproduced</td>' in pvr
    uniqueidx = section_of(page, "uniqueidx")
    assert '<td class="verdict v-no">not reproduced</td>' in uniqueidx


def test_captions_rendered_and_missing_caption_flagged(mixed_page):
    page, _ = mixed_page
    docsize = section_of(page, "docsize")
    assert "<p>Look at the <code>64 KB</code> line. It rises <em>steeply</em>.</p>" in docsize
    assert "Version caption sentence one. Sentence two." in section_of(page, "appversions")


def test_registered_targets_drive_the_section(tmp_path, captions, monkeypatch):
    write_study(tmp_path, "docsize", "stand-in", figure="spec", version="7.0.2-test")
    write_study(tmp_path, "appversions", "mongod")
    monkeypatch.chdir(tmp_path)  # registered paths are relative to the workflow's directory
    targets = {
        # registered: the table and the figure; the stray svg-only figure on disk is not shown
        "docsize": ["results/docsize/tables/published_vs_reproduced.csv",
                    "results/docsize/figures/latency.vl.json", "results/docsize/figures/latency.png",
                    "results/docsize/figures/growth.vl.json"],
    }
    (tmp_path / "results" / "docsize" / "figures" / "stray.svg").write_text("<svg></svg>")
    page, summary = build(tmp_path, smoke_config(), captions, study_targets=targets)
    docsize = section_of(page, "docsize")
    assert "stray" not in docsize
    assert "latency.csv" not in docsize  # not registered
    assert "results/docsize/figures/growth.vl.json" in docsize  # registered, not built: listed
    assert "7.0.2-test" in docsize and "Fake CPU 9000" in docsize  # provenance found beside the results
    # appversions has results on disk but no rules registered anything: not run
    assert summary.studies["appversions"] == "no results"
    assert "no workflow rules registered results" in section_of(page, "appversions")


def test_contract_problems_are_shown_not_fatal(tmp_path, captions):
    base = tmp_path / "results" / "docsize" / "tables"
    base.mkdir(parents=True)
    pl.DataFrame({"size_kb": [1]}).write_csv(base / "sizes.csv")
    pl.DataFrame({"finding": ["x"], "published": [1.0]}).write_csv(base / "published_vs_reproduced.csv")
    page, summary = build(tmp_path, smoke_config(), captions)
    docsize = section_of(page, "docsize")
    assert "sizes.csv has no server_kind column" in docsize
    assert "lacks column(s) metric, unit, reproduced, ratio, verdict, server_kind" in docsize
    assert any("sizes.csv" in p for p in summary.problems)


def test_long_tables_are_cut_with_a_note(tmp_path, captions):
    base = tmp_path / "results" / "flatnested" / "tables"
    base.mkdir(parents=True)
    pl.DataFrame({"i": list(range(450)), "server_kind": ["mongod"] * 450}).write_csv(base / "walk.csv")
    page, _ = build(tmp_path, smoke_config(), captions)
    flatnested = section_of(page, "flatnested")
    assert "First 200 of 450 rows." in flatnested
    assert flatnested.count("<tr><td class=\"num\">") == 200


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs chromium (apt-get install chromium)")
def test_page_draws_its_figures_offline_in_a_browser(mixed_tree, captions):
    """The inlined Vega bundle really draws the spec: the figure's div holds an SVG after load."""
    page, _ = build(mixed_tree, smoke_config(studies=["docsize"]), captions)
    out = mixed_tree / "results" / "report.html"
    dom = subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
            "--dump-dom",
            out.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    drawn = re.search(r'<div class="vega[^"]*" id="fig-docsize-latency"[^>]*>(.*?)</figure>', dom, re.S)
    assert drawn, dom[:2000]
    assert "<svg" in drawn.group(1) and "could not be drawn" not in drawn.group(1)
    assert "docsize latency" in drawn.group(1)  # the title, drawn as SVG text by Vega


def test_vega_bundle_is_cached_on_disk_by_version(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    bundle = vega_bundle.__wrapped__()  # bypass the in-process memo
    cached = list((tmp_path / "costlab").glob("vega-bundle-vlc*-vl*.js"))
    assert len(cached) == 1 and cached[0].read_text() == bundle
    assert "vegaEmbed" in bundle and "</script" not in bundle
    cached[0].write_text("/* from the cache */")
    assert vega_bundle.__wrapped__() == "/* from the cache */"


def test_command_line_builds_from_a_results_folder(mixed_tree, monkeypatch, capsys):
    from costlab.report.__main__ import main

    monkeypatch.chdir(mixed_tree)
    assert main(["--configfile", str(Path(__file__).resolve().parent.parent / "config" / "smoke.yaml")]) == 0
    page = (mixed_tree / "results" / "report.html").read_text()
    out = capsys.readouterr().out
    assert re.match(r"wrote results/report.html in \d+\.\d\d s \(docsize shown, appversions shown, "
                    r"arraygrowth no results, flatnested shown, uniqueidx shown\)", out), out
    assert "flatnested finding one" in page  # every study enabled by default: flatnested's results shown


def test_page_html_lives_in_the_template_not_in_python_strings():
    """The page's markup is costlab/report/templates/report.html.j2; the report's modules only prepare
    values."""
    import costlab.report.collect as collect_module
    import costlab.report.page as page_module
    import costlab.report.views as views_module

    for module in (page_module, collect_module, views_module):
        source = Path(module.__file__).read_text()
        tags = re.findall(r"<(?:section|table|figure|div|h[1-4]|dl|details)\b", source)
        assert not tags, f"HTML assembled in {module.__name__}: {sorted(set(tags))}"
    assert (views_module.TEMPLATES_DIR / "report.html.j2").is_file()


def test_collecting_never_imports_presenting():
    """One direction: page -> views -> collect -> compare; collecting knows nothing of the page."""
    import ast

    import costlab.report as package

    folder = Path(package.__file__).parent
    imported: dict[str, set[str]] = {}
    for name in ("collect", "compare", "settings", "runs", "views", "page"):
        tree = ast.parse((folder / f"{name}.py").read_text())
        imported[name] = {node.module.rsplit(".", 1)[-1] for node in ast.walk(tree)
                          if isinstance(node, ast.ImportFrom) and node.module
                          and node.module.startswith("costlab.report.")}
    assert not imported["collect"] & {"views", "page"}, imported["collect"]
    assert not imported["compare"] & {"collect", "views", "page"}, imported["compare"]
    assert not imported["views"] & {"page"}, imported["views"]


def test_stand_in_server_is_named_for_what_it_is(mixed_page):
    page, _ = mixed_page
    docsize, appversions = section_of(page, "docsize"), section_of(page, "appversions")
    assert "SecantusDB stand-in (a test server, not MongoDB, answers as MongoDB 0.9.0-secantus)" in docsize
    assert "<dt>git version</dt><dd>none (not a MongoDB build)</dd>" in docsize
    assert "<dt>server version</dt><dd>mongod 8.0.4</dd>" in appversions


def test_long_tables_collapse_behind_a_summary(tmp_path, captions):
    write_study(tmp_path, "appversions", "mongod", figure=None)
    tables = tmp_path / "results" / "appversions" / "tables"
    pl.DataFrame({"key": [f"{i:064x}" for i in range(30)], "match": [True] * 28 + [False] * 2,
                  "server_kind": ["mongod"] * 30}).write_csv(tables / "correctness_appV4.csv")
    page, _ = build(tmp_path, smoke_config(studies=["appversions"]), captions)
    box = re.search(r"<h4>correctness_appV4 .*?</div></div>", page, re.S).group(0)
    assert '<details class="rows"><summary>30 rows; match: 28 true, 2 false (show the table)</summary>' in box
    # a short table stays open
    assert re.search(r'<h4>latency [^\n]*?</h4>(<p>[^<]*</p>)*<div class="scroll">', page)


def test_template_escapes_values_from_results(tmp_path, captions):
    write_study(tmp_path, "uniqueidx", "mongod", figure=None)
    table = tmp_path / "results" / "uniqueidx" / "tables" / "latency.csv"
    pl.DataFrame({"note": ["<script>alert(1)</script>"], "server_kind": ["mongod"]}).write_csv(table)
    page, _ = build(tmp_path, smoke_config(studies=["uniqueidx"]), captions)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_changing_one_studys_key_warns_only_on_that_study(tmp_path, captions):
    """Issue #12: each study's provenance carries the hash of its own keys plus the server's."""
    from costlab.config import study_config_hash

    measured = smoke_config(studies=["docsize", "appversions"])
    for study in ("docsize", "appversions"):
        write_study(tmp_path, study, "mongod", figure=None)
        path = tmp_path / "results" / study / "provenance" / f"{study}_measure.json"
        record = json.loads(path.read_text())
        record["study_config_hash"] = study_config_hash(measured, study)
        path.write_text(json.dumps(record))
    changed = smoke_config(studies=["docsize", "appversions"], docsize={"window_minutes": 50})
    page, _ = build(tmp_path, changed, captions)
    assert "differs: rerun" in section_of(page, "docsize")
    assert "differs: rerun" not in section_of(page, "appversions")
    # a server key concerns every study
    other_server = smoke_config(studies=["docsize", "appversions"], server={"image": "mongo:7.0"})
    page, _ = build(tmp_path, other_server, captions)
    assert "differs: rerun" in section_of(page, "docsize") and "differs: rerun" in section_of(
        page, "appversions"
    )
    # ... but not a timeout, which changes nothing a study measures
    page, _ = build(
        tmp_path, smoke_config(studies=["docsize", "appversions"], server={"startup_timeout_s": 5}), captions
    )
    assert "differs: rerun" not in page


def test_study_config_hash_only_moves_with_its_own_keys():
    from costlab.config import study_config_hash, study_of_provenance_path

    base = smoke_config()
    other = smoke_config(appversions={"seed": 7})
    assert study_config_hash(base, "docsize") == study_config_hash(other, "docsize")
    assert study_config_hash(base, "appversions") != study_config_hash(other, "appversions")
    assert (
        study_of_provenance_path("results/docsize/provenance/small_cache__orders_1k.json", base) == "docsize"
    )
    assert study_of_provenance_path("results/servers/standalone.json", base) is None


def test_a_study_with_no_server_does_not_say_it_was_measured(tmp_path, captions, monkeypatch):
    """make all with no server: the section used to open with "What was measured." (client time, server
    time, ...) and "results are server-free", though nothing ran on a server and the engine lab did."""
    base = tmp_path / "results" / "docsize"
    (base / "model").mkdir(parents=True)
    (base / "engine").mkdir()
    pl.DataFrame({"size_kb": [1], "documents": [10]}).write_csv(base / "model" / "collections.csv")
    pl.DataFrame(
        {
            "finding": ["f"],
            "metric": ["m"],
            "unit": ["ratio"],
            "published": [1.0],
            "reproduced": [1.0],
            "ratio": [1.0],
            "verdict": ["reproduced"],
            "server_kind": ["engine"],
            "note": [None],
        }
    ).write_csv(base / "engine" / "published_vs_engine.csv")
    (base / "not_run.json").write_text(json.dumps({"part": "mongod", "reason": "no MongoDB server",
                                                   "fix": "start a Docker engine"}))
    write_study(tmp_path, "appversions", "mongod")
    monkeypatch.chdir(tmp_path)
    targets = {
        "docsize": [
            "results/docsize/model/collections.csv",
            "results/docsize/engine/published_vs_engine.csv",
            "results/docsize/not_run.json",
        ],
        "appversions": ["results/appversions/tables/published_vs_reproduced.csv"],
    }
    page, _ = build(
        tmp_path, smoke_config(studies=["docsize", "appversions"]), captions, study_targets=targets
    )
    docsize = section_of(page, "docsize")
    assert "What was measured." not in docsize and "What the study measures (on a MongoDB server)." in docsize
    assert "No MongoDB server: nothing was measured on one." in docsize and "engine lab" in docsize
    assert "results are server-free" not in docsize
    assert "What was measured." in section_of(page, "appversions")


def test_a_findings_value_shows_where_it_came_from_and_its_samples_stay_in_the_csv(tmp_path):
    """The audit table's value carries its interval with the repeats or queries, or "one run: no interval"
    (issue #36 item 4); each repeat's values (`samples`) are the CSV's, not a page cell's."""
    from costlab.report.collect import TableItem
    from costlab.report.views import finding_row_view, table_block_view

    row = {"study": "appversions", "finding": "f", "metric": "m", "published": 0.222, "unit": "ratio",
           "this_run": 0.19, "evidence": "engine", "ratio": 0.86, "tolerance": "t", "verdict": "reproduced",
           "note": None}
    repeats = "0.1765 to 0.2044 at 75.0% (median of 3 repeats, order statistics)"
    for interval in ("one run: no interval", repeats):
        assert finding_row_view({**row, "interval": interval})["interval"] == interval
    assert finding_row_view({**row, "interval": None})["interval"] is None   # not a measurement: nothing said
    frame = pl.DataFrame({"finding": ["f"], "verdict": ["reproduced"], "interval": ["a to b"],
                          "samples": ["0.19; 0.2; 0.18"]})
    item = TableItem("published_vs_engine", tmp_path / "x.csv", frame, None, False)
    view = table_block_view(item, tmp_path)
    assert view["table"].columns == ["finding", "verdict", "interval"]
