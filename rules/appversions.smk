# Study appversions: the 14 application versions of "The Cost of Not Knowing MongoDB".
# events -> model (no server) -> per version: load, collStats, correctness, load test -> tables -> figures.
# Each rule's params: costlab/appversions/params.py (what reruns a job is what it reads).
import costlab.appversions.params as _av_params
from costlab.appversions.rehearsal import rehearse_config as _av_rehearse_config

# The names below (costlab/appversions/targets.py): your own versions (appversions.variants) are registered
# versions already, so each is a version everywhere below (docs/variants.md); every appversions script
# registers them again in its own process.
AV = PLAN.names("appversions")
# Each variant's layout rehearsed now, before any job: its statements through the engine lab's update
# compiler, its size formula against the documents they build (ConfigError in one line otherwise).
_av_rehearse_config(config)
# appversions.repeats: each load-tested version loaded and load tested once per repeat; {rep} is the repeat's mark
# (costlab.repeats: repeat 1 keeps the paths a single run always had). A load test writes into the collection it
# measures, so each later repeat first reloads the same events into its own data directory.
# engine.appversions.repeats: each version's engine job once per repeat, {rep} its mark likewise.
from costlab.repeats import ENGINE_REPEATS as _ENGINE_REPEATS
from costlab.repeats import SERVER_REPEATS as _SERVER_REPEATS

AV_REPS = _SERVER_REPEATS.wildcards(config, "appversions")


# --- events and model ---


rule appversions_events:
    input:
        # appversions.events: your own events file (docs/variants.md), checked with the config, read by content;
        # the events job then writes it, integer-coded and in date order, in place of the generator's.
        events_file=by_content(AV.events_file),
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
        # a variant's layout file (appversions.variants.<name>.layout_file): an input of the jobs using its layout
        layout_files=by_content(dict.fromkeys(AV.layout_files.values())),
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
        server=server_json(AV.loadtest_profile),
    output:
        checked=kept("results/appversions/tables/correctness_{version}.csv"),
        provenance=kept("results/appversions/provenance/correctness_{version}.json"),
        midday=kept("results/appversions/tables/midday_reports_{version}.csv"),
    wildcard_constraints:
        version=AV.version_re,
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


# --- load, stats, load test, figures ---
# One data directory per version, loaded through the version's own Bulk Upsert; collStats per
# version; the phased load test per version on that data; then tables and figures of all of them.
# The authors' closed-loop driver (costlab/appversions/closedloop.py), when asked for, after the scheduled one.


rule appversions_load:
    input:
        events="results/appversions/events.parquet",   # every repeat loads the same events
        layout_file=lambda wildcards: by_content(AV.layout_files.get(wildcards.version, [])),
        server=server_json(AV.loadtest_profile),
        # repeat r >= 2: after repeat r-1's load test of the version has finished (the mongod resource alone
        # does not order them); repeat 1: nothing
        after=_SERVER_REPEATS.after_previous("results/appversions/raw/loadtest_{version}{rep}.parquet"),
        # and after the authors' driver (run once, on repeat 1's load): on an external deployment a reload
        # replaces the collection it tests
        after_authors=lambda wildcards: (
            [f"results/appversions/raw/loadtest_authors_{wildcards.version}.parquet"]
            if AV.authors and _SERVER_REPEATS.repeat_of(wildcards.rep) > 1 else []),
    output:
        data=directory("results/appversions/data/{version}{rep}"),
        collstats="results/appversions/raw/collstats_{version}{rep}.parquet",
        provenance="results/appversions/provenance/load_{version}{rep}.json",
    wildcard_constraints:
        version=AV.version_re,
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
        server=server_json(AV.loadtest_profile),
    output:
        raw=kept("results/appversions/raw/loadtest_{version}{rep}.parquet"),
        provenance=kept("results/appversions/provenance/loadtest_{version}{rep}.json"),
        metrics=kept("results/appversions/raw/server_metrics_{version}{rep}.parquet"),
    wildcard_constraints:
        version=AV.version_re,
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
        server=server_json(AV.loadtest_profile),
        after="results/appversions/raw/loadtest_{version}.parquet",   # one load test at a time on the data
    output:
        raw=kept("results/appversions/raw/loadtest_authors_{version}.parquet"),
        provenance=kept("results/appversions/provenance/loadtest_authors_{version}.json"),
        metrics=kept("results/appversions/raw/server_metrics_authors_{version}.parquet"),
    wildcard_constraints:
        version=AV.version_re,
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
        collstats=expand("results/appversions/raw/collstats_{version}.parquet", version=AV.loaded),
        load_provenance=expand("results/appversions/provenance/load_{version}.json", version=AV.loaded),
        # every repeat's load test (appversions.repeats; repeat 1 first): the findings over the repeats
        loadtest_raw=expand("results/appversions/raw/loadtest_{version}{rep}.parquet", rep=AV_REPS, version=AV.tested),
        loadtest_provenance=expand("results/appversions/provenance/loadtest_{version}{rep}.json", rep=AV_REPS,
                                   version=AV.tested),
        loadtest_authors_raw=AV.authors_raw,
        loadtest_authors_provenance=AV.authors_provenance,
        model="results/appversions/model/stats.csv",
        model_reference="results/appversions/model/stats_reference.csv",
        midday=expand("results/appversions/tables/midday_reports_{version}.csv", version=AV.loaded),
        published_collection="resources/published/appversions_collection_stats.csv",
        published_events="resources/published/appversions_event_stats.csv",
        facts="resources/published/appversions_loadtest_facts.csv",
        tolerances="resources/published/appversions_tolerances.csv",
    output:
        **AV.tables,
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
        collection_stats=AV.tables["collection_stats"],
        loadtest_bins=AV.tables["loadtest_bins"],
        facts="resources/published/appversions_loadtest_facts.csv",
        # the server's metrics during each load test (serverStatus, docker stats)
        metrics=AV.metrics,
        provenance=AV.provenance,
    output:
        [report(f"results/appversions/figures/{name}.png", caption=f"captions/appversions_{name}.rst", category="appversions") for name in AV.figures],
        [f"results/appversions/figures/{name}.{ext}" for name in AV.figures for ext in ("svg", "vl.json")],
    params:
        **_av_params.FiguresParams.declare(config),
    log:
        "results/logs/appversions_figures.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_figures.py"


