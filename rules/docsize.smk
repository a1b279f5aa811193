# Study docsize: what a two-field projection still reads as orders grow from 1 to 64 KB.
# model (no server) -> load one data dir per dataset -> three runs per dataset -> tables -> figures.
# Each rule's params: costlab/docsize/params.py (what reruns a job is what it reads).
import costlab.docsize.params as _ds_params
from costlab.docsize.documents import sample_path as _ds_sample_path
from costlab.repeats import SERVER_REPEATS as _SERVER_REPEATS

# The datasets, runs, tables and your documents (costlab/docsize/targets.py).
DS = PLAN.names("docsize")
# docsize.repeats: each measuring job once per repeat, its own job; {rep} is the repeat's mark (costlab.repeats:
# repeat 1 keeps the paths a single run always had). The loads take no {rep}.
DS_REPS = _SERVER_REPEATS.wildcards(config, "docsize")


rule docsize_model:
    input:
        published="resources/published/docsize_collections.csv",
        facts="resources/published/docsize_facts.csv",
    output:
        collections="results/docsize/model/collections.csv",
        datasets="results/docsize/model/datasets.csv",
        published_vs_model="results/docsize/model/published_vs_model.csv",  # the model's verdicts
    params:
        **_ds_params.ModelParams.declare(config),
    log:
        "results/logs/docsize_model.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_model.py"


rule docsize_load:
    input:
        server=server_json("standalone"),  # costlab.docsize.load loads on the standalone profile
    output:
        data=directory("results/docsize/data/{dataset}"),
        provenance="results/docsize/provenance/load_{dataset}.json",
    wildcard_constraints:
        dataset="orders_[1-9][0-9]*k(_tail|_split)?",
    params:
        **_ds_params.LoadParams.declare(config),
    threads: ask("docsize_load").threads
    resources:
        mongod=MONGOD,
        **ask("docsize_load").resources,
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/docsize_load_{dataset}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_load.py"


rule docsize_measure:
    input:
        data=ancient("results/docsize/data/{dataset}"),
        # The data dir's mtime moves whenever a server runs on it (hence ancient); the load's
        # provenance changes only when the data is (re)loaded, so a reload reruns the measurements.
        loaded="results/docsize/provenance/load_{dataset}.json",
        server=lambda wildcards: server_json(DS.run_profiles[wildcards.run]),
    output:
        raw=kept("results/docsize/raw/{run}__{dataset}{rep}.parquet"),
        collections=kept("results/docsize/raw/collstats_{run}__{dataset}{rep}.parquet"),
        provenance=kept("results/docsize/provenance/{run}__{dataset}{rep}.json"),
    wildcard_constraints:
        dataset="orders_[1-9][0-9]*k(_tail|_split)?",
        run=DS.run_re,
        rep=_SERVER_REPEATS.constraint,
    params:
        **_ds_params.MeasureParams.declare(config),
    threads: ask("docsize_measure").threads
    resources:
        mongod=MONGOD,
        **ask("docsize_measure").resources,
    log:
        "results/logs/docsize_measure_{run}__{dataset}{rep}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_measure.py"


rule docsize_tables:
    input:
        raw=expand("results/docsize/raw/{run}__{dataset}{rep}.parquet", run=DS.runs, dataset=DS.datasets, rep=DS_REPS),
        collections=expand("results/docsize/raw/collstats_{run}__{dataset}{rep}.parquet", run=DS.runs, dataset=DS.datasets,
                           rep=DS_REPS),
        model="results/docsize/model/datasets.csv",
        published_collections="resources/published/docsize_collections.csv",
        published_queries="resources/published/docsize_query_tables.csv",
        tolerances="resources/published/docsize_tolerances.csv",
        facts="resources/published/docsize_facts.csv",
    output:
        **DS.tables,
    params:
        **_ds_params.TablesParams.declare(config),
    log:
        "results/logs/docsize_tables.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_tables.py"


rule docsize_figures:
    input:
        summary=DS.tables["summary"],
        published_queries="resources/published/docsize_query_tables.csv",
        provenance=DS.measure_provenance,
    params:
        **_ds_params.FiguresParams.declare(config),
    output:
        report("results/docsize/figures/time_by_size.png", caption="captions/docsize_time_by_size.rst", category="docsize"),
        "results/docsize/figures/time_by_size.svg",
        "results/docsize/figures/time_by_size.vl.json",
        report("results/docsize/figures/bytes_read.png", caption="captions/docsize_bytes_read.rst", category="docsize"),
        "results/docsize/figures/bytes_read.svg",
        "results/docsize/figures/bytes_read.vl.json",
        report("results/docsize/figures/server_vs_client.png", caption="captions/docsize_server_vs_client.rst", category="docsize"),
        "results/docsize/figures/server_vs_client.svg",
        "results/docsize/figures/server_vs_client.vl.json",
    log:
        "results/logs/docsize_figures.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_figures.py"


# ---- the engine lab: the same protocol on WiredTiger opened like mongod, no server ------------


rule docsize_engine:
    """Bytes and pages read into the cache per query, per size, shape, cache and window mode."""
    input:
        published_queries="resources/published/docsize_query_tables.csv",
        tolerances="resources/published/docsize_tolerances.csv",
    output:
        **DS.engine,
    params:
        **_ds_params.EngineParams.declare(config),
    threads: ask("docsize_engine").threads
    # the engine lab's longest job (about 140 CPU s) starts first, so the other jobs fill the second core beside it
    # instead of waiting for it at the end (README: the first run)
    priority: 50
    resources:
        **ask("docsize_engine").resources,
    log:
        "results/logs/docsize_engine.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_engine.py"


