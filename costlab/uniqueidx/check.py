"""Run the conformance steps against a server and tabulate expected vs observed, step by step."""
from __future__ import annotations

from pathlib import Path

import polars as pl
from pymongo.database import Database
from pymongo.errors import PyMongoError

from costlab.finding import STAND_IN, conform_table
from costlab.jobs import RunFacts
from costlab.server import measuring_job
from costlab.server.provenance import server_description
from costlab.uniqueidx.params import ConformanceParams
from costlab.uniqueidx.steps import SetupError, Step, select_steps
from costlab.verdicts import Verdict

DATABASE = "costlab_uniqueidx"
PROFILE = "standalone"
PASS, FAIL, ERROR = "pass", "fail", "error"
CONFORMANCE_SCHEMA = {
    "step": pl.Int64,
    "title": pl.String,
    "description": pl.String,
    "expected": pl.String,
    "observed": pl.String,
    "outcome": pl.String,
    "detail": pl.String,
    "server_messages": pl.String,
    "server_version": pl.String,
    "server_kind": pl.String,
}


def as_text(observations) -> str:
    """'label: outcome; label: outcome' for expected pairs and observed (label, Outcome) pairs alike."""
    return "; ".join(f"{label}: {outcome}" for label, outcome in observations)


def run_step(step: Step, db: Database) -> dict:
    """One step's record. A differing outcome is `fail`; a step that could not run is `error`."""
    record = {"step": step.number, "title": step.title, "description": step.description,
              "expected": as_text(step.expected)}
    try:
        observed = step.run(db)
    except (SetupError, PyMongoError) as err:
        return record | {"observed": "not executed", "outcome": ERROR, "detail": str(err)[:300],
                         "server_messages": ""}
    differences = [f"{label}: expected {want}, observed {got.text}"
                   for (label, want), (_, got) in zip(step.expected, observed) if want != got.text]
    if len(observed) != len(step.expected):
        differences.append(f"{len(observed)} operations observed, {len(step.expected)} expected")
    messages = " | ".join(f"{label}: {got.message}" for label, got in observed if got.message)
    return record | {"observed": as_text(observed), "outcome": FAIL if differences else PASS,
                     "detail": "; ".join(differences), "server_messages": messages}


def run_conformance(db: Database, steps: list[int]) -> pl.DataFrame:
    """Every selected step against `db` (its `users` collection is dropped and rebuilt per step)."""
    records = [run_step(step, db) for step in select_steps(steps)]
    frame = pl.DataFrame(records, schema={k: v for k, v in CONFORMANCE_SCHEMA.items()
                                          if k not in ("server_version", "server_kind")})
    return frame


def check_server(params: ConformanceParams, run: RunFacts, provenance_path: str | Path) -> pl.DataFrame:
    """The conformance table for the configured server, with its version and kind on every row."""
    steps = params.steps
    with measuring_job(run, PROFILE, provenance_path, job="conformance", extra={"steps": steps},
                       study="uniqueidx") as server:
        description = server_description(server.client)
        table = run_conformance(server.client[server.database], steps)
        # Its own collections only: the lease document goes with the job.
        for name in server.client[server.database].list_collection_names():
            if not name.startswith("costlab_"):
                server.client[server.database].drop_collection(name)
    return table.with_columns(pl.lit(description["version"], dtype=pl.String).alias("server_version"),
                              pl.lit(description["server_kind"], dtype=pl.String).alias("server_kind")
                              ).select(list(CONFORMANCE_SCHEMA))


def published_vs_reproduced(conformance: pl.DataFrame) -> pl.DataFrame:
    """The report's contract table: one row per step, the article's outcomes vs this server's.

    A behaviour check on the stand-in says how the stand-in behaves, not MongoDB: its verdict is
    not comparable (stand-in) whatever the outcome; a step that could not run is not run (its error the
    reason).
    """
    stand_in = pl.col("server_kind") == "stand-in"
    verdict = (pl.when(stand_in).then(pl.lit(Verdict.NOT_COMPARABLE.value))
               .when(pl.col("outcome") == PASS).then(pl.lit(Verdict.REPRODUCED.value))
               .when(pl.col("outcome") == FAIL).then(pl.lit(Verdict.NOT_REPRODUCED.value))
               .otherwise(pl.lit(Verdict.NOT_RUN.value)))   # the step could not run: no observation
    reason = (
        pl.when(stand_in)
        .then(pl.lit(STAND_IN))
        .when(~pl.col("outcome").is_in([PASS, FAIL]))
        .then(pl.lit("step not executed: ") + pl.col("detail"))
    )
    return conform_table(conformance.select(
        (pl.lit("step ") + pl.col("step").cast(pl.String) + pl.lit(": ") + pl.col("title")).alias("finding"),
        pl.lit("operation outcomes").alias("metric"),
        pl.lit("").alias("unit"),
        pl.col("expected").alias("published"),
        pl.col("observed").alias("reproduced"),
        pl.lit(None, dtype=pl.Float64).alias("ratio"),
        # a behaviour, not a number: the article's outcome of every operation (success or its error code)
        pl.lit("the article's outcome of every operation, exactly").alias("tolerance"),
        verdict.alias("verdict"),
        reason.alias("reason"),
        pl.col("server_kind")))