rule appversions_authors_figures:
    """The authors' driver's load-test figures (rates by start time, median as 'mean', server metrics): `all`
    asks for them when appversions.loadtest.authors_driver is on."""
    input:
        steps=AV.authors_steps,
        metrics=expand("results/appversions/raw/server_metrics_authors_{version}.parquet", version=AV.tested),
        provenance=AV.authors_provenance,
    output:
        [report(f"results/appversions/figures/{name}.png", caption="captions/appversions_authors_loadtest.rst", category="appversions") for name in AV.authors_figures],
        [f"results/appversions/figures/{name}.{ext}" for name in AV.authors_figures for ext in ("svg", "vl.json")],
    params:
        **_av_params.FiguresParams.declare(config),
    log:
        "results/logs/appversions_authors_figures.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_authors_figures.py"


# ---- the engine lab: each version's collection and indexes stored by WiredTiger, no server -------


rule appversions_engine_version:
    """One version's storage and index size with its block compressor (substitutes recorded), grown
    by its own Bulk Upsert stream: one job per version and repeat (engine.appversions.repeats, each
    repeat its own events seed), so the engine lab's versions share the cores."""
    input:
        layout_file=lambda wildcards: by_content(AV.layout_files.get(wildcards.version, [])),
        # your own events (appversions.events): grown from the events job's file, not generated
        events=["results/appversions/events.parquet"] if AV.events_file else [],
    output:
        row="results/appversions/engine/versions/{version}/{rep}.json",
    wildcard_constraints:
        version=AV.version_re,
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
                        version=AV.versions,
                        rep=_ENGINE_REPEATS.wildcards(config, "appversions")),
    output:
        **AV.engine,
    params:
        **_av_params.EngineParams.declare(config),
    log:
        "results/logs/appversions_engine.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_engine.py"


rule appversions_engine_figure:
    """The engine lab's figure, labelled "WiredTiger engine lab — not a mongod run": needs no server."""
    input:
        storage=AV.engine["storage"],
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


# ---- the engine lab against mongod on the same work (docs/engine-lab.md#mongod-against-the-engine-lab) --


rule appversions_engine_vs_mongod_version:
    """One loaded version grown again in the engine lab from the events the server loaded (its workers,
    batches, cache, topology and checkpoints): its sizes beside the server's collStats."""
    input:
        events="results/appversions/events.parquet",
        collstats="results/appversions/raw/collstats_{version}.parquet",
        provenance="results/appversions/provenance/load_{version}.json",
        layout_file=lambda wildcards: by_content(AV.layout_files.get(wildcards.version, [])),
    output:
        row="results/appversions/engine_vs_mongod/{version}.json",
    wildcard_constraints:
        version=AV.version_re,
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
        versions=expand("results/appversions/engine_vs_mongod/{version}.json", version=AV.tested),
    output:
        csv=AV.vs_mongod["csv"],
        png=report(AV.vs_mongod["png"], caption="captions/appversions_engine_vs_mongod.rst", category="appversions"),
        svg=AV.vs_mongod["svg"],
    log:
        "results/logs/appversions_engine_vs_mongod.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/appversions_engine_vs_mongod.py"

