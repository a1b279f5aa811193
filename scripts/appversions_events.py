"""Snakemake: generate the initial events (2010-2020) of the appversions study."""
from pathlib import Path

from costlab.appversions.events import generate_events, users_for
from costlab.io import write_parquet

events = generate_events(snakemake.params.events_per_year, snakemake.params.seed)
write_parquet(events, snakemake.output.events)
Path(snakemake.log[0]).write_text(
    f"{events.height} events, {users_for(snakemake.params.events_per_year)} users\n")
