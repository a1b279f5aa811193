"""A version's layout rehearsed before any job: a few events through its statements and the engine lab's
update compiler, and its size formula checked against the documents they build.

A layout owns three things that must agree (costlab/appversions/layouts.py): the statement of each
event (`upsert_ops`), the BSON size formula the model uses (`day_document_bytes` /
`bucket_document_bytes`) and, where it has one, the engine lab's final document (`engine_groups`).
Nothing else would tell when they do not: a size formula a byte off per field passes every job and
skews every number. So, for each variant the config declares, when the workflow's rules are read
(rules/appversions.smk: `rehearse_config`, after the config check and the variants' registration), so
that `snakemake` / `make all` / `make dryrun` stop before any job, in one line:

1. its statements for `rehearsal_events()` (two keys, days across a month and a quarter boundary, every
   status, several events a day) are compiled by costlab.engine.update, which refuses an operator,
   stage or expression the engine lab lacks, naming it;
2. they are applied in order, as mongod would (an in-memory collection: the document the query
   matches, else the upsert), and each document's size is bson.encode's;
3. the model's size of each document (costlab.appversions.model.document_sizes) and the engine lab's
   final documents are compared with those sizes: a difference is refused, with both numbers.

Light to import (the rules import it): the rehearsal itself, with polars, bson and the model, is
costlab.appversions.layout_rehearsal, imported only when a config declares variants.
"""
from __future__ import annotations

from typing import Any

from costlab.appversions.variants import declared_names


def rehearse_config(config: dict[str, Any]) -> None:
    """Rehearse every variant the config declares (registered already: register_variants); ConfigError
    in one line naming the variant's config key otherwise."""
    section = config.get("appversions") or {}
    names = declared_names(section)
    if not names:
        return
    from costlab.appversions.layout_rehearsal import rehearse_variants  # noqa: PLC0415  heavy: numpy, polars, pymongo; the rule files import this module

    rehearse_variants(section, names)


__all__ = ["rehearse_config"]
