# Study arraygrowth: journal bytes of a growing array, standalone vs replica set.
# Source: "Linear array growth in MongoDB". Logic in costlab/arraygrowth; scripts are thin.


# Each rule's params: costlab/arraygrowth/params.py (what reruns a job is what it reads).
import costlab.arraygrowth.params as _ag_params

# The runs, tables and engine files, with the fallback sweep and your elements (arraygrowth.elements,
# docs/variants.md) where the config has them (costlab/arraygrowth/targets.py).
AG = PLAN.names("arraygrowth")


rule arraygrowth_run:
    """One server per (profile, workload); every N on a fresh collection; serverStatus deltas."""
    input:
        server=server_json("{ag_profile}"),
        element_file=lambda wc: by_content([AG.element_files[wc.ag_workload]] if wc.ag_workload in AG.element_files else []),
    output:
        raw=kept("results/arraygrowth/raw/{ag_profile}_{ag_workload}.parquet"),
        provenance=kept("results/arraygrowth/provenance/{ag_profile}_{ag_workload}.json"),
    wildcard_constraints:
        ag_profile="standalone|standalone-small-cache|replset-1",
        ag_workload=AG.workload_re,
    params:
        **_ag_params.RunParams.declare(config),
    threads: ask("arraygrowth_run").threads
    resources:
        mongod=1,
        **ask("arraygrowth_run").resources,
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/arraygrowth_run_{ag_profile}_{ag_workload}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_run.py"


rule arraygrowth_fallback_model:
    """Server-free: which updates MongoDB's size/logging conditions leave eligible for a delta."""
    output:
        AG.model,
    params:
        **_ag_params.FallbackSweepParams.declare(config),
    log:
        "results/logs/arraygrowth_fallback_model.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_model.py"


rule arraygrowth_fallback:
    """The fallback sweep on one profile: every variant on a fresh collection."""
    input:
        server=server_json("{ag_profile}"),
    output:
        raw=kept("results/arraygrowth/raw/fallback_{ag_profile}.parquet"),
        provenance=kept("results/arraygrowth/provenance/fallback_{ag_profile}.json"),
    wildcard_constraints:
        ag_profile="standalone|standalone-small-cache|replset-1",
    params:
        **_ag_params.FallbackSweepParams.declare(config),
    threads: ask("arraygrowth_fallback").threads
    resources:
        mongod=1,
        **ask("arraygrowth_fallback").resources,
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/arraygrowth_fallback_{ag_profile}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_fallback.py"


rule arraygrowth_tables:
    input:
        raw=AG.raw,
        provenance=AG.provenance,
        **AG.published,
        **AG.fallback_input,
        **AG.element_input,
    output:
        **AG.tables,
    log:
        "results/logs/arraygrowth_tables.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_tables.py"


rule arraygrowth_figure_log_bytes:
    input:
        raw=AG.raw,
        provenance=AG.provenance,
        published=AG.published["published_log_bytes"],
    output:
        png=report("results/arraygrowth/figures/log_bytes_vs_n.png",
                   caption="captions/arraygrowth_log_bytes_vs_n.rst", category="arraygrowth"),
        svg="results/arraygrowth/figures/log_bytes_vs_n.svg",
        json="results/arraygrowth/figures/log_bytes_vs_n.vl.json",
    params:
        **_ag_params.FigureParams.declare(config, "log_bytes"),
    log:
        "results/logs/arraygrowth_figure_log_bytes.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_figures.py"


rule arraygrowth_figure_bytes_per_op:
    input:
        raw=AG.raw,
        provenance=AG.provenance,
        published=AG.published["published_log_bytes"],
    output:
        png=report("results/arraygrowth/figures/bytes_per_op_vs_n.png",
                   caption="captions/arraygrowth_bytes_per_op_vs_n.rst", category="arraygrowth"),
        svg="results/arraygrowth/figures/bytes_per_op_vs_n.svg",
        json="results/arraygrowth/figures/bytes_per_op_vs_n.vl.json",
    params:
        **_ag_params.FigureParams.declare(config, "bytes_per_op"),
    log:
        "results/logs/arraygrowth_figure_bytes_per_op.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_figures.py"


