"""Loading and validating the workflow config (rules/common.smk, CLI checks, tests, benchmarks).

The schema is config/schema.yaml with the studies filled in from costlab.registry: the values
`studies` takes (and its default, every study), and the section of a study that file does not
describe (its Study.config_schema).
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Mapping

import yaml

from costlab.credentials import (
    ENV_PASSWORD,
    ENV_URI,
    public_server_config,
    redact_uri,
    redact_uri_passwords,
    uri_has_password,
    uri_problem,
)
from costlab.engine.limits import engine_problem
from costlab.jobs import RunFacts
from costlab.plan import plan_problem
from costlab.registry import REGISTRY, STUDY_NAMES
from costlab.suggest import did_you_mean

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = ROOT / "config" / "schema.yaml"
DEFAULT_CONFIG_PATH = ROOT / "config" / "config.yaml"


class ConfigError(ValueError):
    """A config value is invalid; the message names the key and what is allowed."""


def deep_merge(base: dict, override: dict) -> dict:
    """Return base updated recursively by override (Snakemake's --configfile semantics)."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def schema() -> dict:
    """The config's JSON schema: config/schema.yaml and the registry's studies."""
    found = yaml.safe_load(SCHEMA_PATH.read_text())
    properties = found["properties"]
    properties["studies"]["items"]["enum"] = list(STUDY_NAMES)
    properties["studies"]["default"] = list(STUDY_NAMES)
    for name, study in REGISTRY.items():
        if name not in properties:
            properties[name] = copy.deepcopy(dict(study.config_schema or {"type": "object", "default": {}}))
    return found


def _defaulting_validator() -> type:
    """A validator that fills in each property's default before it checks it (what Snakemake's
    validate(set_default=True) does: https://python-jsonschema.readthedocs.io/en/latest/faq/)."""
    import jsonschema  # noqa: PLC0415  only when validating: light modules import costlab.config for ROOT

    check_properties = jsonschema.Draft202012Validator.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, node):
        if isinstance(instance, dict):
            for key, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(key, copy.deepcopy(subschema["default"]))
        yield from check_properties(validator, properties, instance, node)

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"properties": set_defaults})


def _types(node: dict) -> set[str]:
    kind = node.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if kind else set()


def _takes_text(node: dict) -> bool:
    """Whether a string is a value this schema node can hold as it is (unknown nodes: yes)."""
    types = _types(node)
    if "string" in types:
        return True
    if "enum" in node:
        return any(isinstance(v, str) for v in node["enum"])
    return not types


def _typed(value: Any, node: dict) -> Any:
    if isinstance(value, dict):
        props = node.get("properties") or {}
        extra = node.get("additionalProperties")
        return {
            k: _typed(v, props.get(k, extra if isinstance(extra, dict) else {})) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_typed(v, node.get("items") or {}) for v in value]
    if isinstance(value, str) and not _takes_text(node):
        parsed = yaml.safe_load(value) if value.strip() else None
        return value if isinstance(parsed, str) else parsed
    return value


def typed_command_line_config(command_line: Mapping[str, Any]) -> dict:
    """Snakemake's --config values, with the types the schema asks for.

    Snakemake reads a nested value such as docsize='{sizes_kb: [1, 64]}' with YAML's BaseLoader, so
    every scalar inside arrives as a string ('1', 'true', 'null'). Where the schema does not allow a
    string, the string is read as YAML (1, True, None); where it does (server.image: "8.0"), it stays.
    A value that is still wrong after that is left for validation to name.
    """
    check_size(dict(command_line), "--config")   # an alias bomb on the command line: refused before the walk
    return _typed(dict(command_line), schema())


def apply_command_line_config(config: dict, command_line: Mapping[str, Any]) -> dict:
    """Merge the typed --config values over config, in place (Snakemake merged their string form)."""
    merged = deep_merge(config, typed_command_line_config(command_line))
    config.clear()
    config.update(merged)
    return config


# A config is a few hundred values: these bounds refuse a YAML alias bomb (a few hundred bytes that
# expand to billions of values when walked, printed or hashed) long before it costs anything.
MAX_CONFIG_VALUES = 100_000
MAX_CONFIG_DEPTH = 32
MAX_CONFIG_FILE_BYTES = 1 << 20
MAX_YAML_ALIASES = 100
MAX_MESSAGE_CHARS = 300


