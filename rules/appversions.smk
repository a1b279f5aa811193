# Study appversions: the 14 application versions of "The Cost of Not Knowing MongoDB".
# events -> model (no server) -> per version: load, collStats, correctness, load test -> tables -> figures.
AV = config["appversions"]
# Each rule's params: costlab/appversions/params.py (what reruns a job is what it reads).
import costlab.appversions.params as _av_params
# Your own versions (appversions.variants, checked with the config): registered before the wildcard and
# the version lists are built, so each is a version everywhere below (docs/variants.md). Every
# appversions script registers them again in its own process.
from costlab.appversions.variants import layout_files as _av_layout_files
from costlab.appversions.variants import register_variants as _av_register_variants

_av_register_variants(config)
# Each variant's layout rehearsed now, before any job: its statements through the engine lab's update
# compiler, its size formula against the documents they build (ConfigError in one line otherwise).
from costlab.appversions.rehearsal import rehearse_config as _av_rehearse_config

_av_rehearse_config(config)
# A variant's layout file (appversions.variants.<name>.layout_file): an input of the jobs that use its layout.
AV_LAYOUT_FILES = _av_layout_files(AV)
# The {version} wildcard: exactly the registered versions (registry.py is light: no polars or pymongo).
from costlab.appversions.registry import wildcard_pattern as _av_wildcard_pattern

AV_VERSION_RE = _av_wildcard_pattern()
# appversions.repeats: each load-tested version loaded and load tested once per repeat; {rep} is the repeat's mark
# (costlab.repeats: repeat 1 keeps the paths a single run always had). A load test writes into the collection it
# measures, so each later repeat first reloads the same events into its own data directory.
# engine.appversions.repeats: each version's engine job once per repeat, {rep} its mark likewise.
from costlab.repeats import ENGINE_REPEATS as _ENGINE_REPEATS
from costlab.repeats import SERVER_REPEATS as _SERVER_REPEATS

AV_REPS = _SERVER_REPEATS.wildcards(config, "appversions")


# --- events and model ---
# appversions.events: your own events file (docs/variants.md), checked with the config, read by content; the
# events job then writes it, integer-coded and in date order, in place of the generator's.
from costlab.paths import user_file_path as _user_file_path

AV_EVENTS_FILE = [str(_user_file_path(AV["events"]))] if AV.get("events") else []


rule appversions_events:
    input:
        events_file=by_content(AV_EVENTS_FILE),
    output:
        events="results/appversions/events.parquet",
    params:
        **_av_params.EventsParams.declare(config),
    threads: ask("appversions_events").threads
    resources:
        **ask("appversions_events").resources,
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/appversions_events.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_events.py"


rule appversions_model:
    input:
        events="results/appversions/events.parquet",
        layout_files=by_content(dict.fromkeys(AV_LAYOUT_FILES.values())),
        published="resources/published/appversions_collection_stats.csv",
        published_events="resources/published/appversions_event_stats.csv",
        tolerances="resources/published/appversions_tolerances.csv",
    output:
        stats="results/appversions/model/stats.csv",
        vs_published="results/appversions/model/vs_published.csv",
        reference="results/appversions/model/stats_reference.csv",
        published_vs_model="results/appversions/model/published_vs_model.csv",  # the model's verdicts
    params:
        **_av_params.ModelParams.declare(config),
    threads: ask("appversions_model").threads
    resources:
        **ask("appversions_model").resources,
    log:
        "results/logs/appversions_model.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_model.py"


