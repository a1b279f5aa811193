"""The engine keys one study's engine job depends on: a param of every engine rule
(costlab/<study>/params.py)."""
from __future__ import annotations

from typing import Any, Mapping, TypedDict

from costlab.engine.extensions import compressors_loaded
from costlab.registry import REGISTRY, STUDY_NAMES
from costlab.repeats import ENGINE_REPEATS


class _EngineKeysSometimes(TypedDict, total=False):
    # total=False, not NotRequired: this module's annotations are strings, which TypedDict takes as required
    replica_set: dict[str, Any]   # the studies whose engine jobs read it (Study.engine_replica_set)


class EngineKeys(_EngineKeysSometimes):
    """engine_keys(config, study): the shared engine keys an engine job reads (engine.<study> aside)."""
    enabled: bool
    journal_compressor: str
    block_compressor: str
    retryable_writes: bool
    workdir: str | None
    compressors_loaded: dict[str, Any]   # what the engine lab loads (costlab.engine.extensions)


def engine_keys(config: Mapping[str, Any], study: str) -> dict[str, Any]:
    """The shared engine keys (compressors, ...) and the study's own section, never another study's, so
    `engine.arraygrowth.ns` reruns arraygrowth_engine alone; `engine.replica_set` only for the studies whose
    engine jobs read it (Study.engine_replica_set). What the engine lab loads (compressor extensions' files
    and digests, or that the nearest built-in substitutes) is one too: `make wt-extensions` reruns exactly
    the engine jobs."""
    return {
        **{
            key: value
            for key, value in config["engine"].items()
            if (key not in STUDY_NAMES or key == study)
            and (key != "replica_set" or (study in REGISTRY and REGISTRY[study].engine_replica_set))
        },
        "compressors_loaded": compressors_loaded(),
    }


def engine_repeat_keys(config: Mapping[str, Any], study: str) -> dict[str, Any]:
    """engine_keys(config, study) without the study's count of repeats (ENGINE_REPEATS): what one repeat's
    engine job reads, so another count reruns no repeat already measured."""
    keys = engine_keys(config, study)
    return {**keys, study: ENGINE_REPEATS.without_count(keys.get(study) or {})}
