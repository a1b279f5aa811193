"""What `all` builds of docsize, and the names rules/docsize.smk reads (Study.targets).

Light imports only: every Snakemake invocation plans with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import costlab.targets as plan
from costlab.docsize.datasets import datasets
from costlab.docsize.documents import declared_names, server_datasets
from costlab.docsize.names import FIGURES, RUNS, table_names
from costlab.repeats import SERVER_REPEATS
from costlab.targets import Targets

FOLDER = "results/docsize"


@dataclass(frozen=True)
class DocsizeNames:
    datasets: list[str]  # the orders' datasets: every size, then the enabled variants'
    base_datasets: list[str]  # the plain orders' (one per size)
    runs: list[str]  # the three runs of each dataset
    run_profiles: dict[str, str]  # run -> the server profile it measures on
    run_re: str  # the {run} wildcard
    sizes_kb: list[int]
    tables: dict[str, str]  # docsize_tables' outputs
    measure_provenance: list[str]  # every run on every dataset, every repeat
    engine: dict[str, str]  # the engine lab's tables
    documents: list[str]  # your documents (docsize.documents)
    document_re: str  # the {document} wildcard: exactly those (matches nothing without one)
    document_tables: list[str]  # each document's engine-lab cache reads
    document_findings: str  # their rows of "Your variants" (engine lab)
    document_raw: list[str]  # each run on each document's datasets on a server
    document_server_findings: str  # their rows of "Your variants" (server)
    vs_mongod: dict[str, str]  # the engine lab against mongod: csv, png, svg


def names(config: dict) -> DocsizeNames:
    section = config["docsize"]
    found = datasets(section)
    documents = declared_names(section)
    return DocsizeNames(
        datasets=[d.name for d in found],
        base_datasets=[d.name for d in found if d.variant == "base"],
        runs=list(RUNS),
        run_profiles={name: run.profile for name, run in RUNS.items()},
        run_re="|".join(RUNS),
        sizes_kb=list(section["sizes_kb"]),
        tables={name: f"{FOLDER}/tables/{name}.csv" for name in table_names()},
        measure_provenance=plan.expand(
            f"{FOLDER}/provenance/{{run}}__{{dataset}}{{rep}}.json",
            run=list(RUNS),
            dataset=[d.name for d in found],
            rep=SERVER_REPEATS.wildcards(config, "docsize"),
        ),
        engine={
            "cache_reads": f"{FOLDER}/engine/cache_reads.csv",
            "queries": f"{FOLDER}/engine/queries.csv",
            "verdicts": f"{FOLDER}/engine/published_vs_engine.csv",
            "provenance": f"{FOLDER}/engine/provenance.json",
        },
        documents=documents,
        document_re="|".join(documents) or "(?!x)x",  # names are letters, digits, _ and - (checked before)
        document_tables=plan.expand(f"{FOLDER}/engine/documents/cache_reads_{{document}}.csv",
                                    document=documents),
        document_findings=f"{FOLDER}/engine/your_documents.csv",
        document_raw=plan.expand(
            f"{FOLDER}/raw/{{run}}__{{dataset}}.parquet", run=list(RUNS), dataset=server_datasets(section)
        ),
        document_server_findings=f"{FOLDER}/tables/your_documents.csv",
        vs_mongod=plan.vs_mongod_paths(FOLDER),
    )


def targets(config: dict) -> Targets:
    ds = names(config)
    engine_on = config["engine"]["enabled"]
    return Targets(
        groups=(
            plan.server_free(
                f"{FOLDER}/model/collections.csv",
                f"{FOLDER}/model/datasets.csv",
                f"{FOLDER}/model/published_vs_model.csv",
            ),
            plan.measured(
                *ds.tables.values(),
                *plan.files(FIGURES, plan.FIGURE_EXTS, f"{FOLDER}/figures"),
                *ds.measure_provenance,
                *plan.expand(f"{FOLDER}/provenance/load_{{dataset}}.json", dataset=ds.datasets),
            ),
            *plan.engine_groups(config, FOLDER, ds.engine.values(), "engine_cache_reads"),
            *(
                (
                    plan.server_free(
                        ds.document_findings,
                        *ds.document_tables,
                        *plan.expand(
                            f"{FOLDER}/engine/documents/provenance_{{document}}.json", document=ds.documents
                        ),
                    ),
                )
                if engine_on and ds.documents
                else ()
            ),
            *(
                (
                    plan.measured(
                        ds.document_server_findings,
                        *plan.expand(
                            f"{FOLDER}/provenance/{{run}}__{{dataset}}.json",
                            run=ds.runs,
                            dataset=server_datasets(config["docsize"]),
                        ),
                    ),
                )
                if ds.documents
                else ()
            ),
            *((plan.measured(*ds.vs_mongod.values()),) if engine_on else ()),
        ),
        names=ds,
    )