# Correctness before timing: Get Reports of the loaded version == the model (fails on a mismatch).
rule appversions_correctness:
    input:
        events="results/appversions/events.parquet",
        data=ancient("results/appversions/data/{version}"),
        # The data dir's mtime moves whenever a server runs on it (hence ancient); the load's
        # provenance changes only when the data is (re)loaded, so a reload reruns this check.
        loaded="results/appversions/provenance/load_{version}.json",
        server=server_json(AV["loadtest"]["profile"]),
    output:
        checked=kept("results/appversions/tables/correctness_{version}.csv"),
        provenance=kept("results/appversions/provenance/correctness_{version}.json"),
        midday=kept("results/appversions/tables/midday_reports_{version}.csv"),
    wildcard_constraints:
        version=AV_VERSION_RE,
    params:
        **_av_params.CorrectnessParams.declare(config),
    threads: ask("appversions_correctness").threads
    resources:
        mongod=MONGOD,
        **ask("appversions_correctness").resources,
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/appversions_correctness_{version}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_correctness.py"


# Checked: every loaded version (the load section below loads appversions.load_versions or versions).
AV_CHECKED = list(AV.get("load_versions") or AV["versions"])
add_server_free_targets("appversions", "results/appversions/model/stats.csv", "results/appversions/model/vs_published.csv",
                        "results/appversions/model/published_vs_model.csv")
add_targets("appversions", *expand("results/appversions/tables/correctness_{version}.csv", version=AV_CHECKED),
            *expand("results/appversions/provenance/correctness_{version}.json", version=AV_CHECKED))

# --- load, stats, load test, figures ---
# One data directory per version, loaded through the version's own Bulk Upsert; collStats per
# version; the phased load test per version on that data; then tables and figures of all of them.
# names.py is light (no altair): parsing the workflow must not import the figure code.
from costlab.appversions.names import figure_names as _av_figure_names

AV_LT = AV["loadtest"]
AV_LOADED = list(AV["load_versions"] or AV["versions"])
AV_TESTED = _av_params.tested_versions(config)
# costlab.config.check_semantics has checked that these are subsets of the versions before them.
# The server's metrics during each load test (serverStatus, docker stats): raw/server_metrics_<version>.parquet.
AV_METRICS = expand("results/appversions/raw/server_metrics_{version}.parquet", version=AV_TESTED)
# The authors' closed-loop driver (costlab/appversions/closedloop.py), when asked for, after the scheduled one.
AV_AUTHORS = bool(AV_LT["authors_driver"])
AV_FIGURES = _av_figure_names(AV_TESTED)
AV_TABLES = {name: f"results/appversions/tables/{name}.csv"
             for name in ("collection_stats", "loadtest_bins", "loadtest_steps", "published_vs_reproduced")
             + (("loadtest_authors_steps",) if AV_AUTHORS else ())}
AV_AUTHORS_RAW = expand("results/appversions/raw/loadtest_authors_{version}.parquet", version=AV_TESTED) if AV_AUTHORS else []
AV_AUTHORS_PROVENANCE = (expand("results/appversions/provenance/loadtest_authors_{version}.json", version=AV_TESTED)
                         if AV_AUTHORS else [])
AV_PROVENANCE = (expand("results/appversions/provenance/load_{version}.json", version=AV_LOADED)
                 + expand("results/appversions/provenance/loadtest_{version}.json", version=AV_TESTED))
# the later repeats' loads and load tests (appversions.repeats): targets, not the figures' inputs
AV_REPEAT_PROVENANCE = [f"results/appversions/provenance/{job}_{version}{rep}.json" for rep in AV_REPS[1:]
                        for version in AV_TESTED for job in ("load", "loadtest")]


