"""Which datasets (one collection, or two for the split variant, per document size) a config asks for."""
from __future__ import annotations

import re
from dataclasses import dataclass

DATABASE = "costlab_docsize"

# variant -> (config switch, main collection layout, history collection layout or None)
VARIANTS: dict[str, tuple[str | None, str, str | None]] = {
    "base": (None, "history_last", None),
    "tail": ("fields_after_history", "history_first", None),
    "split": ("split_history", "orders_only", "history_only"),
    # a user's document (docsize.documents): its own collection, doc_<name>_<size>, never switched on here
    "document": (None, "history_last", None),
}
VARIANT_SUFFIX = {"base": "", "tail": "_tail", "split": "_split"}


@dataclass(frozen=True)
class Dataset:
    name: str            # also the main collection's name and the data directory's name
    size_kb: int
    variant: str         # base | tail | split

    @property
    def layout(self) -> str:
        return VARIANTS[self.variant][1]

    @property
    def history_layout(self) -> str | None:
        return VARIANTS[self.variant][2]

    @property
    def collection(self) -> str:
        return self.name

    @property
    def history_collection(self) -> str | None:
        return f"{self.name}_history" if self.history_layout else None


def dataset_name(size_kb: int, variant: str = "base") -> str:
    if variant not in VARIANTS:
        raise ValueError(f"unknown docsize variant {variant!r}; allowed: {', '.join(VARIANTS)}")
    return f"orders_{int(size_kb)}k{VARIANT_SUFFIX[variant]}"


def datasets(study_config: dict) -> list[Dataset]:
    """Base datasets for every size, then the enabled variants' datasets."""
    sizes = [int(s) for s in study_config["sizes_kb"]]
    switches = study_config.get("variants", {}) or {}
    found = [Dataset(dataset_name(s), s, "base") for s in sizes]
    for variant, (switch, _, _) in VARIANTS.items():
        if switch and switches.get(switch, False):
            found += [Dataset(dataset_name(s, variant), s, variant) for s in sizes]
    return found


_NAME = re.compile(r"^orders_([1-9][0-9]*)k(_tail|_split)?$")


def parse_dataset(name: str) -> Dataset:
    """orders_16k_tail -> Dataset(orders_16k_tail, 16, tail); a clear error for anything else."""
    match = _NAME.match(name)
    if not match:
        raise ValueError(f"bad docsize dataset name {name!r}; expected orders_<size>k, orders_<size>k_tail "
                         f"or orders_<size>k_split")
    suffix = match.group(2) or ""
    variant = next(v for v, s in VARIANT_SUFFIX.items() if s == suffix)
    return Dataset(name, int(match.group(1)), variant)


def relation_problem(section: dict) -> str | None:
    """A window or a customer count larger than a collection: the queries would cover less than the
    window the study describes, or customers would have no orders."""
    docs = int(section["docs_per_collection"])
    for key in ("window_minutes", "customers"):
        if int(section[key]) > docs:
            return (
                f"invalid config key docsize.{key}: {int(section[key])} exceeds docsize.docs_per_collection "
                f"({docs}); allowed: at most {docs}"
            )
    return None


def check_study_config(study_config: dict) -> None:
    """Relations the schema cannot express (costlab.config.check_semantics checks them before a run,
    through the study's config_problem, as a ConfigError; a job given a section directly checks again)."""
    problem = relation_problem(study_config)
    if problem:
        raise ValueError(problem)
