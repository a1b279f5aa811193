"""Snakemake: the initial events of the appversions study: generated (2010-2020), chunk by chunk, or your own
events file (appversions.events), checked and integer-coded in date order."""
import json
from pathlib import Path

from costlab.appversions.events import iter_event_chunks, users_for, write_events
from costlab.appversions.params import EventsParams

params = EventsParams.from_params(snakemake.params)  # noqa: F821
if params.events_file:
    from costlab.appversions.own_events import convert_events

    held = convert_events(params.events_file, snakemake.output.events)  # noqa: F821
    Path(snakemake.log[0]).write_text(json.dumps(held) + "\n")  # noqa: F821
else:
    rows = write_events(iter_event_chunks(params.events_per_year, params.seed, window=params.window),
                        snakemake.output.events)  # noqa: F821
    Path(snakemake.log[0]).write_text(  # noqa: F821
        f"{rows} events, {users_for(params.events_per_year)} users, {params.window} event window\n")
