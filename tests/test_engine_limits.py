"""Engine values the schema let through and WiredTiger then refused with a traceback are refused
with the config, naming the key and what is allowed (costlab/engine/limits.py, each study's
Study.engine_problem)."""
from __future__ import annotations

import pytest

from costlab.config import ConfigError, load_config


@pytest.mark.parametrize("overrides, message", [
    ({"engine": {"docsize": {"docs_per_collection": 500, "window_minutes": 1000}}},
     r"engine\.docsize\.window_minutes: 1000 is more than engine\.docsize\.docs_per_collection \(500\)"),
    ({"engine": {"docsize": {"default_cache_mb": 1}}, "docsize": {"sizes_kb": [1, 64]}},
     r"engine\.docsize\.default_cache_mb: 1 MB cannot load 64 KB orders .*at least 21 MB"),
    ({"engine": {"docsize": {"default_cache_mb": 16}}, "docsize": {"sizes_kb": [64]}},
     r"engine\.docsize\.default_cache_mb: 16 MB"),
    ({"engine": {"docsize": {"default_cache_mb": 100000000}}}, r"engine\.docsize\.default_cache_mb"),
    ({"engine": {"docsize": {"small_cache_mb": 100000000}}}, r"engine\.docsize\.small_cache_mb"),
])
def test_engine_values_wiredtiger_would_refuse_are_named(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(overrides=overrides)


def test_an_engine_workdir_naming_a_file_is_refused(tmp_path):
    afile = tmp_path / "scratch"
    afile.write_text("")
    with pytest.raises(ConfigError, match=r"engine\.workdir: .*is a file, not a directory"):
        load_config(overrides={"engine": {"workdir": str(afile)}})
    load_config(overrides={"engine": {"workdir": str(tmp_path / "not-yet")}})   # made when needed


def test_the_bounds_held_where_wiredtiger_worked():
    # 24 MB loaded 64 KB orders and 2 MB loaded 4 KB ones (the module's measurements): accepted
    load_config(overrides={"engine": {"docsize": {"default_cache_mb": 24}}, "docsize": {"sizes_kb": [64]}})
    load_config(overrides={"engine": {"docsize": {"default_cache_mb": 2}}, "docsize": {"sizes_kb": [4]}})
    from costlab.docsize.ceilings import DOCSIZE_LOAD_BATCH
    from costlab.docsize.engine import INSERT_BATCH

    assert INSERT_BATCH == DOCSIZE_LOAD_BATCH