rule appversions_load:
    input:
        events="results/appversions/events.parquet",   # every repeat loads the same events
        layout_file=lambda wildcards: by_content(AV_LAYOUT_FILES.get(wildcards.version, [])),
        server=server_json(AV_LT["profile"]),
        # repeat r >= 2: after repeat r-1's load test of the version has finished (the mongod resource alone
        # does not order them); repeat 1: nothing
        after=_SERVER_REPEATS.after_previous("results/appversions/raw/loadtest_{version}{rep}.parquet"),
        # and after the authors' driver (run once, on repeat 1's load): on an external deployment a reload
        # replaces the collection it tests
        after_authors=lambda wildcards: (
            [f"results/appversions/raw/loadtest_authors_{wildcards.version}.parquet"]
            if AV_AUTHORS and _SERVER_REPEATS.repeat_of(wildcards.rep) > 1 else []),
    output:
        data=directory("results/appversions/data/{version}{rep}"),
        collstats="results/appversions/raw/collstats_{version}{rep}.parquet",
        provenance="results/appversions/provenance/load_{version}{rep}.json",
    wildcard_constraints:
        version=AV_VERSION_RE,
        rep=_SERVER_REPEATS.constraint,
    params:
        **_av_params.LoadParams.declare(config),
    threads: ask("appversions_load").threads
    resources:
        mongod=MONGOD,
        **ask("appversions_load").resources,
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/appversions_load_{version}{rep}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_load.py"


rule appversions_loadtest:
    input:
        data=ancient("results/appversions/data/{version}{rep}"),
        loaded="results/appversions/provenance/load_{version}{rep}.json",  # a reload reruns the load test
        # correctness before timing (once, on repeat 1's load): a version whose Get Reports differ from the
        # model is not timed
        correctness="results/appversions/tables/correctness_{version}.csv",
        server=server_json(AV_LT["profile"]),
    output:
        raw=kept("results/appversions/raw/loadtest_{version}{rep}.parquet"),
        provenance=kept("results/appversions/provenance/loadtest_{version}{rep}.json"),
        metrics=kept("results/appversions/raw/server_metrics_{version}{rep}.parquet"),
    wildcard_constraints:
        version=AV_VERSION_RE,
        rep=_SERVER_REPEATS.constraint,
    params:
        **_av_params.LoadtestParams.declare(config),
    threads: ask("appversions_loadtest").threads
    resources:
        mongod=MONGOD,
        **ask("appversions_loadtest").resources,
    log:
        "results/logs/appversions_loadtest_{version}{rep}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_loadtest.py"


rule appversions_loadtest_authors:
    """The authors' load-test driver: closed-loop workers sleeping 2*U*m - latency, concurrent Get Reports,
    writes with {w: majority, j: true}, warm-up and idle periods (docs/appversions.md, protocol table)."""
    input:
        data=ancient("results/appversions/data/{version}"),
        loaded="results/appversions/provenance/load_{version}.json",
        correctness="results/appversions/tables/correctness_{version}.csv",
        server=server_json(AV_LT["profile"]),
        after="results/appversions/raw/loadtest_{version}.parquet",   # one load test at a time on the data
    output:
        raw=kept("results/appversions/raw/loadtest_authors_{version}.parquet"),
        provenance=kept("results/appversions/provenance/loadtest_authors_{version}.json"),
        metrics=kept("results/appversions/raw/server_metrics_authors_{version}.parquet"),
    wildcard_constraints:
        version=AV_VERSION_RE,
    params:
        **_av_params.AuthorsLoadtestParams.declare(config),
    threads: ask("appversions_loadtest_authors").threads
    resources:
        mongod=MONGOD,
        **ask("appversions_loadtest_authors").resources,
    log:
        "results/logs/appversions_loadtest_authors_{version}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_loadtest_authors.py"


rule appversions_tables:
    input:
        collstats=expand("results/appversions/raw/collstats_{version}.parquet", version=AV_LOADED),
        load_provenance=expand("results/appversions/provenance/load_{version}.json", version=AV_LOADED),
        # every repeat's load test (appversions.repeats; repeat 1 first): the findings over the repeats
        loadtest_raw=expand("results/appversions/raw/loadtest_{version}{rep}.parquet", rep=AV_REPS, version=AV_TESTED),
        loadtest_provenance=expand("results/appversions/provenance/loadtest_{version}{rep}.json", rep=AV_REPS,
                                   version=AV_TESTED),
        loadtest_authors_raw=AV_AUTHORS_RAW,
        loadtest_authors_provenance=AV_AUTHORS_PROVENANCE,
        model="results/appversions/model/stats.csv",
        model_reference="results/appversions/model/stats_reference.csv",
        midday=expand("results/appversions/tables/midday_reports_{version}.csv", version=AV_LOADED),
        published_collection="resources/published/appversions_collection_stats.csv",
        published_events="resources/published/appversions_event_stats.csv",
        facts="resources/published/appversions_loadtest_facts.csv",
        tolerances="resources/published/appversions_tolerances.csv",
    output:
        **AV_TABLES,
    params:
        **_av_params.TablesParams.declare(config),
    log:
        "results/logs/appversions_tables.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_tables.py"


