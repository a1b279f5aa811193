"""Your schema (issue 47, item 1): the user's variants' absolute costs, each beside its compare_to as
"× compare_to" with the ratio's interval, first on the page after "What ran"; each study's figure draws them
beside the published ones; the audit table keeps them out.

The trees here are small results trees written by hand in the layout the workflow writes (test data, the
expected values worked out in the comments); tests/test_report_browser.py looks at the smoke tree's page.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from costlab.appversions.your_schema import your_schema as appversions_schema
from costlab.arraygrowth.your_schema import your_schema as arraygrowth_schema
from costlab.docsize.your_schema import your_schema as docsize_schema


def _config(**sections) -> dict:
    from test_report import smoke_config

    return smoke_config(**sections)


def appversions_tree(results: Path) -> None:
    """appV5R3_month (the smoke config's variant) beside appV5R3."""
    (results / "appversions" / "model").mkdir(parents=True)
    (results / "appversions" / "engine").mkdir(parents=True)
    pl.DataFrame({"version": ["appV5R3", "appV5R3_month"], "events": [1000, 1000], "documents": [100, 200],
                  "avg_doc_bytes": [250.0, 150.0], "data_bytes": [25000, 30000]}).write_csv(
        results / "appversions" / "model" / "stats.csv")
    # three repeats (the same events seed in repeat r of both): per-event storage 9.0, 9.9, 8.1 against 9.0
    pl.DataFrame(
        {
            "version": ["appV5R3", "appV5R3_month"],
            "events": [1000, 1000],
            "storage_bytes": [9000, 9000],
            "index_bytes": [2000, 2000],
            "storage_bytes_repeats": ["9000; 9000; 9000", "9000; 9900; 8100"],
            "index_bytes_repeats": ["2000; 2000; 2000", "2000; 2000; 2000"],
            "storage_bytes_per_event": [9.0, 9.0],
            "index_bytes_per_event": [2.0, 2.0],
            "server_kind": ["engine", "engine"],
        }
    ).write_csv(results / "appversions" / "engine" / "storage.csv")


def test_appversions_costs_beside_the_base_with_the_interval_over_repeats(tmp_path):
    appversions_tree(tmp_path)
    config = _config(appversions={"events_per_year": 20000, "your_keys": 1000})
    schema = appversions_schema(tmp_path / "appversions", config)
    rows = {(r.measure, r.evidence): r for r in schema.rows}
    docs = rows[("documents per event", "model")]
    assert (docs.variant, docs.compare_to, docs.value, docs.compared) == (
        "appV5R3_month",
        "appV5R3",
        0.2,
        0.1,
    )
    assert rows[("BSON bytes per event", "model")].ratio == 30 / 25   # 30 B against 25 B an event
    storage = rows[("storage per event", "engine lab")]
    assert storage.value == 9.0 and storage.ratio == 1.0
    # ratios per repeat 1.0, 1.1, 0.9: the median 1.0 between the lowest and highest, 75 % for 3 repeats
    assert storage.interval == "0.9 to 1.1 (75.0%, 3 repeats)"
    year = rows[("storage + index a year at 20,000 events a year", "engine lab")]
    assert year.value == 11.0 * 20000 and year.unit == "B/year"   # (9 + 2) B an event
    # 20,000 events a year over ceil(20000 / 60) = 334 keys: 59.88 events a key, times 1,000 keys
    keyed = next(r for r in schema.rows if r.measure.startswith("storage + index a year for 1,000 keys"))
    assert abs(keyed.value - 11.0 * 20000 / 334 * 1000) < 1e-6
    assert schema.figure is not None and any(
        p.yours and p.series == "appV5R3_month" for p in schema.figure.points
    )
    # no variant of yours: no block
    assert appversions_schema(tmp_path / "appversions", {"appversions": {"versions": ["appV5R3"]}}) is None


def docsize_tree(results: Path) -> None:
    """The orders and the smoke config's ticket at 4 KB, the small-cache run, 10 queries a shape."""
    engine = results / "docsize" / "engine"
    (engine / "documents").mkdir(parents=True)

    def table(means: dict[str, list[float]], document: str | None) -> pl.DataFrame:
        rows = []
        for shape, samples in means.items():
            mean = sum(samples) / len(samples)
            rows.append({"run": "small_cache", "size_kb": 4, "size": "4k", "shape": shape, "cache_mb": 26,
                         "queries": len(samples), "avg_doc_bytes": 4105,
                         "bytes_read_into_cache_mean": mean, "bytes_read_into_cache_mean_low": mean * 0.9,
                         "bytes_read_into_cache_mean_high": mean * 1.1, "interval_confidence": 0.95,
                         "bytes_read_into_cache_samples": "; ".join(str(s) for s in samples)}
                        | ({"document": document} if document else {}))
        return pl.DataFrame(rows)

    table({"whole": [4000.0 + i for i in range(10)], "projection": [2000.0 + i for i in range(10)],
           "covered": [0.0] * 10}, None).write_csv(engine / "cache_reads.csv")
    table({"whole": [6000.0 + i for i in range(10)], "projection": [2000.0 + 2 * i for i in range(10)],
           "covered": [500.0] * 10}, "ticket").write_csv(engine / "documents" / "cache_reads_ticket.csv")


def test_docsize_documents_with_the_intervals_cache_reads_has(tmp_path):
    docsize_tree(tmp_path)
    schema = docsize_schema(tmp_path / "docsize", _config())
    rows = {r.measure: r for r in schema.rows}
    whole = rows["bytes read per whole query, 4 KB"]
    # means 4,504.5 against 4,004.5 B a query
    assert (whole.value, whole.compared) == (6004.5, 4004.5) and whole.compare_to == "orders"
    assert whole.value_interval == "5,404 to 6,605 (95%)"  # the value's interval, as cache_reads has it
    assert re.fullmatch(r"[\d.]+ to [\d.]+ \(9\d\.\d%, 10 queries\)", whole.interval), (
        whole.interval
    )
    low, high = (float(v) for v in re.findall(r"[\d.]+", whole.interval)[:2])
    assert low - 0.005 <= 6004.5 / 4004.5 <= high + 0.005   # its ends to 3 significant figures
    # the orders read nothing on the covered query: no ratio, and the row says why
    covered = rows["bytes read per covered query, 4 KB"]
    assert covered.ratio is None and covered.interval == "the compared read 0 B per query: no ratio"
    size = rows["document size, 4 KB"]
    assert (size.value, size.compared) == (4105.0, 4105.0)   # grown: exactly the article's mean at 4 KB
    assert {p.series for p in schema.figure.points} == {"orders (the article's)", "ticket"}


def arraygrowth_tree(results: Path) -> None:
    """push (the article's) and the smoke config's job_run at N = 100 and 200: 500 and 1,000 B a write."""
    engine = results / "arraygrowth" / "engine"
    engine.mkdir(parents=True)
    pl.DataFrame({"profile": ["standalone"] * 4, "workload": ["push", "push", "insert", "insert"],
                  "n": [100, 200, 100, 200], "log_bytes": [50_000, 100_000, 20_000, 40_000],
                  "server_kind": ["engine"] * 4}).write_csv(engine / "log_bytes.csv")
    pl.DataFrame({"profile": ["standalone"] * 2, "element": ["job_run"] * 2, "update": ["push"] * 2,
                  "n": [100, 200], "log_bytes": [100_000, 200_000], "max_doc_bytes": [5_000, 10_000],
                  "server_kind": ["engine"] * 2}).write_csv(engine / "elements.csv")


def test_arraygrowth_elements_beside_the_articles_push(tmp_path):
    arraygrowth_tree(tmp_path)
    schema = arraygrowth_schema(tmp_path / "arraygrowth", _config())
    per_write = next(r for r in schema.rows if r.measure.startswith("journal bytes per write"))
    assert per_write.measure == "journal bytes per write, standalone, N = 200"
    assert (per_write.value, per_write.compared, per_write.ratio) == (1000.0, 500.0, 2.0)
    assert per_write.interval == "one run: no interval"
    k = next(r for r in schema.rows if r.measure.startswith("growth exponent"))
    assert abs(k.value - 1.0) < 1e-9 and abs(k.ratio - 1.0) < 1e-9   # both linear in N
    assert {p.series for p in schema.figure.points if p.yours} == {"job_run"}


def test_the_page_opens_with_your_schema_and_the_audit_keeps_them_out(tmp_path):
    from costlab.report.page import build_report
    from costlab.report.runs import manifest

    results = tmp_path / "results"
    appversions_tree(results)
    docsize_tree(results)
    arraygrowth_tree(results)
    config = _config(studies=["docsize", "appversions", "arraygrowth"],
                     appversions={"events_per_year": 20000})
    (results / "run.json").write_text(json.dumps(manifest(config, None)))
    # one row of a user's variant and one published row in a verdict table: the audit shows the published one
    from costlab.finding import NOT_JUDGED, USER_VARIANT_REASON, Finding, verdict_table
    from costlab.verdicts import Kind, Verdict

    verdict_table(
        [
            Finding(
                "published storage",
                "m",
                "B",
                9.0,
                9.0,
                Verdict.REPRODUCED,
                tolerance="±10 %",
                server_kind="engine",
            ),
            Finding(
                "appV5R3_month beside appV5R3: storage per event (engine lab)",
                "x",
                "ratio",
                None,
                1.0,
                Verdict.NOT_COMPARABLE,
                reason=USER_VARIANT_REASON,
                tolerance=NOT_JUDGED,
                server_kind="engine",
                note="appV5R3_month: 9 B/event; appV5R3: 9 B/event",
                kind=Kind.USER_VARIANT,
            ),
        ]
    ).write_csv(results / "appversions" / "engine" / "published_vs_engine.csv")
    build_report(results, results / "report.html", config)
    page = (results / "report.html").read_text()
    # right after "What ran": Your schema, before the claims and the audit
    after = page[page.index('id="what-ran"'):]
    assert after.index('id="your-schema"') < after.index("</p>") + 200
    assert page.index('id="your-schema"') < page.index('id="claims"') < page.index('id="audit-table"')
    block = page[page.index('id="your-schema"'):page.index('id="claims"')]
    for study in ("appversions", "docsize", "arraygrowth"):
        assert f'data-your-schema="{study}"' in block
        assert f'data-figure="fig-{study}-your_schema"' in block
    assert (
        "1.2 × appV5R3" in block and "0.9 to 1.1 (75.0%, 3 repeats)" in block
    )  # BSON bytes; storage's interval
    assert "2 × push" in block and "1.5 × orders" in block
    assert "220 kB/year" in block   # 11 B an event, 20,000 events a year
    audit = page[page.index('id="audit-table"'):]
    audit = audit[:audit.index("</table>")]
    assert "published storage" in audit and "appV5R3_month beside" not in audit
    yours = page[page.index('id="your-variants-table"'):]
    yours = yours[:yours.index("</table>")]
    assert "appV5R3_month beside appV5R3" in yours and NOT_JUDGED not in yours   # no empty verdict columns
