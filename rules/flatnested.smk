# Study flatnested: flat N fields vs structured N/5 x 5 sub-documents, same values; time a query
# for a field no document has (every field of every document walked) and compare BSON sizes.
# Each rule's params: costlab/flatnested/params.py (what reruns a job is what it reads).
import costlab.flatnested.params as _fn_params
from costlab.repeats import SERVER_REPEATS as _SERVER_REPEATS

# The shapes (flat and structured for each of flatnested.flat_fields), tables and figure (costlab/flatnested/targets.py).
FN = PLAN.names("flatnested")
# flatnested.repeats: each shape's measuring job once per repeat; {rep} is the repeat's mark (costlab.repeats:
# repeat 1 keeps the paths a single run always had). The loads take no {rep}.
FN_REPS = _SERVER_REPEATS.wildcards(config, "flatnested")


rule flatnested_values:
    output:
        "results/flatnested/model/values.parquet",
    params:
        **_fn_params.ValuesParams.declare(config),
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/flatnested_values.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/flatnested_values.py"


rule flatnested_model:
    input:
        values="results/flatnested/model/values.parquet",
        published_sizes="resources/published/flatnested_sample_sizes.csv",
        tolerances="resources/published/flatnested_tolerances.csv",
    output:
        sizes="results/flatnested/model/bson_sizes.csv",
        published_vs_model="results/flatnested/model/published_vs_model.csv",  # the model's verdicts
    params:
        **_fn_params.ModelParams.declare(config),
    log:
        "results/logs/flatnested_model.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/flatnested_model.py"


rule flatnested_load:
    input:
        values="results/flatnested/model/values.parquet",
        server=server_json("standalone"),  # costlab.flatnested.run.PROFILE
    output:
        data=directory("results/flatnested/data/{shape}"),
        provenance="results/flatnested/provenance/load_{shape}.json",
    wildcard_constraints:
        shape="(flat|structured)_[0-9x]+",
    params:
        **_fn_params.LoadParams.declare(config),
    threads: ask("flatnested_load").threads
    resources:
        mongod=MONGOD,
        **ask("flatnested_load").resources,
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/flatnested_load_{shape}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/flatnested_load.py"


rule flatnested_measure:
    input:
        data=ancient("results/flatnested/data/{shape}"),
        # A reload (new load provenance) reruns the measurement; the dir's own mtime is not a signal.
        loaded="results/flatnested/provenance/load_{shape}.json",
        server=server_json("standalone"),  # costlab.flatnested.run.PROFILE
    output:
        raw=kept("results/flatnested/raw/{shape}{rep}.parquet"),
        provenance=kept("results/flatnested/provenance/measure_{shape}{rep}.json"),
    wildcard_constraints:
        shape="(flat|structured)_[0-9x]+",
        rep=_SERVER_REPEATS.constraint,
    params:
        **_fn_params.MeasureParams.declare(config),
    threads: ask("flatnested_measure").threads
    resources:
        mongod=MONGOD,
        **ask("flatnested_measure").resources,
    log:
        "results/logs/flatnested_measure_{shape}{rep}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/flatnested_measure.py"


rule flatnested_tables:
    input:
        raw=expand("results/flatnested/raw/{shape}{rep}.parquet", shape=FN.shapes, rep=FN_REPS),
        sizes="results/flatnested/model/bson_sizes.csv",
        published_timings="resources/published/flatnested_timings.csv",
        published_sizes="resources/published/flatnested_sample_sizes.csv",
        tolerances="resources/published/flatnested_tolerances.csv",
        provenance=expand("results/flatnested/provenance/measure_{shape}{rep}.json", shape=FN.shapes, rep=FN_REPS),
    output:
        **FN.tables,
    log:
        "results/logs/flatnested_tables.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/flatnested_tables.py"


rule flatnested_figure:
    input:
        comparison=FN.tables["comparison"],
    output:
        png=report(FN.figure["png"], caption="captions/flatnested_time_by_fields.rst", category="flatnested"),
        svg=FN.figure["svg"],
        json=FN.figure["vl.json"],
    log:
        "results/logs/flatnested_figure.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/flatnested_figure.py"

