# Study arraygrowth: journal bytes of a growing array, standalone vs replica set.
# Source: "Linear array growth in MongoDB". Logic in costlab/arraygrowth; scripts are thin.


# Each rule's params: costlab/arraygrowth/params.py (what reruns a job is what it reads).
import costlab.arraygrowth.params as _ag_params

AG = config["arraygrowth"]
AG_FALLBACK = AG["fallback"]
AG_FALLBACK_ON = AG_FALLBACK["enabled"]
# your own elements (arraygrowth.elements, docs/variants.md): every one in the engine lab; one also listed in
# arraygrowth.workloads on a server too, as a workload of its own (raw and provenance beside the article's)
from costlab.arraygrowth.elements import element_files as _ag_element_files
from costlab.arraygrowth.elements import server_elements as _ag_server_elements

AG_ELEMENTS = AG.get("elements") or {}
AG_ELEMENT_FILES = _ag_element_files(AG)
AG_SERVER_ELEMENTS = _ag_server_elements(AG)
AG_WORKLOADS = [w for w in AG["workloads"] if w not in AG_SERVER_ELEMENTS]
AG_RAW = expand("results/arraygrowth/raw/{profile}_{workload}.parquet",
                profile=AG["profiles"], workload=AG_WORKLOADS)
AG_PROV = expand("results/arraygrowth/provenance/{profile}_{workload}.json",
                 profile=AG["profiles"], workload=AG_WORKLOADS)
AG_EL_RAW = expand("results/arraygrowth/raw/{profile}_{workload}.parquet",
                   profile=AG["profiles"], workload=AG_SERVER_ELEMENTS)
AG_EL_PROV = expand("results/arraygrowth/provenance/{profile}_{workload}.json",
                    profile=AG["profiles"], workload=AG_SERVER_ELEMENTS)
AG_EL_INPUT = {"element_raw": AG_EL_RAW, "element_provenance": AG_EL_PROV} if AG_SERVER_ELEMENTS else {}
AG_FB_RAW = expand("results/arraygrowth/raw/fallback_{profile}.parquet", profile=AG["profiles"])
AG_FB_PROV = expand("results/arraygrowth/provenance/fallback_{profile}.json", profile=AG["profiles"])
AG_MODEL = "results/arraygrowth/model/fallback_conditions.csv"
AG_PUBLISHED = {"published_log_bytes": "resources/published/arraygrowth_log_bytes.csv",
                "published_cursor_calls": "resources/published/arraygrowth_cursor_calls.csv",
                "tolerances": "resources/published/arraygrowth_tolerances.csv"}
AG_TABLES = {name: f"results/arraygrowth/tables/{name}.csv"
             for name in ("runs", "fit", "counts", "published_vs_reproduced")}
if AG_FALLBACK_ON:
    AG_TABLES["fallback"] = "results/arraygrowth/tables/fallback.csv"
AG_FB_INPUT = {"fallback_raw": AG_FB_RAW, "fallback_provenance": AG_FB_PROV, "model": AG_MODEL} if AG_FALLBACK_ON else {}
AG_FIGURES = ["log_bytes_vs_n", "bytes_per_op_vs_n"] + (["fallback_sweep"] if AG_FALLBACK_ON else [])
AG_FIGURE_FILES = [f"results/arraygrowth/figures/{name}.{ext}"
                   for name in AG_FIGURES for ext in ("png", "svg", "vl.json")]


wildcard_constraints:
    ag_profile="standalone|standalone-small-cache|replset-1",
    ag_workload="|".join(["insert", "push", *AG_SERVER_ELEMENTS]),


rule arraygrowth_run:
    """One server per (profile, workload); every N on a fresh collection; serverStatus deltas."""
    input:
        server=server_json("{ag_profile}"),
        element_file=lambda wc: by_content([AG_ELEMENT_FILES[wc.ag_workload]] if wc.ag_workload in AG_ELEMENT_FILES else []),
    output:
        raw=kept("results/arraygrowth/raw/{ag_profile}_{ag_workload}.parquet"),
        provenance=kept("results/arraygrowth/provenance/{ag_profile}_{ag_workload}.json"),
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
        AG_MODEL,
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
        raw=AG_RAW,
        provenance=AG_PROV,
        **AG_PUBLISHED,
        **AG_FB_INPUT,
        **AG_EL_INPUT,
    output:
        **AG_TABLES,
    log:
        "results/logs/arraygrowth_tables.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_tables.py"