rule appversions_figures:
    input:
        collection_stats=AV_TABLES["collection_stats"],
        loadtest_bins=AV_TABLES["loadtest_bins"],
        facts="resources/published/appversions_loadtest_facts.csv",
        metrics=AV_METRICS,
        provenance=AV_PROVENANCE,
    output:
        [report(f"results/appversions/figures/{name}.png", caption=f"captions/appversions_{name}.rst", category="appversions") for name in AV_FIGURES],
        [f"results/appversions/figures/{name}.{ext}" for name in AV_FIGURES for ext in ("svg", "vl.json")],
    params:
        **_av_params.FiguresParams.declare(config),
    log:
        "results/logs/appversions_figures.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_figures.py"


AV_AUTHORS_FIGURES = [f"authors_{name}" for name in AV_FIGURES if name.startswith("loadtest_")] if AV_AUTHORS else []


if AV_AUTHORS:

    rule appversions_authors_figures:
        """The authors' driver's load-test figures (rates by start time, median as 'mean', server metrics)."""
        input:
            steps=AV_TABLES["loadtest_authors_steps"],
            metrics=expand("results/appversions/raw/server_metrics_authors_{version}.parquet", version=AV_TESTED),
            provenance=AV_AUTHORS_PROVENANCE,
        output:
            [report(f"results/appversions/figures/{name}.png", caption="captions/appversions_authors_loadtest.rst", category="appversions") for name in AV_AUTHORS_FIGURES],
            [f"results/appversions/figures/{name}.{ext}" for name in AV_AUTHORS_FIGURES for ext in ("svg", "vl.json")],
        params:
            **_av_params.FiguresParams.declare(config),
        log:
            "results/logs/appversions_authors_figures.log",
        conda:
            CONDA_ENV
        script:
            "../scripts/appversions_authors_figures.py"


add_targets("appversions", *AV_TABLES.values(), *AV_PROVENANCE, *AV_REPEAT_PROVENANCE, *AV_AUTHORS_PROVENANCE,
            *[f"results/appversions/figures/{name}.{ext}" for name in AV_AUTHORS_FIGURES for ext in ("png", "svg", "vl.json")],
            *[f"results/appversions/figures/{name}.{ext}" for name in AV_FIGURES for ext in ("png", "svg", "vl.json")])


# ---- the engine lab: each version's collection and indexes stored by WiredTiger, no server -------
AV_ENGINE = {"storage": "results/appversions/engine/storage.csv",
             "verdicts": "results/appversions/engine/published_vs_engine.csv",
             "provenance": "results/appversions/engine/provenance.json"}


rule appversions_engine_version:
    """One version's storage and index size with its block compressor (substitutes recorded), grown
    by its own Bulk Upsert stream: one job per version and repeat (engine.appversions.repeats, each
    repeat its own events seed), so the engine lab's versions share the cores."""
    input:
        layout_file=lambda wildcards: by_content(AV_LAYOUT_FILES.get(wildcards.version, [])),
        # your own events (appversions.events): grown from the events job's file, not generated
        events=["results/appversions/events.parquet"] if AV_EVENTS_FILE else [],
    output:
        row="results/appversions/engine/versions/{version}/{rep}.json",
    wildcard_constraints:
        version=AV_VERSION_RE,
        rep=_ENGINE_REPEATS.constraint,
    params:
        **_av_params.EngineVersionParams.declare(config),
    threads: ask("appversions_engine_version").threads
    resources:
        **ask("appversions_engine_version").resources,
    log:
        "results/logs/appversions_engine_{version}_{rep}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_engine_version.py"


