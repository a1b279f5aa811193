"""The page answers first: the articles' headline claims judged by the findings they rest on, and every
published finding that did not hold; costlab's variants never decide a claim."""

from __future__ import annotations

import polars as pl
import pytest

from costlab.report.findings import SCHEMA
from costlab.report.headlines import (
    Claim,
    beyond_articles,
    claims_file,
    declared_claims,
    did_not_hold,
    judge_claim,
    published_findings,
    read_claims,
)
from costlab.report.studies import STUDIES

ENGINE = "WiredTiger engine lab 11.2.0"
RULE = "this run / published in [0.75, 1.33]"


def finding(
    name: str,
    verdict: str,
    published=None,
    this_run=None,
    study="appversions",
    evidence=ENGINE,
    note=None,
    tolerance=RULE,
    **extra,
) -> dict:
    return {
        "study": study,
        "finding": name,
        "metric": "storage / data",
        "unit": "ratio",
        "published": published,
        "this_run": this_run,
        "evidence": evidence,
        "ratio": None,
        "tolerance": tolerance,
        "verdict": verdict,
        "note": note,
        "source": "appversions/engine/published_vs_engine.csv",
    } | extra


def frame(*rows: dict) -> pl.DataFrame:
    schema = SCHEMA | ({"kind": pl.Utf8} if any("kind" in r for r in rows) else {})
    return pl.DataFrame(list(rows), schema=schema)


STORAGE = Claim("appversions", "storage claim", ("appV* storage / data",))


def test_a_claim_with_one_failing_finding_did_not_hold_and_says_which_with_its_numbers():
    findings = frame(
        finding("appV1 storage / data", "not reproduced", 0.222, 0.159),
        finding("appV2 storage / data", "reproduced", 0.249, 0.229),
        finding("zstd stores appV6R4 in less space", "not reproduced", 0.574, 0.9),
    )  # not the claim's
    judged = judge_claim(STORAGE, findings)
    assert judged.verdict == "not reproduced"
    assert judged.counts == {"not reproduced": 1, "reproduced": 1}
    # the reason: the failing finding, this run's value against the published one, and the rule it was held to
    assert judged.reason == f"appV1 storage / data: 0.159 against 0.222, {RULE}"
    assert judged.evidence == [ENGINE]


def test_a_claim_whose_judged_findings_all_hold_is_reproduced_with_no_reason():
    findings = frame(
        finding("appV2 storage / data", "reproduced", 0.249, 0.229),
        finding("appV3 storage / data", "not comparable", reason="snappy not available here"),
        finding("appV4 storage / data", "reproduced", 0.34, 0.3, evidence="mongod 8.0.4"),
    )
    judged = judge_claim(STORAGE, findings)
    assert (judged.verdict, judged.reason) == ("reproduced", None)
    assert judged.counts == {"reproduced": 2, "not comparable": 1}
    assert judged.evidence == [ENGINE, "mongod 8.0.4"]


def test_a_claim_nothing_judged_says_why_and_one_nothing_matched_is_not_in_this_run():
    lz4 = "not comparable"
    judged = judge_claim(
        STORAGE, frame(finding("appV2 storage / data", lz4, note="used lz4 (install libsnappy-dev)"))
    )
    assert (judged.verdict, judged.reason) == ("not comparable", "used lz4 (install libsnappy-dev)")
    nothing = judge_claim(STORAGE, frame(finding("appV2 storage / data", "reproduced", study="docsize")))
    assert nothing.verdict == "not in this run" and "no finding of this run matches" in nothing.reason
    # with no server, a claim resting on mongod's measurements says so, with the fix
    no_server = judge_claim(
        STORAGE,
        frame(
            finding(
                "appversions's measurements on a MongoDB server",
                "not run",
                reason="no MongoDB server",
                note="to run it: install docker",
            )
        ),
    )
    assert (no_server.verdict, no_server.reason) == (
        "not run",
        "not run: no MongoDB server (its findings are measured on a MongoDB server)",
    )


def test_a_long_failure_names_three_findings_and_counts_the_rest():
    rows = [finding(f"appV{i} storage / data", "not reproduced", 1.0, 2.0) for i in range(1, 6)]
    reason = judge_claim(STORAGE, frame(*rows)).reason
    assert reason.count(" against ") == 3 and reason.endswith("; and 2 more")


def test_variants_never_decide_a_claim_and_are_not_listed_as_what_did_not_hold():
    findings = frame(
        finding("appV2 storage / data", "reproduced", 0.249, 0.229, kind="published"),
        finding("appV9 storage / data", "not reproduced", 0.2, 0.5, kind="costlab variant"),
        finding("appV1 storage / data", "not reproduced", 0.222, 0.159, kind="published"),
    )
    assert judge_claim(Claim("appversions", "c", ("appV2 *", "appV9 *")), findings).verdict == "reproduced"
    assert did_not_hold(findings)["finding"].to_list() == ["appV1 storage / data"]
    assert beyond_articles(findings)["finding"].to_list() == ["appV9 storage / data"]
    assert published_findings(findings).height == 2
    # before findings.csv has a kind column every row is published, and nothing is beyond the articles
    plain = findings.drop("kind")
    assert published_findings(plain).height == 3 and beyond_articles(plain).height == 0


ARTICLE_NAMES = {
    "docsize": "Projection and large documents",
    "appversions": "The Cost of Not Knowing MongoDB",
    "arraygrowth": "Linear array growth in MongoDB",
    "flatnested": "Flat vs Structured Schemas",
    "uniqueidx": "Unique Indexes Quirks",
}


def test_the_declared_claims_three_to_six_per_study_each_naming_its_article():
    assert all(claims_file(study) is not None for study in ARTICLE_NAMES)
    claims = declared_claims()
    per_study = {s: [c for c in claims if c.study == s] for s in STUDIES}
    assert {s: 3 <= len(c) <= 6 for s, c in per_study.items()} == {s: True for s in STUDIES}, {
        s: len(c) for s, c in per_study.items()
    }
    unnamed = [c.claim for c in claims if ARTICLE_NAMES[c.study].lower() not in c.claim.lower()]
    assert unnamed == []
    assert len({c.claim for c in claims}) == len(claims)


def test_a_claims_file_with_a_claim_but_no_finding_is_refused_by_line(tmp_path):
    bad = tmp_path / "docsize_claims.csv"
    bad.write_text('claim,findings\n"a claim",x*\n"another claim",\n')
    with pytest.raises(ValueError, match=r"docsize_claims.csv, line 3: a claim needs its sentence and at"):
        read_claims(bad, "docsize")
