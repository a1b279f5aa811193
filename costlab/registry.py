"""Every study, once: the one list of study packages, and what is derived from their declarations.

The only module outside a study that imports a study: each package's face (its __init__.py and
the light modules that declare its `Study`), never its tables, figures or measuring code.
Order: the report's sections, `all`'s studies, the console's summary.

A study kept outside this checkout (a package on PYTHONPATH, with its own rules file): name its
package in COSTLAB_STUDY_PACKAGES (comma-separated); it is added after the built-in ones.
"""
from __future__ import annotations

import importlib
import os

import costlab.appversions
import costlab.arraygrowth
import costlab.docsize
import costlab.flatnested
import costlab.uniqueidx
from costlab.study import RuleAsk, Study

EXTRA_PACKAGES_ENV = "COSTLAB_STUDY_PACKAGES"
BUILT_IN: tuple[Study, ...] = (
    costlab.docsize.STUDY,
    costlab.appversions.STUDY,
    costlab.arraygrowth.STUDY,
    costlab.flatnested.STUDY,
    costlab.uniqueidx.STUDY,
)


def _extra_studies() -> tuple[Study, ...]:
    found = []
    for package in filter(None, (p.strip() for p in os.environ.get(EXTRA_PACKAGES_ENV, "").split(","))):
        try:
            study = importlib.import_module(package).STUDY
        except (ImportError, AttributeError) as err:
            raise RuntimeError(
                f"{EXTRA_PACKAGES_ENV}: package {package!r} declares no study ({err}); "
                "allowed: importable packages whose __init__ sets STUDY = Study(...)"
            ) from None
        if not isinstance(study, Study):
            raise RuntimeError(
                f"{EXTRA_PACKAGES_ENV}: {package}.STUDY is a {type(study).__name__}, not a Study"
            )
        found.append(study)
    return tuple(found)


def _by_name(studies: tuple[Study, ...]) -> dict[str, Study]:
    by_name: dict[str, Study] = {}
    for study in studies:
        if study.name in by_name:
            raise RuntimeError(f"two studies are named {study.name!r}: each study needs a name of its own")
        by_name[study.name] = study
    return by_name


REGISTRY: dict[str, Study] = _by_name(BUILT_IN + _extra_studies())
STUDY_NAMES: tuple[str, ...] = tuple(REGISTRY)
# Every rule a study says something about for a cluster: rule -> (study, its ask, measuring?).
MEASURING_RULES: dict[str, RuleAsk] = {
    rule: ask for study in REGISTRY.values() for rule, ask in study.measuring_rules.items()
}
# Measuring rules whose outputs a failed rerun keeps (each study's Study.kept_rules; costlab/jobs.py).
KEPT_RULES: frozenset[str] = frozenset(rule for study in REGISTRY.values() for rule in study.kept_rules)
OTHER_RULES: dict[str, RuleAsk] = {
    rule: ask for study in REGISTRY.values() for rule, ask in study.other_rules.items()
}


def study(name: str) -> Study:
    """The study called `name`; a clear error naming the studies there are."""
    if name not in REGISTRY:
        raise ValueError(f"unknown study {name!r}; allowed: {', '.join(STUDY_NAMES)}")
    return REGISTRY[name]


def wildcard_regex() -> str:
    """A Snakemake wildcard constraint that matches exactly one study name."""
    return "|".join(STUDY_NAMES)
