"""What `all` builds of flatnested, and the names rules/flatnested.smk reads (Study.targets).

Light imports only (shapes is stdlib; generate.py imports faker): every Snakemake invocation plans with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from costlab.flatnested.shapes import MAX_FIELDS, shapes_for
from costlab.repeats import SERVER_REPEATS
from costlab.targets import FIGURE_EXTS, Targets, expand, measured, server_free

FOLDER = "results/flatnested"


@dataclass(frozen=True)
class FlatNestedNames:
    shapes: list[str]  # flat_<n> and structured_<g>x5 for each of flatnested.flat_fields
    tables: dict[str, str]  # flatnested_tables' outputs
    figure: dict[str, str]  # extension -> the figure's file


def names(config: dict) -> FlatNestedNames:
    return FlatNestedNames(
        shapes=[s.name for s in shapes_for(config["flatnested"]["flat_fields"], MAX_FIELDS)],
        tables={
            name: f"{FOLDER}/tables/{name}.csv"
            for name in ("timings", "comparison", "published_vs_reproduced")
        },
        figure={ext: f"{FOLDER}/figures/time_by_fields.{ext}" for ext in FIGURE_EXTS},
    )


def targets(config: dict) -> Targets:
    fn = names(config)
    return Targets(
        groups=(
            server_free(f"{FOLDER}/model/bson_sizes.csv", f"{FOLDER}/model/published_vs_model.csv"),
            measured(
                *fn.tables.values(),
                *fn.figure.values(),
                *expand(f"{FOLDER}/provenance/load_{{shape}}.json", shape=fn.shapes),
                *expand(
                    f"{FOLDER}/provenance/measure_{{shape}}{{rep}}.json",
                    shape=fn.shapes,
                    rep=SERVER_REPEATS.wildcards(config, "flatnested"),
                ),
            ),
        ),
        names=fn,
    )
