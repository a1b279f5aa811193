"""'Did you mean' where a DBA mistypes: config keys, enum values, version and layout names
(costlab/suggest.py), each at the end of the one-line config error."""
from __future__ import annotations

import pytest

from costlab.config import ConfigError, load_config
from costlab.suggest import closest


def test_closest_takes_case_first_then_spelling_and_says_nothing_when_nothing_is_near():
    assert closest("appv4", ["appV1", "appV4", "appV5R0"]) == "appV4"        # case alone
    assert closest("evnts_per_year", ["seed", "events_per_year"]) == "events_per_year"
    assert closest("colour", ["base", "layout", "bucket", "report"]) is None
    assert closest(5, ["a"]) is None and closest("", ["a"]) is None


TWO = {"versions": ["appV4", "mine"]}


@pytest.mark.parametrize("override, suggestion", [
    ({"appversions": {"evnts_per_year": 5}}, "did you mean 'events_per_year'?"),
    ({"studis": ["docsize"]}, "did you mean 'studies'?"),
    ({"server": {"backend": "dokcer"}}, "did you mean 'docker'?"),
    ({"appversions": {"versions": ["appv4"]}}, "did you mean 'appV4'?"),
    ({"appversions": {**TWO, "variants": {"mine": {"base": "appV4", "bucket": "mnth"}}}},
     "did you mean 'month'?"),
    ({"appversions": {**TWO, "variants": {"mine": {"base": "appv5r3"}}}}, "did you mean 'appV5R3'?"),
    ({"appversions": {**TWO, "variants": {"mine": {"bsae": "appV4"}}}}, "did you mean 'base'?"),
    ({"appversions": {**TWO, "variants": {"mine": {"base": "appV4", "layout": "pushh"}}}},
     "did you mean 'push'?"),
    ({"appversions": {**TWO, "variants": {"mine": {"base": "appV4", "compare_to": "appv4"}}}},
     "did you mean 'appV4'?"),
])
def test_a_mistyped_name_is_answered_with_the_nearest_allowed_one(override, suggestion):
    with pytest.raises(ConfigError) as err:
        load_config(overrides=override)
    message = str(err.value)
    assert message.endswith("; " + suggestion) and "\n" not in message, message