def check_size(config: Any, source: str = "the config") -> None:
    """ConfigError naming the key where `config` holds too many values (aliases count as copies) or
    nests too deep. Stops counting at the bound, so a bomb is refused at once."""
    seen = 0
    stack: list[tuple[Any, str, int]] = [(config, "", 0)]
    while stack:
        value, key, depth = stack.pop()
        seen += 1
        if seen > MAX_CONFIG_VALUES:
            raise ConfigError(
                f"{source} holds more than {MAX_CONFIG_VALUES:,} values (at key {key or '(top level)'}; "
                "YAML aliases count once per use): not a costlab config"
            )
        if depth > MAX_CONFIG_DEPTH:
            raise ConfigError(
                f"{source} nests deeper than {MAX_CONFIG_DEPTH} levels at key {key}: not a costlab config"
            )
        if isinstance(value, dict):
            stack.extend((v, f"{key}.{k}" if key else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{key}[{i}]", depth + 1) for i, v in enumerate(value))


def check_finite(config: Any) -> None:
    """ConfigError naming the first number that is NaN or infinite, wherever it is in the config.

    One rule for every numeric key: JSON has no NaN, and jsonschema's bounds compare with < and >,
    which NaN fails every time (appversions.loadtest.tolerance: .nan used to flip every load-test
    step to "missed" and exit 0; phase_seconds: .nan crashed planning)."""
    stack: list[tuple[Any, str]] = [(config, "")]
    while stack:
        value, key = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"invalid config key {_short(key or '(top level)')}: {value} is not a finite "
                              "number "
                              "(NaN and infinity are refused: give a number)")
        if isinstance(value, dict):
            stack.extend((v, f"{key}.{k}" if key else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{key}[{i}]") for i, v in enumerate(value))


def _short(text: str) -> str:
    """A message that never carries a whole config: one line, at most MAX_MESSAGE_CHARS."""
    line = text.splitlines()[0] if text else text
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"


def validate(config: dict) -> dict:
    """Validate in place against the schema (schema()), fill defaults, raise ConfigError naming the key."""
    from jsonschema import ValidationError  # noqa: PLC0415  heavy: jsonschema; the rule files import this module

    check_size(config)
    check_finite(config)
    try:
        _defaulting_validator()(schema()).validate(config)
    except ValidationError as err:
        raise ConfigError(explain_validation_error(err)) from None
    check_semantics(config)
    return config


def explain_validation_error(err: Exception) -> str:
    """Turn a jsonschema error wrapped by Snakemake into 'config key a.b: problem'."""
    cause = err
    for arg in getattr(err, "args", ()):
        if hasattr(arg, "absolute_path"):
            cause = arg
    inner = getattr(err, "__cause__", None) or getattr(err, "__context__", None)
    if inner is not None and hasattr(inner, "absolute_path"):
        cause = inner
    if hasattr(cause, "absolute_path"):
        key = ".".join(str(p) for p in cause.absolute_path) or "(top level)"
        allowed = _allowed(cause)
        return f"invalid config key {_short(key)}: {_short(cause.message)}" + (
            f" (allowed: {allowed})" if allowed else ""
        ) + _did_you_mean(cause)
    return f"invalid config: {_short(str(err))}"


def _did_you_mean(error: Any) -> str:
    """'; did you mean ...?' for a misspelt key or enum value (costlab.suggest), else ''."""

    schema = getattr(error, "schema", {}) or {}
    if getattr(error, "validator", None) == "additionalProperties" and schema.get("properties"):
        unexpected = re.findall(r"'([^']+)'", error.message.split("(")[-1])
        return did_you_mean(unexpected[0], schema["properties"]) if unexpected else ""
    if "enum" in schema:
        return did_you_mean(getattr(error, "instance", None), schema["enum"])
    return ""


def _allowed(error: Any) -> str:
    schema = getattr(error, "schema", {}) or {}
    if getattr(error, "validator", None) == "additionalProperties" and schema.get("properties"):
        # a misspelt key: the useful answer is the keys this section takes, not "type object"
        return "keys " + ", ".join(schema["properties"])
    if "enum" in schema:
        return ", ".join(map(str, schema["enum"]))
    parts = []
    for bound in ("minimum", "exclusiveMinimum", "maximum", "minItems", "maxItems"):
        if bound in schema:
            parts.append(f"{bound} {schema[bound]}")
    if "type" in schema:
        parts.append(f"type {schema['type']}")
    return ", ".join(parts)


def check_semantics(config: dict) -> None:
    """Rules a JSON schema cannot say cleanly."""

    for name in config.get("studies", ()):
        problem = REGISTRY[name].config_problem(config) if name in REGISTRY else None
        if problem:
            raise ConfigError(problem)
    problem = engine_problem(config)
    if problem:
        raise ConfigError(problem)
    problem = plan_problem(config)
    if problem:
        raise ConfigError(problem)
    server = config.get("server", {})
    if server.get("backend") == "external" and not (server.get("uri") or os.environ.get(ENV_URI)):
        raise ConfigError(f"invalid config key server.uri: required when server.backend is external "
                          f"(e.g. mongodb://user@host:27017/ with the password in {ENV_PASSWORD}), "
                          f"or set {ENV_URI}")
    for source, uri in (("config key server.uri", server.get("uri")), (f"environment variable {ENV_URI}",
                                                                       os.environ.get(ENV_URI))):
        problem = uri and uri_problem(uri)
        if problem:
            raise ConfigError(f"invalid {source}: {redact_uri(uri)!r} {problem}")
    if uri_has_password(server.get("uri")):
        # Accepted (a config file of your own is your disk), but --config would put it in the
        # process list and Snakemake's log: say once where it belongs.
        print(f"costlab: server.uri carries a password; keep it off the command line: set {ENV_PASSWORD} "
              "(see docs/reliability.md)", file=sys.stderr)


class _YamlLimit(Exception):
    """A YAML file beyond the loader's bounds (the message says which)."""


class _LimitedLoader(yaml.SafeLoader):
    """SafeLoader that refuses more than MAX_YAML_ALIASES aliases or MAX_CONFIG_DEPTH nesting."""

    def __init__(self, stream):
        super().__init__(stream)
        self._aliases = 0
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                mark = self.peek_event().start_mark
                raise _YamlLimit(
                    f"more than {MAX_YAML_ALIASES} YAML aliases (line {mark.line + 1}): refused, "
                    "aliases can expand without bound"
                )
        self._depth += 1
        try:
            if self._depth > MAX_CONFIG_DEPTH:
                mark = self.peek_event().start_mark
                raise _YamlLimit(f"nests deeper than {MAX_CONFIG_DEPTH} levels (line {mark.line + 1})")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        """A key given twice in one mapping is refused (YAML would keep the last one, silently)."""
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    if key in seen:
                        raise _YamlLimit(f"key {key!r} is given twice (lines {seen[key]} and {line}): YAML "
                                         "would keep the last one silently; give it once")
                    seen[key] = line
                except TypeError:   # an unhashable key: the constructor says so
                    continue
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path) -> dict:
    """A config file's mapping, or ConfigError naming the file and the line of a YAML mistake."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_FILE_BYTES:
            raise ConfigError(f"config file {path} is {size:,} bytes (at most {MAX_CONFIG_FILE_BYTES:,}): "
                              "not a costlab config")
        text = path.read_text()
        if not text.strip():
            raise ConfigError(
                f"config file {path} is empty: give it config keys (e.g. docsize: {{sizes_kb: [1, 64]}}) "
                "or leave it out (Snakemake refuses an empty config file without naming it)"
            )
        data = yaml.load(text, Loader=_LimitedLoader)
    except _YamlLimit as err:
        raise ConfigError(f"config file {path}: {err}") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        raise ConfigError(
            f"config file {path}: YAML error at {where}: {err.problem or err.context}"
        ) from None
    except yaml.YAMLError as err:
        raise ConfigError(f"config file {path}: YAML error: {err}") from None
    except OSError as err:
        raise ConfigError(f"config file {path} cannot be read: {err.strerror or err}") from None
    if data is None:
        raise ConfigError(
            f"config file {path} holds no config keys (only comments or null): give it keys or leave it out"
        )
    check_size(data, f"config file {path}")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping of config keys at the top level, "
                          f"got a {type(data).__name__}")
    return data


def check_config_files(configfiles: Any) -> None:
    """ConfigError for the first config file the bounded loader refuses (a key given twice, an alias bomb):
    Snakemake reads --configfile with a loader that keeps the last of two keys silently, so the workflow
    reads the same files again with this one before any job (rules/common.smk)."""
    for path in configfiles or ():
        if Path(path).resolve() != DEFAULT_CONFIG_PATH:
            read_yaml(path)


def load_config(*configfiles: str | Path, overrides: Mapping[str, Any] | None = None) -> dict:
    """Defaults from config/config.yaml, then each file in order, then overrides (typed as
    --config values are); validated. The same layering as `snakemake --configfile A B --config K=V`."""
    config: dict = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text()) or {}
    for path in configfiles:
        path = Path(path)
        if path.resolve() == DEFAULT_CONFIG_PATH:
            continue
        if not path.exists():
            raise ConfigError(f"config file {path} does not exist")
        config = deep_merge(config, read_yaml(path))
    if overrides:
        config = deep_merge(config, typed_command_line_config(overrides))
    return validate(config)


RUN_ARGS_ENV = "COSTLAB_RUN_ARGS"   # set by rules/common.smk for its jobs: this run's config arguments


def run_arguments(configfiles: Any, command_line: Mapping[str, Any] | None) -> str:
    """The config arguments of a run as a command line gives them (`--configfile a.yaml --config k=v`),
    without the defaults file and with any URI's password removed: for the commands messages print."""

    files = [Path(f) for f in configfiles or () if Path(f).resolve() != DEFAULT_CONFIG_PATH]
    parts = ["--configfile", *(shlex.quote(str(f)) for f in files)] if files else []
    if command_line:
        parts.append("--config")
        for key, value in command_line.items():
            text = value if isinstance(value, str) else yaml.safe_dump(value, default_flow_style=True,
                                                                          width=10**6).strip()
            parts.append(shlex.quote(redact_uri_passwords(f"{key}={text}")))
    return " ".join(parts)


# The server keys that choose which server measures: part of every study's hash. (Timeouts
# and the like change nothing a study measures.)
SERVER_HASH_KEYS = ("backend", "uri", "image", "mongod")


# Keys that choose which measuring jobs run, not what one of them measures (each study's
# Study.job_selecting_keys): fewer sizes keep the jobs of the remaining ones as they are (Snakemake plans
# nothing), so they are not part of a study's hash. `sizes_kb: [1]` used to make the page say "rerun the
# study" while `snakemake -n` had nothing to do.


def _without(section: Any, paths: tuple[tuple[str, ...], ...]) -> Any:
    if not isinstance(section, dict):
        return section
    section = copy.deepcopy(section)
    for path in paths:
        node = section
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return section


def study_config_hash(config: dict, study: str) -> str:
    """Hash of what one study's measuring jobs measure with: its own keys (less those that only choose
    which jobs run, its Study.job_selecting_keys) plus the server's. Changes only where a rerun would change
    something.

    Another study's key leaves it unchanged, so the report warns "rerun" only on the study whose
    measurements the change concerns.
    """
    server = config.get("server") or {}
    selecting = REGISTRY[study].job_selecting_keys if study in REGISTRY else ()
    return config_hash({study: _without(config.get(study), selecting),
                        "server": {k: server.get(k) for k in SERVER_HASH_KEYS}})


def study_of_provenance_path(path: str | Path, config: dict) -> str | None:
    """The study a provenance file belongs to: results/<study>/provenance/<job>.json (None otherwise)."""
    path = Path(path)
    name = path.parent.parent.name if path.parent.name == "provenance" else None
    return name if name and name != "server" and isinstance(config.get(name), dict) else None


def config_hash(config: dict) -> str:
    """Stable short hash of a config (key order does not matter); credentials are not part of it."""
    scrubbed = copy.deepcopy(config)
    if isinstance(scrubbed.get("server"), dict) and scrubbed["server"].get("uri"):
        scrubbed["server"]["uri"] = redact_uri(scrubbed["server"]["uri"])
    canonical = json.dumps(scrubbed, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def study_settings(config: Mapping[str, Any], study: str) -> dict[str, Any]:
    """The config keys that concern one study, as its jobs' provenance records them (`study_config`): its own
    section, the server's (the URI without credentials), and the engine lab's shared keys with the study's
    own engine section (never another study's). compare.with reads them to name what two runs differ in."""

    engine = config.get("engine") or {}
    shared = {k: v for k, v in engine.items() if k not in STUDY_NAMES} if isinstance(engine, dict) else {}
    own = engine.get(study) if isinstance(engine, dict) else None
    return copy.deepcopy({study: config.get(study),
                          "server": public_server_config(config.get("server") or {}),
                          "engine": shared | ({study: own} if own is not None else {})})


def run_facts(config: Mapping[str, Any], study: str | None = None) -> RunFacts:
    """The run's facts a job takes beside its params (costlab.jobs.RunFacts says why they are not params):
    the one way a script reads snakemake.config. The hashes are computed as provenance always did."""
    config = dict(config)
    return RunFacts(
        study=study,
        server=dict(config.get("server") or {}),
        config_hash=config_hash(config),
        study_config_hash=study_config_hash(config, study) if study else None,
        # what a rerun of an engine job depends on: its study's section and the whole engine section
        engine_config_hash=(
            config_hash({"study": config.get(study), "engine": config.get("engine", {})}) if study else None
        ),
        recorded_config=json.dumps(study_settings(config, study), sort_keys=True, default=str)
        if study
        else "",
    )
