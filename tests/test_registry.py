"""The study registry (costlab/registry.py): every list of studies comes from it, and a new study is
its own package, rules file and config section, with no other file touched."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import polars as pl
import pytest
import yaml
from workflow import ROOT, run_workflow

from costlab import STUDIES
from costlab.cluster import MEASURING_RULES, job_ask
from costlab.config import SCHEMA_PATH, ConfigError, load_config, schema, study_config_hash
from costlab.engine.job_keys import engine_keys
from costlab.namespaces import STUDY_DATA_KEYS, data_params
from costlab.plan import CACHE_KEYS, CEILINGS
from costlab.published import PUBLISHED_DIR
from costlab.registry import BUILT_IN, EXTRA_PACKAGES_ENV, REGISTRY, STUDY_NAMES, wildcard_regex
from costlab.report import studies as report_studies
from costlab.report.compare import ENGINE_OVERLAYS, OVERLAYS
from costlab.study import RuleAsk, Study

TOY = "toystudy"
TESTS = Path(__file__).resolve().parent


def test_every_list_of_studies_is_the_registry():
    names = ("docsize", "appversions", "arraygrowth", "flatnested", "uniqueidx")   # the report's order
    assert STUDY_NAMES == STUDIES == names
    assert tuple(report_studies.STUDIES) == names
    assert set(STUDY_DATA_KEYS) == set(names)
    assert set(OVERLAYS) | set(ENGINE_OVERLAYS) <= set(names)
    assert re.fullmatch(wildcard_regex(), "uniqueidx") and not re.fullmatch(wildcard_regex(), "uniqueidxx")
    # the measuring rules are the studies' (every one named after its study)
    assert MEASURING_RULES == {rule for study in BUILT_IN for rule in study.measuring_rules}
    assert all(rule.startswith(study.name + "_") for study in BUILT_IN for rule in study.measuring_rules)


def test_the_config_schema_takes_the_studies_from_the_registry():
    checked = schema()["properties"]
    assert checked["studies"]["items"]["enum"] == list(STUDY_NAMES)
    assert checked["studies"]["default"] == list(STUDY_NAMES)
    assert load_config()["studies"] == list(STUDY_NAMES)
    # config/schema.yaml itself lists no study names: it describes each built-in study's section
    written = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]
    assert "enum" not in written["studies"]["items"] and "default" not in written["studies"]
    assert {study.name for study in BUILT_IN} <= set(written)
    with pytest.raises(ConfigError, match=r"studies\.0: 'nosuchstudy' is not one of .*allowed: docsize, "):
        load_config(overrides={"studies": "[nosuchstudy]"})


def test_no_file_outside_the_registry_lists_the_study_names():
    """A list of all five names (in any order, any separator) appears only in the studies' declarations."""
    names = [study.name for study in BUILT_IN]
    listing = re.compile(
        r"\b("
        + "|".join(names)
        + r")\b(?:[\s\"',|]|\\n)+"
        + r"(?:\b(?:"
        + "|".join(names)
        + r")\b(?:[\s\"',|]|\\n)*){"
        + str(len(names) - 1)
        + "}"
    )
    allowed = {ROOT / "costlab" / "registry.py", Path(__file__).resolve()}
    found = []
    for path in [*ROOT.glob("costlab/**/*.py"), *ROOT.glob("rules/*.smk"), ROOT / "Snakefile",
                 *ROOT.glob("config/*.yaml"), *ROOT.glob("scripts/*.py")]:
        if path.resolve() not in allowed and listing.search(path.read_text()):
            found.append(str(path.relative_to(ROOT)))
    assert found == []


def test_each_study_declares_its_published_files_and_they_exist():
    declared = [name for study in BUILT_IN for name in study.published]
    assert len(declared) == len(set(declared))
    assert sorted(declared) == sorted(p.name for p in PUBLISHED_DIR.glob("*.csv"))
    for study in BUILT_IN:
        assert all(name.startswith(study.name + "_") for name in study.published), study.name


def test_data_params_are_the_declared_keys_and_what_the_study_derives():
    config = load_config()
    # appversions' event_window changes the loaded events: it names the database, as the rules' `data`
    assert list(data_params(config, "appversions")) == [
        "events_per_year",
        "seed",
        "event_window",
        "batch_size",
    ]
    assert data_params(config, "docsize")["spread_customer"] is False   # config.yaml's variants (off)
    assert data_params(config, "flatnested")["groups"] == max(config["flatnested"]["flat_fields"]) // 5
    assert data_params(config, "uniqueidx") == {}
    with pytest.raises(ValueError, match="unknown study 'nope'; allowed: docsize, appversions"):
        data_params(config, "nope")


def test_a_study_is_refused_with_a_measuring_rule_but_no_job_count():
    with pytest.raises(ValueError, match="measuring rule toy_run says no job count"):
        Study("toy", "t", "s", "m", measuring_rules={"toy_run": RuleAsk(work_s=lambda config: 1.0)})
    with pytest.raises(ValueError, match="study name 'Toy'"):
        Study("Toy", "t", "s", "m")


