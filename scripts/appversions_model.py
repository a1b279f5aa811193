"""Snakemake: server-free collection sizes per version and their comparison with the published tables."""
from pathlib import Path

from costlab.appversions.events import iter_event_file
from costlab.appversions.model import (
    DEFAULT_CHUNK_ROWS,
    collection_stats,
    compare_with_published,
    reference_stats,
)
from costlab.appversions.params import ModelParams
from costlab.appversions.tables import model_fraction, published_collection_stats, published_vs_model
from costlab.inputs import read_csv
from costlab.io import write_csv
from costlab.published import read_tolerances

params = ModelParams.from_params(snakemake.params)
# The events stream through the model chunk by chunk: memory does not grow with their number.
stats = collection_stats(iter_event_file(snakemake.input.events, DEFAULT_CHUNK_ROWS), list(params.versions))
write_csv(stats, snakemake.output.stats)
# The same model where the scale no longer moves per-event figures: the check of the method.
# (always the generator's events: with your own, `stats` is not the generator's and is not reused)
reference = reference_stats(
    params.events_per_year, params.seed, list(params.versions), None if params.events_file else stats,
    window=params.window
)
write_csv(reference, snakemake.output.reference)
published = read_csv(snakemake.input.published)
tolerances = read_tolerances(
    snakemake.input.tolerances
)  # appversions.model_tolerance, when set, overrides `model`
comparison = compare_with_published(
    stats, published, model_fraction(tolerances, params.tolerance)[0], params.window
)
write_csv(comparison, snakemake.output.vs_published)
published_stats = published_collection_stats(snakemake.input.published, snakemake.input.published_events)
# your own events (appversions.events): this run's rows are not the article's (not comparable)
write_csv(published_vs_model(stats, published_stats, params.tolerance, reference, tolerances,
                             own_events=bool(params.events_file)),
          snakemake.output.published_vs_model)
Path(snakemake.log[0]).write_text(comparison.write_csv())
