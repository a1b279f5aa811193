"""What `all` builds of arraygrowth, and the names rules/arraygrowth.smk reads (Study.targets).

Light imports only: every Snakemake invocation plans with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import costlab.targets as plan
from costlab.arraygrowth.elements import element_files, server_elements
from costlab.targets import Targets

FOLDER = "results/arraygrowth"


@dataclass(frozen=True)
class ArrayGrowthNames:
    workload_re: str  # the {ag_workload} wildcard: the article's two and your elements on a server
    element_files: dict[str, str]  # your element -> its .json file (an input of its jobs)
    raw: list[str]  # the article's workloads on each profile
    provenance: list[str]
    element_input: dict[str, list[str]]  # your elements' runs on a server (empty: none listed in workloads)
    fallback_raw: list[str]  # the fallback sweep on each profile
    fallback_provenance: list[str]
    fallback_input: dict[str, object]  # what the tables take of the sweep (empty: arraygrowth.fallback off)
    model: str  # the server-free fallback conditions
    published: dict[str, str]  # the article's numbers and the tolerances
    tables: dict[str, str]  # arraygrowth_tables' outputs
    engine: dict[str, str]  # arraygrowth_engine's outputs
    engine_repeat: dict[str, str]  # one engine repeat's outputs ({rep} its folder: rep1, rep2, ...)
    vs_mongod: dict[str, str]  # the engine lab against mongod: csv, png, svg


def names(config: dict) -> ArrayGrowthNames:
    section = config["arraygrowth"]
    fallback_on = section["fallback"]["enabled"]
    on_server = server_elements(section)
    by_profile = {"profile": section["profiles"]}
    workloads = [w for w in section["workloads"] if w not in on_server]
    model = f"{FOLDER}/model/fallback_conditions.csv"
    fallback_raw = plan.expand(f"{FOLDER}/raw/fallback_{{profile}}.parquet", **by_profile)
    fallback_provenance = plan.expand(f"{FOLDER}/provenance/fallback_{{profile}}.json", **by_profile)
    tables = {
        name: f"{FOLDER}/tables/{name}.csv" for name in ("runs", "fit", "counts", "published_vs_reproduced")
    }
    engine = {
        "log_bytes": f"{FOLDER}/engine/log_bytes.csv",
        "fit": f"{FOLDER}/engine/fit.csv",
        "verdicts": f"{FOLDER}/engine/published_vs_engine.csv",
        "provenance": f"{FOLDER}/engine/provenance.json",
    }
    if fallback_on:
        tables["fallback"] = f"{FOLDER}/tables/fallback.csv"
        if config["engine"]["arraygrowth"]["fallback"]:
            engine["fallback"] = f"{FOLDER}/engine/fallback.csv"
    if section.get("elements"):
        engine["elements"] = f"{FOLDER}/engine/elements.csv"
    element_raw = plan.expand(f"{FOLDER}/raw/{{profile}}_{{workload}}.parquet", **by_profile,
                              workload=on_server)
    element_provenance = plan.expand(
        f"{FOLDER}/provenance/{{profile}}_{{workload}}.json", **by_profile, workload=on_server
    )
    return ArrayGrowthNames(
        workload_re="|".join(["insert", "push", *on_server]),
        element_files=element_files(section),
        raw=plan.expand(f"{FOLDER}/raw/{{profile}}_{{workload}}.parquet", **by_profile, workload=workloads),
        provenance=plan.expand(
            f"{FOLDER}/provenance/{{profile}}_{{workload}}.json", **by_profile, workload=workloads
        ),
        element_input=(
            {"element_raw": element_raw, "element_provenance": element_provenance} if on_server else {}
        ),
        fallback_raw=fallback_raw,
        fallback_provenance=fallback_provenance,
        fallback_input=(
            {"fallback_raw": fallback_raw, "fallback_provenance": fallback_provenance, "model": model}
            if fallback_on
            else {}
        ),
        model=model,
        published={
            "published_log_bytes": "resources/published/arraygrowth_log_bytes.csv",
            "published_cursor_calls": "resources/published/arraygrowth_cursor_calls.csv",
            "tolerances": "resources/published/arraygrowth_tolerances.csv",
        },
        tables=tables,
        engine=engine,
        engine_repeat={
            "log_bytes": f"{FOLDER}/engine/repeats/{{rep}}/log_bytes.csv",
            "provenance": f"{FOLDER}/engine/repeats/{{rep}}/provenance.json",
            **{
                name: f"{FOLDER}/engine/repeats/{{rep}}/{name}.csv"
                for name in ("fallback", "elements")
                if name in engine
            },
        },
        vs_mongod=plan.vs_mongod_paths(FOLDER),
    )


def targets(config: dict) -> Targets:
    ag = names(config)
    fallback_on = config["arraygrowth"]["fallback"]["enabled"]
    figures = ["log_bytes_vs_n", "bytes_per_op_vs_n"] + (["fallback_sweep"] if fallback_on else [])
    return Targets(
        groups=(
            plan.server_free(*([ag.model] if fallback_on else [])),
            plan.measured(
                *ag.tables.values(),
                *ag.provenance,
                *ag.element_input.get("element_provenance", []),
                *(ag.fallback_provenance if fallback_on else []),
                *plan.files(figures, plan.FIGURE_EXTS, f"{FOLDER}/figures"),
            ),
            *plan.engine_groups(config, FOLDER, ag.engine.values(), "engine_log_bytes",
                                *ag.vs_mongod.values()),
        ),
        names=ag,
    )
