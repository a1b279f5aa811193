"""The app-version registry: one declaration per version; order, wildcard and config checks from it."""
from __future__ import annotations

import re

import pytest
import yaml
from known import ARTICLE_VERSIONS, UNKNOWN_VERSION

from costlab.appversions import registry
from costlab.appversions.layouts import layout_named
from costlab.appversions.names import loadtest_figures
from costlab.appversions.registry import PUBLISHED_NAMES, VersionDeclaration
from costlab.appversions.versions import VERSIONS, get_version
from costlab.config import DEFAULT_CONFIG_PATH, SCHEMA_PATH, ConfigError, load_config

ARTICLES = list(ARTICLE_VERSIONS)


def test_published_versions_in_published_order():
    # the articles' versions first, in their order; a version added later comes after them
    assert list(PUBLISHED_NAMES)[:len(ARTICLES)] == ARTICLES
    assert list(VERSIONS)[:len(PUBLISHED_NAMES)] == list(PUBLISHED_NAMES)


def test_schema_and_default_config_lists_follow_the_registry():
    """The schema no longer enumerates versions (a registered one needs no schema edit); the
    defaults that say what a normal run measures are the published versions, in their order."""
    schema = yaml.safe_load(SCHEMA_PATH.read_text())["properties"]["appversions"]["properties"]
    for items in (schema["versions"]["items"], schema["load_versions"]["items"],
                  schema["loadtest"]["properties"]["versions"]["items"]):
        assert items == {"type": "string"}
    assert schema["versions"]["default"] == list(PUBLISHED_NAMES)
    assert yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())["appversions"]["versions"] == list(PUBLISHED_NAMES)


@pytest.mark.parametrize("override, key", [
    ({"versions": ["appV1", UNKNOWN_VERSION]}, "appversions.versions"),
    ({"load_versions": [UNKNOWN_VERSION]}, "appversions.load_versions"),
    ({"loadtest": {"versions": ["appv4"]}}, "appversions.loadtest.versions"),
])
def test_an_unregistered_version_is_refused_naming_the_key(override, key):
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"appversions": override})
    message = str(err.value)
    assert message.startswith(f"invalid config key {key}: ") and "not an app version" in message
    assert "allowed: appV1, appV2," in message and "\n" not in message


def test_wildcard_is_exactly_the_registered_names():
    pattern = re.compile(f"(?:{registry.wildcard_pattern()})")
    for name in ARTICLES:
        assert pattern.fullmatch(name)
    for other in (UNKNOWN_VERSION, "appV5", "appV5R5", "authors_appV1", "appV1.json", ""):
        assert not pattern.fullmatch(other)


def test_order_of_any_list_is_the_registry_and_keeps_unknown_names():
    assert registry.in_order(["appV6R4", "mine", "appV1", "appV6R4"]) == ["appV1", "appV6R4", "mine"]
    # the all-versions load-test figure draws every tested version, in registry order
    assert loadtest_figures(["appV6R3", "appV2", "appV5R0"]) == [
        ("loadtest_all", ("appV2", "appV5R0", "appV6R3"))
    ]


def test_each_version_asks_its_layout():
    assert get_version("appV1").layout is layout_named("embedded_id")
    assert [get_version(n).day_rule for n in ("appV3", "appV4", "appV5R2", "appV6R0")] == [
        "dates",
        "day_ids",
        "dates",
        "day_ids",
    ]


@pytest.mark.parametrize(
    "declaration, words",
    [
        (
            VersionDeclaration("badV1", "key_string", "month", "match_group"),
            "layout 'key_string' holds one day",
        ),
        (VersionDeclaration("badV2", "dynamic", "quarter", "reduce_dynamic"), "needs item_name_format"),
        (
            VersionDeclaration("badV3", "nolayout", "day", "match_group"),
            "unknown layout 'nolayout'; allowed: embedded_id",
        ),
    ],
)
def test_a_declaration_its_layout_cannot_hold_is_refused(declaration, words):
    registry.register(declaration)
    try:
        with pytest.raises(ValueError, match=re.escape(words)):
            get_version(declaration.name)
    finally:
        registry.unregister(declaration.name)


def test_bad_declarations_and_names_are_refused():
    with pytest.raises(ValueError, match="invalid bucket 'week'"):
        VersionDeclaration("v", "push", "week", "unwind")
    with pytest.raises(ValueError, match="invalid name 'a/b'"):
        VersionDeclaration("a/b", "push", "month", "unwind")
    with pytest.raises(ValueError, match="'appV4' is already registered"):
        registry.register(VersionDeclaration("appV4", "id_day", "day", "match_group"))
    with pytest.raises(ValueError, match="published app version"):
        registry.unregister("appV4")
    with pytest.raises(ValueError, match=rf"unknown app version '{re.escape(UNKNOWN_VERSION)}'; "
                                         "allowed: appV1"):
        get_version(UNKNOWN_VERSION)