rule docsize_engine_figure:
    """The engine lab's figure, labelled "WiredTiger engine lab — not a mongod run": needs no server."""
    input:
        cache_reads=DS.engine["cache_reads"],
        published_queries="resources/published/docsize_query_tables.csv",
    output:
        png=report("results/docsize/figures/engine_cache_reads.png", caption="captions/docsize_engine_cache_reads.rst", category="docsize"),
        svg="results/docsize/figures/engine_cache_reads.svg",
        json="results/docsize/figures/engine_cache_reads.vl.json",
    log:
        "results/logs/docsize_engine_figure.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_engine_figure.py"


# ---- your own documents (docsize.documents, docs/variants.md): each its own engine-lab job ----------
# `snakemake results/docsize/engine/documents/cache_reads_<name>.csv` builds that document alone.


rule docsize_document_engine:
    """One declared document, grown to each size (or as it is), measured with the orders' engine protocol."""
    input:
        sample=lambda wildcards: by_content(str(_ds_sample_path(config["docsize"]["documents"][wildcards.document]["sample"]))),
    output:
        cache_reads="results/docsize/engine/documents/cache_reads_{document}.csv",
        queries="results/docsize/engine/documents/queries_{document}.csv",
        provenance="results/docsize/engine/documents/provenance_{document}.json",
    wildcard_constraints:
        document=DS.document_re,
    params:
        **_ds_params.DocumentEngineParams.declare(config),
    threads: ask("docsize_document_engine").threads
    resources:
        **ask("docsize_document_engine").resources,
    log:
        "results/logs/docsize_document_engine_{document}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_document_engine.py"


rule docsize_documents_findings:
    """Each document's bytes read per query over its compare_to's (the orders'): rows of "Your variants"."""
    input:
        orders=DS.engine["cache_reads"],
        documents=DS.document_tables,
    output:
        DS.document_findings,
    params:
        **_ds_params.DocumentFindingsParams.declare(config),
    log:
        "results/logs/docsize_documents_findings.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_documents_findings.py"


# Your documents on a server: each document at each size its own dataset doc_<name>_<size>, loaded and
# measured with the orders' protocol (costlab/docsize/document_runs.py), then their rows beside the orders'.


rule docsize_document_load:
    input:
        server=server_json("standalone"),
        sample=lambda wildcards: by_content(str(_ds_sample_path(config["docsize"]["documents"][wildcards.document]["sample"]))),
    output:
        data=directory("results/docsize/data/doc_{document}_{size}"),
        provenance="results/docsize/provenance/load_doc_{document}_{size}.json",
    wildcard_constraints:
        document=DS.document_re,
        size="[1-9][0-9]*k|sample",
    params:
        **_ds_params.DocumentLoadParams.declare(config),
    threads: ask("docsize_document_load").threads
    resources:
        mongod=MONGOD,
        **ask("docsize_document_load").resources,
    log:
        "results/logs/docsize_document_load_{document}_{size}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_document_load.py"


rule docsize_document_measure:
    input:
        data=ancient("results/docsize/data/doc_{document}_{size}"),
        loaded="results/docsize/provenance/load_doc_{document}_{size}.json",
        server=lambda wildcards: server_json(DS.run_profiles[wildcards.run]),
    output:
        raw=kept("results/docsize/raw/{run}__doc_{document}_{size}.parquet"),
        provenance=kept("results/docsize/provenance/{run}__doc_{document}_{size}.json"),
    wildcard_constraints:
        document=DS.document_re,
        size="[1-9][0-9]*k|sample",
        run=DS.run_re,
    params:
        **_ds_params.DocumentMeasureParams.declare(config),
    threads: ask("docsize_document_measure").threads
    resources:
        mongod=MONGOD,
        **ask("docsize_document_measure").resources,
    log:
        "results/logs/docsize_document_measure_{run}__{document}_{size}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_document_measure.py"


rule docsize_documents_tables:
    """Each document's client time, server time and bytes read per query over the orders' (same run, size and
    shape): rows of "Your variants"."""
    input:
        orders=expand("results/docsize/raw/{run}__orders_{size}k.parquet", run=DS.runs, size=DS.sizes_kb),
        documents=DS.document_raw,
    output:
        DS.document_server_findings,
    params:
        **_ds_params.DocumentFindingsParams.declare(config),
    log:
        "results/logs/docsize_documents_tables.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_documents_tables.py"


# ---- the engine lab against mongod on the same work (docs/engine-lab.md#mongod-against-the-engine-lab) --


rule docsize_engine_vs_mongod:
    """The server's small-cache run (each size and repeat) beside the engine lab's on the same documents,
    windows and cache: bytes read into the cache per query, per size, shape and repeat, with their band."""
    input:
        raw=expand("results/docsize/raw/small_cache__{dataset}{rep}.parquet", dataset=DS.base_datasets, rep=DS_REPS),
        collections=expand("results/docsize/raw/collstats_small_cache__{dataset}{rep}.parquet", dataset=DS.base_datasets,
                           rep=DS_REPS),
        provenance=expand("results/docsize/provenance/small_cache__{dataset}{rep}.json", dataset=DS.base_datasets,
                          rep=DS_REPS),
        engine_queries=DS.engine["queries"],
    output:
        csv=DS.vs_mongod["csv"],
        png=report(DS.vs_mongod["png"], caption="captions/docsize_engine_vs_mongod.rst", category="docsize"),
        svg=DS.vs_mongod["svg"],
    params:
        **_ds_params.EngineVsMongodParams.declare(config),
    log:
        "results/logs/docsize_engine_vs_mongod.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/docsize_engine_vs_mongod.py"

