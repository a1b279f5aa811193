"""Snakemake: generate the initial events (2010-2020) of the appversions study, chunk by chunk."""
from pathlib import Path

from costlab.appversions.events import iter_event_chunks, users_for, write_events
from costlab.appversions.params import EventsParams

params = EventsParams.from_params(snakemake.params)  # noqa: F821
rows = write_events(iter_event_chunks(params.events_per_year, params.seed, window=params.window),
                    snakemake.output.events)  # noqa: F821
Path(snakemake.log[0]).write_text(  # noqa: F821
    f"{rows} events, {users_for(params.events_per_year)} users, {params.window} event window\n")
