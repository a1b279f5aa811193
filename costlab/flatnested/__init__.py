"""Study flatnested: the same fake-person data stored flat (`home_zip`) or structured (`home.zip`).

"Improving Storage and Read Performance for Free: Flat vs Structured Schemas": a query for a
field no document has makes the server walk every top-level field of every document; the
structured layout has fewer top-level fields (and repeats fewer name bytes), so it should be
faster to walk and smaller. Modules: shapes (which layouts), generate (values and documents),
model (BSON sizes, server-free), run (load and measure), tables, figures.
"""
from __future__ import annotations

from costlab.flatnested.targets import targets
from costlab.repeats import COUNT_KEY, SERVER_REPEATS
from costlab.study import Ceiling, Overlay, RuleAsk, Study

# Assumed throughput floors (chosen low so a cluster time limit is rarely hit; not measurements).
LOAD_BYTES_PER_S = 20e6        # insert_many bytes per second
FIELDS_PER_S = 5e6             # fields walked per second by a collection scan
BYTES_PER_FIELD = 100          # a generous size of one field
LAYOUT_COLORS = {"flat": "#e45756", "structured": "#4c78a8"}


def _widest(config: dict) -> int:
    return max(int(f) for f in config["flatnested"]["flat_fields"])


def _shapes(config: dict) -> int:
    return 2 * len(config["flatnested"]["flat_fields"])


def _documents(config: dict) -> float:
    flat = config.get("flatnested") or {}
    return float(flat.get("documents", 0)) * len(flat.get("flat_fields") or ()) * 2  # flat and nested


def _measure_s(config: dict) -> float:
    study = config["flatnested"]
    walks = int(study["runs"]) + int(study["warmup_runs"])
    return walks * int(study["documents"]) * _widest(config) / FIELDS_PER_S


STUDY = Study(
    name="flatnested",
    title="Flat vs structured schemas",
    source='"Improving Storage and Read Performance for Free: Flat vs Structured Schemas"',
    measured=(
        "The same documents stored with a flat field layout and with fields grouped into nested "
        "sub-documents: storage size and the time to walk every field."
    ),
    data_keys=("documents", "seed"),
    derived_data=lambda section: {"groups": max(section.get("flat_fields") or [0]) // 5},
    measuring_rules={
        "flatnested_load": RuleAsk(
            work_s=lambda config: (
                int(config["flatnested"]["documents"]) * _widest(config) * BYTES_PER_FIELD / LOAD_BYTES_PER_S
            ),
            jobs=_shapes,
        ),
        # each shape once per repeat (flatnested.repeats)
        "flatnested_measure": RuleAsk(
            work_s=_measure_s,
            jobs=lambda config: _shapes(config) * SERVER_REPEATS.count(config, "flatnested"),
            timed=True),
    },
    kept_rules=("flatnested_measure",),
    job_selecting_keys=(("flat_fields",), (COUNT_KEY,)),
    ceilings={
        "documents": Ceiling(   # shared with docsize's
            "documents to generate and load", 20_000_000, 10_000 * 4 * 2,
            "flatnested.documents x flat_fields x 2", _documents,
        ),
    },
    colors={"layout": LAYOUT_COLORS},
    targets_from=targets,
    overlay=Overlay(
        "comparison",
        "fields",
        "reproduced_improvement_pct",
        "Q",
        "Structured over flat, runs overlaid",
        "improvement of structured over flat (%)",
    ),
    published=("flatnested_sample_sizes.csv", "flatnested_timings.csv", "flatnested_tolerances.csv",
               "flatnested_claims.csv"),
)
