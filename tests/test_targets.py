"""Study.targets(config): each study's targets and its rules file's names, as plain data, without Snakemake.

The expected paths are written out here from the results layout (docs/development.md), not computed by the
code under test: a wrong name, a missing file or a file out of its registration order fails.
"""

from __future__ import annotations

import pytest

from costlab.config import ROOT, load_config
from costlab.registry import REGISTRY, study
from costlab.targets import RunPlan, Targets, measured, server_free

SMOKE = ROOT / "config" / "smoke.yaml"
FIGURE = ("png", "svg", "vl.json")


def figure(folder: str, name: str) -> list[str]:
    return [f"results/{folder}/figures/{name}.{ext}" for ext in FIGURE]


@pytest.fixture(scope="module")
def defaults() -> dict:
    return load_config()


# ---- the default config ------------------------------------------------------------------------------


def test_flatnested_at_the_defaults(defaults):
    targets = study("flatnested").targets(defaults)
    shapes = [
        "flat_10",
        "structured_2x5",
        "flat_25",
        "structured_5x5",
        "flat_50",
        "structured_10x5",
        "flat_100",
        "structured_20x5",
    ]
    assert targets.names.shapes == shapes
    assert targets.server_free == [
        "results/flatnested/model/bson_sizes.csv",
        "results/flatnested/model/published_vs_model.csv",
    ]
    assert targets.measured == [
        "results/flatnested/tables/timings.csv",
        "results/flatnested/tables/comparison.csv",
        "results/flatnested/tables/published_vs_reproduced.csv",
        *figure("flatnested", "time_by_fields"),
        *[f"results/flatnested/provenance/load_{s}.json" for s in shapes],
        *[f"results/flatnested/provenance/measure_{s}.json" for s in shapes],
    ]


def test_uniqueidx_at_the_defaults(defaults):
    targets = study("uniqueidx").targets(defaults)
    assert targets.server_free == []
    assert targets.measured == [
        "results/uniqueidx/tables/conformance.csv",
        "results/uniqueidx/tables/published_vs_reproduced.csv",
        "results/uniqueidx/provenance/conformance.json",
    ]


def test_docsize_at_the_defaults(defaults):
    targets = study("docsize").targets(defaults)
    names = targets.names
    datasets = ["orders_1k", "orders_4k", "orders_16k", "orders_64k"]
    assert names.datasets == names.base_datasets == datasets
    assert names.runs == ["same_window", "random_windows", "small_cache"]
    assert names.run_profiles == {
        "same_window": "standalone",
        "random_windows": "standalone",
        "small_cache": "standalone-small-cache",
    }
    assert names.documents == [] and names.document_raw == [] and names.document_tables == []
    assert names.document_re == "(?!x)x"  # a wildcard that matches nothing: no document rule runs
    assert targets.server_free == [
        "results/docsize/model/collections.csv",
        "results/docsize/model/datasets.csv",
        "results/docsize/model/published_vs_model.csv",
        "results/docsize/engine/cache_reads.csv",
        "results/docsize/engine/queries.csv",
        "results/docsize/engine/published_vs_engine.csv",
        "results/docsize/engine/provenance.json",
        *figure("docsize", "engine_cache_reads"),
    ]
    tables = [
        "summary",
        "collections",
        "variants",
        "published_vs_reproduced",
        "client_time_same_window",
        "server_time_same_window",
        "client_time_random_windows",
        "client_time_small_cache",
        "bytes_read_small_cache",
    ]
    assert targets.measured == [
        *[f"results/docsize/tables/{t}.csv" for t in tables],
        *figure("docsize", "time_by_size"),
        *figure("docsize", "bytes_read"),
        *figure("docsize", "server_vs_client"),
        # every run of every dataset (run varies slowest), one repeat
        *[f"results/docsize/provenance/{run}__{d}.json" for run in names.runs for d in datasets],
        *[f"results/docsize/provenance/load_{d}.json" for d in datasets],
        "results/docsize/engine_vs_mongod.csv",
        "results/docsize/figures/engine_vs_mongod.png",
        "results/docsize/figures/engine_vs_mongod.svg",
    ]