def test_a_study_is_refused_with_a_kept_rule_that_is_not_measuring_or_a_key_that_is_no_path():
    measuring = {"toy_run": RuleAsk(work_s=lambda config: 1.0, jobs=lambda config: 1)}
    with pytest.raises(ValueError, match=r"kept rules \['toy_model'\] are not among its measuring rules "
                                         r"\(allowed: toy_run\)"):
        Study("toy", "t", "s", "m", measuring_rules=measuring, kept_rules=("toy_model",))
    with pytest.raises(ValueError, match="job-selecting key 'sizes_kb' is not a path of key names"):
        Study("toy", "t", "s", "m", job_selecting_keys=("sizes_kb",))   # a string, not ("sizes_kb",)


def test_shared_modules_ask_each_study_what_it_declares():
    """What the shared modules used to list (the kept rules, the job-selecting keys, the ceilings, the engine
    limits, the topology) they now read from each study's Study: the same answers as before."""
    config = load_config()
    # the job-selecting keys: fewer sizes or repeats leave docsize's hash as it is; its seed does not
    less = config | {"docsize": config["docsize"] | {"sizes_kb": [1], "repeats": 3}}
    assert study_config_hash(less, "docsize") == study_config_hash(config, "docsize")
    other_seed = config | {"docsize": config["docsize"] | {"seed": config["docsize"]["seed"] + 1}}
    assert study_config_hash(other_seed, "docsize") != study_config_hash(config, "docsize")
    # the topology: arraygrowth's and appversions' engine jobs model a replica set, docsize's do not
    assert "replica_set" in engine_keys(config, "arraygrowth") and "replica_set" in engine_keys(config,
                                                                                              "appversions")
    assert "replica_set" not in engine_keys(config, "docsize")
    # a quantity two studies plan is one ceiling: docsize's 50,000 orders x 4 sizes x 3 datasets and
    # flatnested's 10,000 documents x 4 widths x 2 shapes at the published scale, the keys of both
    documents = CEILINGS["documents"]
    assert documents.published == 50_000 * 4 * 3 + 10_000 * 4 * 2 == 680_000
    assert documents.keys == ("docsize.docs_per_collection x sizes x datasets + flatnested.documents x "
                              "flat_fields x 2")
    assert documents.limit == 20_000_000
    # the engine caches each study holds to WiredTiger's limit
    assert {".".join(keys) for keys in CACHE_KEYS} == {
        "engine.appversions.cache_mb", "engine.docsize.default_cache_mb", "engine.docsize.small_cache_mb"}


def test_a_package_that_declares_no_study_is_refused_by_name(tmp_path):
    env = os.environ | {EXTRA_PACKAGES_ENV: "json", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([os.sys.executable, "-c", "import costlab.registry"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "COSTLAB_STUDY_PACKAGES: package 'json' declares no study" in result.stderr


@pytest.mark.workflow
def test_a_toy_study_joins_the_no_server_all_the_report_and_the_findings(tmp_path, monkeypatch):
    """tests/toystudy (a package, a rules file) and a config section: nothing else of the checkout changes.
    The no-server `all` runs its model, records its measurement as not run, and the findings table and the
    page carry it; the cluster asks for its measuring rule; the engine lab and the other studies stay off."""
    monkeypatch.setenv(EXTRA_PACKAGES_ENV, TOY)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    toy_config = tmp_path / "toy.yaml"
    toy_config.write_text(yaml.safe_dump({"studies": [TOY], "engine": {"enabled": False},
                                          TOY: {"value": 2.0}}))
    workdir = tmp_path / "run"
    workdir.mkdir()
    result = run_workflow(workdir, "{backend: none}", ("all",),
                          configfiles=("config/smoke.yaml", str(toy_config)))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    results = workdir / "results"
    assert (results / TOY / "not_run.json").is_file()   # servers.smk's study wildcard took the new name
    findings = pl.read_csv(results / "findings.csv")
    assert set(findings["study"]) == {TOY}
    rows = {row["finding"]: row for row in findings.iter_rows(named=True)}
    assert rows["the toy number is two"]["verdict"] == "reproduced"
    assert rows["the toy number is two"]["this_run"] == 2.0
    assert any(v.startswith("not run") for v in findings["verdict"])
    page = (results / "report.html").read_text()
    assert "Toy study" in page and "the toy number is two" in page
    # in a process that registered it: the cluster's ask, the databases' data keys, the config's values
    probe = subprocess.run(
        [
            os.sys.executable,
            "-c",
            "from costlab.cluster import job_ask, MEASURING_RULES; from costlab.namespaces import "
            "STUDY_DATA_KEYS;"
            "from costlab.config import schema;"
            "print(sorted(MEASURING_RULES)[-1], job_ask('toystudy_measure', {'server': {}}).exclusive,"
            " STUDY_DATA_KEYS['toystudy'], schema()['properties']['studies']['items']['enum'][-1])",
        ],
        env=os.environ | {"PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT)])},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.split() == ["uniqueidx_conformance", "True", "('value',)", TOY], probe.stderr
    assert TOY not in REGISTRY and "toystudy_measure" not in MEASURING_RULES   # this process: built-in only
    assert job_ask("toystudy_measure", load_config()).exclusive is False
