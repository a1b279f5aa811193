"""Snakemake: generate the initial events (2010-2020) of the appversions study, chunk by chunk."""
from pathlib import Path

from costlab.appversions.events import iter_event_chunks, users_for, write_events

rows = write_events(iter_event_chunks(snakemake.params.events_per_year, snakemake.params.seed,  # noqa: F821
                                      window=snakemake.params.window),  # noqa: F821
                    snakemake.output.events)  # noqa: F821
Path(snakemake.log[0]).write_text(  # noqa: F821
    f"{rows} events, {users_for(snakemake.params.events_per_year)} users, "
    f"{snakemake.params.window} event window\n")  # noqa: F821