def test_appversions_at_the_defaults(defaults):
    targets = study("appversions").targets(defaults)
    names = targets.names
    assert names.loaded == names.versions and len(names.versions) == len(defaults["appversions"]["versions"])
    assert names.tested == ["appV1", "appV6R4"]  # the claim's two ends (no loadtest.versions at the defaults)
    assert names.authors is False and names.authors_raw == [] and names.authors_provenance == []
    assert names.figures == ["storage_per_event", "document_size", "loadtest_all"]
    assert names.authors_figures == ["authors_loadtest_all"]  # the rule's outputs, asked for only when on
    assert names.loadtest_profile == "standalone-2cpu-4gb"
    assert names.events_file == [] and names.layout_files == {}
    assert "loadtest_authors_steps" not in names.tables
    assert targets.server_free == [
        "results/appversions/model/stats.csv",
        "results/appversions/model/vs_published.csv",
        "results/appversions/model/published_vs_model.csv",
        "results/appversions/engine/storage.csv",
        "results/appversions/engine/published_vs_engine.csv",
        "results/appversions/engine/provenance.json",
        *figure("appversions", "engine_storage_per_event"),
    ]
    versions = defaults["appversions"]["versions"]
    assert targets.measured == [
        *[f"results/appversions/tables/correctness_{v}.csv" for v in versions],
        *[f"results/appversions/provenance/correctness_{v}.json" for v in versions],
        "results/appversions/tables/collection_stats.csv",
        "results/appversions/tables/loadtest_bins.csv",
        "results/appversions/tables/loadtest_steps.csv",
        "results/appversions/tables/published_vs_reproduced.csv",
        *[f"results/appversions/provenance/load_{v}.json" for v in versions],
        "results/appversions/provenance/loadtest_appV1.json",
        "results/appversions/provenance/loadtest_appV6R4.json",
        *figure("appversions", "storage_per_event"),
        *figure("appversions", "document_size"),
        *figure("appversions", "loadtest_all"),
        "results/appversions/engine_vs_mongod.csv",
        "results/appversions/figures/engine_vs_mongod.png",
        "results/appversions/figures/engine_vs_mongod.svg",
    ]


def test_arraygrowth_at_the_defaults(defaults):
    targets = study("arraygrowth").targets(defaults)
    names = targets.names
    assert names.workload_re == "insert|push"
    assert names.raw == [
        "results/arraygrowth/raw/standalone_insert.parquet",
        "results/arraygrowth/raw/standalone_push.parquet",
        "results/arraygrowth/raw/replset-1_insert.parquet",
        "results/arraygrowth/raw/replset-1_push.parquet",
    ]
    assert names.element_input == {} and names.element_files == {}
    # {rep} is the repeat's folder, rep1, rep2, ... (costlab.repeats.ENGINE_REPEATS)
    assert names.engine_repeat == {
        "log_bytes": "results/arraygrowth/engine/repeats/{rep}/log_bytes.csv",
        "provenance": "results/arraygrowth/engine/repeats/{rep}/provenance.json",
        "fallback": "results/arraygrowth/engine/repeats/{rep}/fallback.csv",
    }
    assert targets.server_free == [
        "results/arraygrowth/model/fallback_conditions.csv",
        "results/arraygrowth/engine/log_bytes.csv",
        "results/arraygrowth/engine/fit.csv",
        "results/arraygrowth/engine/published_vs_engine.csv",
        "results/arraygrowth/engine/provenance.json",
        "results/arraygrowth/engine/fallback.csv",
        *figure("arraygrowth", "engine_log_bytes"),
    ]
    assert targets.measured == [
        "results/arraygrowth/tables/runs.csv",
        "results/arraygrowth/tables/fit.csv",
        "results/arraygrowth/tables/counts.csv",
        "results/arraygrowth/tables/published_vs_reproduced.csv",
        "results/arraygrowth/tables/fallback.csv",
        "results/arraygrowth/provenance/standalone_insert.json",
        "results/arraygrowth/provenance/standalone_push.json",
        "results/arraygrowth/provenance/replset-1_insert.json",
        "results/arraygrowth/provenance/replset-1_push.json",
        "results/arraygrowth/provenance/fallback_standalone.json",
        "results/arraygrowth/provenance/fallback_replset-1.json",
        *figure("arraygrowth", "log_bytes_vs_n"),
        *figure("arraygrowth", "bytes_per_op_vs_n"),
        *figure("arraygrowth", "fallback_sweep"),
        "results/arraygrowth/engine_vs_mongod.csv",
        "results/arraygrowth/figures/engine_vs_mongod.png",
        "results/arraygrowth/figures/engine_vs_mongod.svg",
    ]