rule appversions_engine:
    """The versions' engine runs (every repeat of every version) as one storage table, its verdicts
    against the published table, judged by each value's interval over the repeats, and one provenance
    holding each version job's."""
    input:
        published="resources/published/appversions_collection_stats.csv",
        tolerances="resources/published/appversions_tolerances.csv",
        # the engine lab's run-to-run spread, measured once per scale (costlab/engine/spread.py)
        spread="resources/engine_spread/appversions.csv",
        versions=expand("results/appversions/engine/versions/{version}/{rep}.json",
                        version=config["appversions"]["versions"],
                        rep=_ENGINE_REPEATS.wildcards(config, "appversions")),
    output:
        **AV_ENGINE,
    params:
        **_av_params.EngineParams.declare(config),
    log:
        "results/logs/appversions_engine.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_engine.py"


if ENGINE_ON:
    add_server_free_targets("appversions", *AV_ENGINE.values())


rule appversions_engine_figure:
    """The engine lab's figure, labelled "WiredTiger engine lab — not a mongod run": needs no server."""
    input:
        storage=AV_ENGINE["storage"],
    output:
        png=report("results/appversions/figures/engine_storage_per_event.png", caption="captions/appversions_engine_storage_per_event.rst", category="appversions"),
        svg="results/appversions/figures/engine_storage_per_event.svg",
        json="results/appversions/figures/engine_storage_per_event.vl.json",
    log:
        "results/logs/appversions_engine_figure.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_engine_figure.py"


if ENGINE_ON:
    add_server_free_targets("appversions", *[f"results/appversions/figures/engine_storage_per_event.{ext}" for ext in ("png", "svg", "vl.json")])


# ---- the engine lab against mongod on the same work (docs/engine-lab.md#mongod-against-the-engine-lab) --
AV_VS_MONGOD = {"csv": "results/appversions/engine_vs_mongod.csv",
                "png": report("results/appversions/figures/engine_vs_mongod.png",
                              caption="captions/appversions_engine_vs_mongod.rst", category="appversions"),
                "svg": "results/appversions/figures/engine_vs_mongod.svg"}


rule appversions_engine_vs_mongod_version:
    """One loaded version grown again in the engine lab from the events the server loaded (its workers,
    batches, cache, topology and checkpoints): its sizes beside the server's collStats."""
    input:
        events="results/appversions/events.parquet",
        collstats="results/appversions/raw/collstats_{version}.parquet",
        provenance="results/appversions/provenance/load_{version}.json",
        layout_file=lambda wildcards: by_content(AV_LAYOUT_FILES.get(wildcards.version, [])),
    output:
        row="results/appversions/engine_vs_mongod/{version}.json",
    wildcard_constraints:
        version=AV_VERSION_RE,
    params:
        **_av_params.EngineVsMongodParams.declare(config),
    log:
        "results/logs/appversions_engine_vs_mongod_{version}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_engine_vs_mongod_version.py"


rule appversions_engine_vs_mongod:
    """The load-tested versions' lab runs beside their loads: data, documents, storage and index per event
    (appV1 and appV6R4 at the defaults, a lab run of 31-112 s each; every version in config/full.yaml)."""
    input:
        versions=expand("results/appversions/engine_vs_mongod/{version}.json", version=AV_TESTED),
    output:
        **AV_VS_MONGOD,
    log:
        "results/logs/appversions_engine_vs_mongod.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_engine_vs_mongod.py"


if ENGINE_ON:
    add_targets("appversions", *AV_VS_MONGOD.values())
