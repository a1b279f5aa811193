# costlab: `snakemake all` rebuilds every table, figure and the report; name one file to build
# just that (e.g. snakemake results/docsize/figures/latency.png). Rules say what depends on
# what; the work is in the costlab package, called by thin scripts/.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "rules/common.smk"
include: "rules/servers.smk"
include: "rules/docsize.smk"
include: "rules/appversions.smk"
include: "rules/arraygrowth.smk"
include: "rules/flatnested.smk"
include: "rules/uniqueidx.smk"
include: "rules/compare.smk"
include: "rules/report.smk"


rule all:
    default_target: True
    input:
        ALL_TARGETS,