rule arraygrowth_figure_fallback:
    input:
        raw=AG.raw,
        provenance=AG.provenance,
        published=AG.published["published_log_bytes"],
        fallback_raw=AG.fallback_raw,
        fallback_provenance=AG.fallback_provenance,
        model=AG.model,
    output:
        png=report("results/arraygrowth/figures/fallback_sweep.png",
                   caption="captions/arraygrowth_fallback_sweep.rst", category="arraygrowth"),
        svg="results/arraygrowth/figures/fallback_sweep.svg",
        json="results/arraygrowth/figures/fallback_sweep.vl.json",
    params:
        **_ag_params.FigureParams.declare(config, "fallback"),
    log:
        "results/logs/arraygrowth_figure_fallback.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_figures.py"


# ---- the engine lab: WiredTiger driven like mongod, no server (docs/engine-lab.md) ------------
# one repeat's runs (engine.arraygrowth.repeats, each repeat its own job: docs/uncertainty.md); {rep} is the
# repeat's folder, rep1, rep2, ... (costlab.repeats)
from costlab.repeats import ENGINE_REPEATS as _ENGINE_REPEATS

AG_REPS = _ENGINE_REPEATS.wildcards(config, "arraygrowth")


rule arraygrowth_engine_repeat:
    """One repeat of the N sweep (and fallback sweep) on WiredTiger opened like mongod: needs no server."""
    input:
        element_files=by_content(AG.element_files.values()),
    output:
        **AG.engine_repeat,
    wildcard_constraints:
        rep=_ENGINE_REPEATS.constraint,
    params:
        **_ag_params.EngineParams.declare(config),
    threads: ask("arraygrowth_engine_repeat").threads
    # the engine lab's second-longest job (about 50 CPU s) starts next: longest first
    priority: 40
    resources:
        **ask("arraygrowth_engine_repeat").resources,
    log:
        "results/logs/arraygrowth_engine_{rep}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_engine_repeat.py"


rule arraygrowth_engine:
    """The repeats merged: medians, each repeat's values, and verdicts judged by their interval over the
    repeats."""
    input:
        **AG.published,
        **{f"rep_{name}": expand(path, rep=AG_REPS) for name, path in AG.engine_repeat.items()},
    output:
        **AG.engine,
    params:
        **_ag_params.EngineMergeParams.declare(config),
    log:
        "results/logs/arraygrowth_engine.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_engine.py"


rule arraygrowth_engine_figure:
    """The engine lab's figure, labelled "WiredTiger engine lab — not a mongod run": needs no server."""
    input:
        log_bytes=AG.engine["log_bytes"],
        fit=AG.engine["fit"],
        published=AG.published["published_log_bytes"],
    output:
        png=report("results/arraygrowth/figures/engine_log_bytes.png", caption="captions/arraygrowth_engine_log_bytes.rst", category="arraygrowth"),
        svg="results/arraygrowth/figures/engine_log_bytes.svg",
        json="results/arraygrowth/figures/engine_log_bytes.vl.json",
    log:
        "results/logs/arraygrowth_engine_figure.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_engine_figure.py"


# ---- the engine lab against mongod on the same work (docs/engine-lab.md#mongod-against-the-engine-lab) --


rule arraygrowth_engine_vs_mongod:
    """Every server run again in the engine lab (same documents, namespace, order and N; the measured
    mongod's per-write rules): journal bytes and cursor calls per write, side by side, with their bands."""
    input:
        raw=AG.raw,
        provenance=AG.provenance,
    output:
        csv=AG.vs_mongod["csv"],
        png=report(AG.vs_mongod["png"], caption="captions/arraygrowth_engine_vs_mongod.rst", category="arraygrowth"),
        svg=AG.vs_mongod["svg"],
    params:
        **_ag_params.EngineVsMongodParams.declare(config),
    log:
        "results/logs/arraygrowth_engine_vs_mongod.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_engine_vs_mongod.py"

