"""A job's params that are a dict of known keys are typed (a TypedDict): the keys each rule's params give on
the shipped configs are exactly the ones its class declares, so a reader of the job knows what it gets."""
from __future__ import annotations

import dataclasses
import importlib
import types
import typing
from typing import Any, TypedDict

import pytest

from costlab.config import ROOT, load_config
from costlab.jobs import JobParams
from costlab.registry import STUDY_NAMES

PARAMS_MODULES = [f"costlab.{name}.params" for name in STUDY_NAMES
                  if (ROOT / "costlab" / name / "params.py").exists()] + ["costlab.report.params",
                                                                          "costlab.server.params"]
CONFIGS = ["config/config.yaml", "config/smoke.yaml", "config/full.yaml"]


def params_classes() -> list[type[JobParams]]:
    found = []
    for name in PARAMS_MODULES:
        module = importlib.import_module(name)
        found += [value for value in vars(module).values()
                  if isinstance(value, type) and issubclass(value, JobParams) and value is not JobParams
                  and value.__module__ == name and dataclasses.is_dataclass(value)]
    return found


def typed_dict_of(hint: Any) -> type | None:
    """The TypedDict a field's type names (`X` or `X | None`), else None."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    found = [option for option in options if typing.is_typeddict(option)]
    return found[0] if found else None


def key_problems(kind: type, value: Any, where: str) -> list[str]:
    """How `value` differs from the TypedDict `kind` (missing or undeclared keys, nested ones too)."""
    if value is None or callable(value):   # None where the type allows it; a wildcards function
        return []
    if not isinstance(value, dict):
        return [f"{where}: a {type(value).__name__}, not a dict"]
    required, optional = set(kind.__required_keys__), set(kind.__optional_keys__)
    problems = [f"{where}: missing {sorted(required - set(value))}"] if required - set(value) else []
    if set(value) - required - optional:
        problems.append(f"{where}: undeclared {sorted(set(value) - required - optional)}")
    hints = typing.get_type_hints(kind)
    for key in set(value) & set(hints):
        nested = typed_dict_of(hints[key])
        if nested is not None:
            problems += key_problems(nested, value[key], f"{where}.{key}")
    return problems


class _Inner(TypedDict):
    a: int


class _Sometimes(TypedDict, total=False):
    extra: int


class _Outer(_Sometimes):
    inner: _Inner


def test_key_problems_names_a_missing_an_undeclared_and_a_nested_key():
    assert key_problems(_Outer, {"inner": {"a": 1}}, "x") == []
    assert key_problems(_Outer, {"inner": {"a": 1}, "extra": 2}, "x") == []
    assert key_problems(_Outer, {"inner": {}, "b": 1}, "x") == ["x: undeclared ['b']",
                                                                "x.inner: missing ['a']"]
    assert key_problems(_Outer, lambda wildcards: None, "x") == []


def test_no_job_params_field_is_a_plain_dict():
    plain = []
    for cls in params_classes():
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            options = typing.get_args(hints[field.name]) or (hints[field.name],)
            if dict in options or hints[field.name] is dict:
                plain.append(f"{cls.__module__}.{cls.__name__}.{field.name}")
    assert plain == []


@pytest.mark.parametrize("config_file", CONFIGS)
def test_typed_params_hold_exactly_their_declared_keys(config_file):
    config = load_config(ROOT / config_file)
    problems, typed = [], 0
    for cls in params_classes():
        try:
            declared = cls.declare(config)
        except TypeError:   # a rule's own arguments (a figure's name, the study targets): defaults suffice
            continue
        hints = typing.get_type_hints(cls)
        for field in dataclasses.fields(cls):
            kind = typed_dict_of(hints[field.name])
            if kind is not None:
                typed += 1
                problems += key_problems(kind, declared[field.name], f"{cls.__name__}.{field.name}")
    assert typed >= 25   # the check sees the typed fields (it would pass on none)
    assert problems == []
