"""Snakemake: server-free sizes of every docsize collection (and whether each fits a cache)."""
from pathlib import Path

import psutil

from costlab.docsize.model import collections_model, datasets_model, published_vs_model
from costlab.docsize.params import ModelParams
from costlab.inputs import read_csv
from costlab.io import write_csv

study = ModelParams.from_params(snakemake.params).study
write_csv(collections_model(study), snakemake.output.collections)
datasets = datasets_model(study, snakemake.input.published, psutil.virtual_memory().total)
write_csv(datasets, snakemake.output.datasets)
facts = read_csv(snakemake.input.facts)
published_documents = int(facts.filter(facts["fact"] == "docs_per_collection")["value"][0])
write_csv(published_vs_model(datasets, snakemake.input.published, published_documents),
          snakemake.output.published_vs_model)
Path(snakemake.log[0]).write_text(datasets.write_csv())
