"""What a refused appversions section says: load_config's ConfigError, its message in one line, with the
layout files it imported forgotten afterwards (the next test starts from the published versions)."""
from __future__ import annotations

import pytest

from costlab.appversions import variants
from costlab.config import ConfigError, load_config


def appversions_refusal(section: dict) -> str:
    try:
        with pytest.raises(ConfigError) as err:
            load_config(overrides={"appversions": section})
    finally:
        variants.forget_layout_files()
    message = str(err.value)
    assert "\n" not in message, message
    return message
