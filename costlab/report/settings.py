"""The config as the report shows it: dotted keys, the keys that differ from the defaults (URIs redacted)."""
from __future__ import annotations

from typing import Any

from costlab import STUDIES
from costlab.config import load_config
from costlab.server.provenance import redact_uri


def flatten(mapping: dict, prefix: str = "") -> dict[str, Any]:
    """{'a': {'b': 1}} -> {'a.b': 1}; lists stay values."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, dotted + "."))
        else:
            flat[dotted] = value
    return flat


def _shown_value(key: str, value: Any) -> Any:
    if key.endswith("uri") and isinstance(value, str):
        return redact_uri(value)
    return value


def config_differences(config: dict, defaults: dict) -> list[tuple[str, Any, Any]]:
    """(dotted key, default, value) for every key whose value differs from the default; URIs redacted."""
    current, default = flatten(config), flatten(defaults)
    rows = []
    for key in sorted(set(current) | set(default)):
        if current.get(key, None) != default.get(key, None):
            rows.append((key, _shown_value(key, default.get(key)), _shown_value(key, current.get(key))))
    return rows


def default_config() -> dict:
    """config/config.yaml with the schema's defaults filled in, as a run without --configfile sees it."""

    return load_config()


def concerns(key: str, study: str) -> bool:
    """Whether a dotted config key can change the study's results: its own keys, the server's, and the engine
    lab's shared keys and its own engine section (never another study's)."""

    parts = key.split(".")
    if parts[0] in (study, "server"):
        return True
    return parts[0] == "engine" and (len(parts) == 1 or parts[1] not in STUDIES or parts[1] == study)
