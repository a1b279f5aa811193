"""Snakemake: server-free sizes of every docsize collection (and whether each fits a cache)."""
import psutil

from costlab.docsize.model import collections_model, datasets_model
from costlab.io import write_csv

study = snakemake.params.study
write_csv(collections_model(study), snakemake.output.collections)
write_csv(datasets_model(study, snakemake.input.published, psutil.virtual_memory().total), snakemake.output.datasets)
