# costlab: `snakemake all` rebuilds every table, figure and the report; name one file to build
# just that (e.g. snakemake results/docsize/figures/time_by_size.png). Rules say what depends on
# what; the work is in the costlab package, called by thin scripts/.
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")

from costlab.console import quiet_console
from costlab.registry import REGISTRY as _STUDY_REGISTRY

# One console line per job; Snakemake's detail stays in .snakemake/log/ (COSTLAB_CONSOLE=full: all of it).
quiet_console(workflow)


# The checkout's defaults, wherever Snakemake runs (--directory elsewhere: a read-only checkout).
configfile: str(Path(workflow.basedir) / "config" / "config.yaml")


include: "rules/common.smk"
include: "rules/inputs.smk"
include: "rules/servers.smk"


# Each study's rules, in the registry's order (costlab/registry.py; a study's Study.rules_file).
for _study in _STUDY_REGISTRY.values():

    include: _study.rules_file


include: "rules/compare.smk"
include: "rules/report.smk"


onsuccess:
    # The run ends with what it found: verdict counts per study, parts not run, the report's path.
    from costlab.summary import print_summary

    print_summary("results", config["studies"], log)


# Every enabled study's targets (Study.targets: with no server, its not_run.json for the measured ones), the
# run manifest and the report; asked only when `all` is the target.
rule all:
    default_target: True
    input:
        lambda wildcards: PLAN.all_targets(),