rule arraygrowth_figure_log_bytes:
    input:
        raw=AG_RAW,
        provenance=AG_PROV,
        published=AG_PUBLISHED["published_log_bytes"],
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
        raw=AG_RAW,
        provenance=AG_PROV,
        published=AG_PUBLISHED["published_log_bytes"],
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
        raw=AG_RAW,
        provenance=AG_PROV,
        published=AG_PUBLISHED["published_log_bytes"],
        fallback_raw=AG_FB_RAW,
        fallback_provenance=AG_FB_PROV,
        model=AG_MODEL,
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


add_server_free_targets("arraygrowth", *([AG_MODEL] if AG_FALLBACK_ON else []))
add_targets("arraygrowth", *AG_TABLES.values(), *AG_PROV, *AG_EL_PROV, *(AG_FB_PROV if AG_FALLBACK_ON else []),
            *AG_FIGURE_FILES)


# ---- the engine lab: WiredTiger driven like mongod, no server (docs/engine-lab.md) ------------
AG_ENGINE = {"log_bytes": "results/arraygrowth/engine/log_bytes.csv",
             "fit": "results/arraygrowth/engine/fit.csv",
             "verdicts": "results/arraygrowth/engine/published_vs_engine.csv",
             "provenance": "results/arraygrowth/engine/provenance.json"}
if AG_FALLBACK_ON and config["engine"]["arraygrowth"]["fallback"]:
    AG_ENGINE["fallback"] = "results/arraygrowth/engine/fallback.csv"
if AG_ELEMENTS:
    AG_ENGINE["elements"] = "results/arraygrowth/engine/elements.csv"


# one repeat's runs (engine.arraygrowth.repeats, each repeat its own job: docs/uncertainty.md); {rep} is the
# repeat's folder, rep1, rep2, ... (costlab.repeats)
from costlab.repeats import ENGINE_REPEATS as _ENGINE_REPEATS

AG_ENGINE_REP = {"log_bytes": "results/arraygrowth/engine/repeats/{rep}/log_bytes.csv",
                 "provenance": "results/arraygrowth/engine/repeats/{rep}/provenance.json"}
AG_ENGINE_REP.update({name: f"results/arraygrowth/engine/repeats/{{rep}}/{name}.csv"
                      for name in ("fallback", "elements") if name in AG_ENGINE})
AG_REPS = _ENGINE_REPEATS.wildcards(config, "arraygrowth")


rule arraygrowth_engine_repeat:
    """One repeat of the N sweep (and fallback sweep) on WiredTiger opened like mongod: needs no server."""
    input:
        element_files=by_content(AG_ELEMENT_FILES.values()),
    output:
        **AG_ENGINE_REP,
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
        **AG_PUBLISHED,
        **{f"rep_{name}": expand(path, rep=AG_REPS) for name, path in AG_ENGINE_REP.items()},
    output:
        **AG_ENGINE,
    params:
        **_ag_params.EngineMergeParams.declare(config),
    log:
        "results/logs/arraygrowth_engine.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_engine.py"


if ENGINE_ON:
    add_server_free_targets("arraygrowth", *AG_ENGINE.values())


rule arraygrowth_engine_figure:
    """The engine lab's figure, labelled "WiredTiger engine lab — not a mongod run": needs no server."""
    input:
        log_bytes=AG_ENGINE["log_bytes"],
        fit=AG_ENGINE["fit"],
        published=AG_PUBLISHED["published_log_bytes"],
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


if ENGINE_ON:
    add_server_free_targets("arraygrowth", *[f"results/arraygrowth/figures/engine_log_bytes.{ext}" for ext in ("png", "svg", "vl.json")])


# ---- the engine lab against mongod on the same work (docs/engine-lab.md#mongod-against-the-engine-lab) --
AG_VS_MONGOD = {"csv": "results/arraygrowth/engine_vs_mongod.csv",
                "png": report("results/arraygrowth/figures/engine_vs_mongod.png",
                              caption="captions/arraygrowth_engine_vs_mongod.rst", category="arraygrowth"),
                "svg": "results/arraygrowth/figures/engine_vs_mongod.svg"}


rule arraygrowth_engine_vs_mongod:
    """Every server run again in the engine lab (same documents, namespace, order and N; the measured
    mongod's per-write rules): journal bytes and cursor calls per write, side by side, with their bands."""
    input:
        raw=AG_RAW,
        provenance=AG_PROV,
    output:
        **AG_VS_MONGOD,
    params:
        **_ag_params.EngineVsMongodParams.declare(config),
    log:
        "results/logs/arraygrowth_engine_vs_mongod.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/arraygrowth_engine_vs_mongod.py"


if ENGINE_ON:
    add_targets("arraygrowth", *AG_VS_MONGOD.values())
