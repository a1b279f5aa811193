"""What `all` builds of appversions, and the names rules/appversions.smk reads (Study.targets).

Light imports only: every Snakemake invocation plans with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import costlab.targets as plan
from costlab.appversions.names import figure_names, tested_versions
from costlab.appversions.registry import wildcard_pattern
from costlab.appversions.variants import layout_files, register_variants
from costlab.paths import user_file_path
from costlab.repeats import SERVER_REPEATS
from costlab.targets import Targets

FOLDER = "results/appversions"
AUTHORS_STEPS = f"{FOLDER}/tables/loadtest_authors_steps.csv"


@dataclass(frozen=True)
class AppVersionsNames:
    version_re: str  # the {version} wildcard: every registered version, your variants too
    layout_files: dict[str, str]  # your variant -> its layout file (an input of its jobs)
    events_file: list[str]  # your events file (appversions.events), or none
    loadtest_profile: str  # the server profile of the loads, checks and load tests
    versions: list[str]  # modelled and grown in the engine lab
    loaded: list[str]  # loaded, and each checked against the model
    tested: list[str]  # load tested
    authors: bool  # the authors' closed-loop driver runs too
    tables: dict[str, str]  # appversions_tables' outputs
    figures: list[str]  # appversions_figures' names
    authors_figures: list[str]  # appversions_authors_figures' names (built when `authors`)
    authors_steps: str  # their table
    metrics: list[str]  # the server's metrics during each load test
    provenance: list[str]  # each load's and load test's (repeat 1)
    authors_raw: list[str]  # the authors' driver's runs (none when it is off)
    authors_provenance: list[str]
    engine: dict[str, str]  # the engine lab's tables
    vs_mongod: dict[str, str]  # the engine lab against mongod: csv, png, svg


def names(config: dict) -> AppVersionsNames:
    section = config["appversions"]
    tested = tested_versions(section)
    loaded = list(section.get("load_versions") or section["versions"])
    authors = bool(section["loadtest"]["authors_driver"])
    figures = figure_names(tested)
    tables = {
        name: f"{FOLDER}/tables/{name}.csv"
        for name in ("collection_stats", "loadtest_bins", "loadtest_steps", "published_vs_reproduced")
    }
    if authors:
        tables["loadtest_authors_steps"] = AUTHORS_STEPS
    return AppVersionsNames(
        version_re=wildcard_pattern(),
        layout_files=layout_files(section),
        events_file=[str(user_file_path(section["events"]))] if section.get("events") else [],
        loadtest_profile=section["loadtest"]["profile"],
        versions=list(section["versions"]),
        loaded=loaded,
        tested=tested,
        authors=authors,
        tables=tables,
        figures=figures,
        authors_figures=[f"authors_{name}" for name in figures if name.startswith("loadtest_")],
        authors_steps=AUTHORS_STEPS,
        metrics=plan.expand(f"{FOLDER}/raw/server_metrics_{{version}}.parquet", version=tested),
        provenance=(
            plan.expand(f"{FOLDER}/provenance/load_{{version}}.json", version=loaded)
            + plan.expand(f"{FOLDER}/provenance/loadtest_{{version}}.json", version=tested)
        ),
        authors_raw=plan.expand(f"{FOLDER}/raw/loadtest_authors_{{version}}.parquet", version=tested)
        if authors
        else [],
        authors_provenance=(
            plan.expand(f"{FOLDER}/provenance/loadtest_authors_{{version}}.json", version=tested)
            if authors
            else []
        ),
        engine={
            "storage": f"{FOLDER}/engine/storage.csv",
            "verdicts": f"{FOLDER}/engine/published_vs_engine.csv",
            "provenance": f"{FOLDER}/engine/provenance.json",
        },
        vs_mongod=plan.vs_mongod_paths(FOLDER),
    )


def targets(config: dict) -> Targets:
    """appversions' targets. Your own versions (appversions.variants) are registered first: from here on
    they are versions everywhere (the {version} wildcard, the version lists)."""
    register_variants(config)
    av = names(config)
    # the later repeats' loads and load tests (appversions.repeats): targets, not the figures' inputs
    later_repeats = [
        f"{FOLDER}/provenance/{job}_{version}{rep}.json"
        for rep in SERVER_REPEATS.wildcards(config, "appversions")[1:]
        for version in av.tested
        for job in ("load", "loadtest")
    ]
    return Targets(
        groups=(
            plan.server_free(
                f"{FOLDER}/model/stats.csv",
                f"{FOLDER}/model/vs_published.csv",
                f"{FOLDER}/model/published_vs_model.csv",
            ),
            plan.measured(
                *plan.expand(f"{FOLDER}/tables/correctness_{{version}}.csv", version=av.loaded),
                *plan.expand(f"{FOLDER}/provenance/correctness_{{version}}.json", version=av.loaded),
            ),
            plan.measured(
                *av.tables.values(),
                *av.provenance,
                *later_repeats,
                *av.authors_provenance,
                *plan.files(av.authors_figures if av.authors else [], plan.FIGURE_EXTS, f"{FOLDER}/figures"),
                *plan.files(av.figures, plan.FIGURE_EXTS, f"{FOLDER}/figures"),
            ),
            *plan.engine_groups(config, FOLDER, av.engine.values(), "engine_storage_per_event",
                           *av.vs_mongod.values()),
        ),
        names=av,
    )
