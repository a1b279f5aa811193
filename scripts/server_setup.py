"""Snakemake entry: resolve the server of one profile and write results/servers/<profile>.json."""
from pathlib import Path

from costlab.server.setup import write_setup

lines = []


def log(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)
    lines.append(line)


try:
    write_setup(snakemake.output[0], snakemake.config["server"], snakemake.params.backend,  # noqa: F821
                snakemake.wildcards.server_profile, log)  # noqa: F821
finally:
    Path(snakemake.log[0]).write_text("\n".join(lines) + "\n")  # noqa: F821