# ---- variations --------------------------------------------------------------------------------------


def test_the_engine_lab_off_leaves_out_its_files_only():
    config = load_config(overrides={"engine": {"enabled": False}})
    for name in REGISTRY:
        paths = study(name).targets(config).server_free + study(name).targets(config).measured
        assert not [p for p in paths if "/engine" in p], name
    assert study("flatnested").targets(config).measured == study("flatnested").targets(load_config()).measured


def test_the_authors_driver_and_repeats_add_their_files():
    config = load_config(overrides={"appversions": {"repeats": 2, "loadtest": {"authors_driver": True}}})
    targets = study("appversions").targets(config)
    assert (
        targets.names.tables["loadtest_authors_steps"]
        == "results/appversions/tables/loadtest_authors_steps.csv"
    )
    assert targets.names.authors_raw == [
        "results/appversions/raw/loadtest_authors_appV1.parquet",
        "results/appversions/raw/loadtest_authors_appV6R4.parquet",
    ]
    measured_paths = targets.measured
    # repeat 2 of each load-tested version: its reload and its load test, version by version
    start = measured_paths.index("results/appversions/provenance/load_appV1__rep2.json")
    assert measured_paths[start : start + 6] == [
        "results/appversions/provenance/load_appV1__rep2.json",
        "results/appversions/provenance/loadtest_appV1__rep2.json",
        "results/appversions/provenance/load_appV6R4__rep2.json",
        "results/appversions/provenance/loadtest_appV6R4__rep2.json",
        "results/appversions/provenance/loadtest_authors_appV1.json",
        "results/appversions/provenance/loadtest_authors_appV6R4.json",
    ]
    assert figure("appversions", "authors_loadtest_all")[0] in measured_paths
    assert "results/appversions/provenance/load_appV2__rep2.json" not in measured_paths  # not load tested


def test_the_smoke_configs_variants_documents_and_elements():
    config = load_config(SMOKE)
    av = study("appversions").targets(config).names
    assert av.versions[-1] == "appV5R3_month" and "appV5R3_month" in av.version_re.split("|")
    assert av.loaded == ["appV4", "appV6R3", "appV6R4"] and av.tested == ["appV6R3", "appV6R4"]
    ds = study("docsize").targets(config)
    assert ds.names.documents == ["ticket"] and ds.names.document_re == "ticket"
    assert ds.names.document_tables == ["results/docsize/engine/documents/cache_reads_ticket.csv"]
    assert ds.names.document_raw == [
        f"results/docsize/raw/{run}__doc_ticket_{size}.parquet"
        for run in ("same_window", "random_windows", "small_cache")
        for size in ("1k", "4k")
    ]
    assert ds.server_free[-3:] == [
        "results/docsize/engine/your_documents.csv",
        "results/docsize/engine/documents/cache_reads_ticket.csv",
        "results/docsize/engine/documents/provenance_ticket.json",
    ]
    assert "results/docsize/tables/your_documents.csv" in ds.measured
    ag = study("arraygrowth").targets(config).names
    assert ag.engine["elements"] == "results/arraygrowth/engine/elements.csv"
    assert ag.element_input == {}  # job_run is not in arraygrowth.workloads: engine lab only


