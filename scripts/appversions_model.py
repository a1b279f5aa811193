"""Snakemake: server-free collection sizes per version and their comparison with the published tables."""
from pathlib import Path

import polars as pl

from costlab.appversions.events import read_events
from costlab.appversions.model import collection_stats, compare_with_published, reference_stats
from costlab.appversions.tables import published_collection_stats, published_vs_model
from costlab.io import write_csv

events = read_events(snakemake.input.events)
stats = collection_stats(events, list(snakemake.params.versions))
write_csv(stats, snakemake.output.stats)
# The same model where the scale no longer moves per-event figures: the check of the method.
reference = reference_stats(snakemake.params.events_per_year, snakemake.params.seed, list(snakemake.params.versions),
                            stats, window=snakemake.params.window)
write_csv(reference, snakemake.output.reference)
published = pl.read_csv(snakemake.input.published)
comparison = compare_with_published(stats, published, snakemake.params.tolerance, snakemake.params.window)
write_csv(comparison, snakemake.output.vs_published)
published_stats = published_collection_stats(snakemake.input.published, snakemake.input.published_events)
write_csv(published_vs_model(stats, published_stats, snakemake.params.tolerance, reference),
          snakemake.output.published_vs_model)
Path(snakemake.log[0]).write_text(comparison.write_csv())