def test_the_fallback_sweep_off_and_an_element_on_a_server(tmp_path):
    element = tmp_path / "tick.json"
    element.write_text('{"t": 1}')
    config = load_config(
        overrides={
            "arraygrowth": {
                "fallback": {"enabled": False},
                "workloads": ["insert", "push", "tick"],
                "elements": {"tick": {"element": str(element)}},
            }
        }
    )
    targets = study("arraygrowth").targets(config)
    assert targets.server_free == [p for p in targets.server_free if "fallback" not in p]
    assert "results/arraygrowth/model/fallback_conditions.csv" not in targets.server_free
    assert "fallback" not in targets.names.tables and targets.names.fallback_input == {}
    assert targets.names.workload_re == "insert|push|tick"
    assert targets.names.element_input["element_provenance"] == [
        "results/arraygrowth/provenance/standalone_tick.json",
        "results/arraygrowth/provenance/replset-1_tick.json",
    ]
    assert targets.names.raw[-1] == "results/arraygrowth/raw/replset-1_push.parquet"  # the article's only
    assert not [p for p in targets.measured if "fallback" in p]


# ---- the plan of one invocation ----------------------------------------------------------------------

TOY = Targets(
    (
        server_free("results/a/model.csv"),
        measured("results/a/t.csv"),
        server_free("results/a/e.csv"),
        measured("results/a/f.png"),
    ),
    names="a's names",
)


def test_with_no_server_the_measured_files_give_way_to_not_run_where_they_stood():
    assert TOY.registered("a", has_server=True) == [
        "results/a/model.csv",
        "results/a/t.csv",
        "results/a/e.csv",
        "results/a/f.png",
    ]
    assert TOY.registered("a", has_server=False) == [
        "results/a/model.csv",
        "results/a/not_run.json",
        "results/a/e.csv",
    ]
    # a measured group with no file still says the mongod part is not run
    assert Targets((measured(),)).registered("b", has_server=False) == ["results/b/not_run.json"]


def test_the_plan_probes_the_server_once_and_only_when_asked():
    probes = []

    def probe(server: dict) -> None:
        probes.append(server)
        return None

    plan = RunPlan({"studies": ["a"], "server": {"backend": "auto"}}, {"a": TOY, "b": TOY}, probe)
    assert plan.names("a") == "a's names" and probes == []  # the rules files' names need no server
    assert plan.all_targets() == [
        "results/a/model.csv",
        "results/a/not_run.json",
        "results/a/e.csv",
        "results/run.json",
        "results/report.html",
    ]  # b is not enabled
    assert plan.not_run_studies == ["a"] and plan.measured_studies() == []
    assert plan.report_inputs() == ["results/a/model.csv", "results/a/not_run.json", "results/a/e.csv"]
    assert probes == [{"backend": "auto"}]
    with pytest.raises(ValueError, match="unknown study 'c'; allowed: a, b"):
        plan.names("c")


def test_with_a_server_every_file_is_a_target():
    plan = RunPlan({"studies": ["a", "b"], "server": {}}, {"a": TOY, "b": Targets()}, lambda server: "binary")
    # b declares no targets: left out, so the page says it has no rules yet
    assert plan.study_targets == {
        "a": ["results/a/model.csv", "results/a/t.csv", "results/a/e.csv", "results/a/f.png"]
    }
    assert plan.not_run_studies == [] and plan.measured_studies() == ["a"]


def test_every_study_declares_targets_under_the_defaults_and_smoke(defaults):
    # a study whose Study.targets were left out would build nothing in `all`
    for config in (defaults, load_config(SMOKE)):
        for name, declared in REGISTRY.items():
            targets = declared.targets(config)
            assert targets.measured or targets.server_free, name
            assert all(p.startswith(f"results/{name}/") for p in targets.server_free + targets.measured), name
