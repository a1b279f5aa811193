"""The wiredtiger Python module itself: importing it, and its version (no extensions, no probing).

costlab.engine.extensions builds against this version; costlab.engine.wt asks the loaded build
what it can do.
"""
from __future__ import annotations

from types import ModuleType


class EngineUnavailable(RuntimeError):
    """The wiredtiger module cannot be imported; the message says what to install."""


def wiredtiger_module() -> ModuleType:
    try:
        import wiredtiger  # noqa: PLC0415  shipped by secantusdb (see requirements.txt)
    except ImportError as err:
        raise EngineUnavailable(
            "the engine lab needs the `wiredtiger` Python module; install it with "
            "`pip install secantusdb==0.7.0b3` (make installs it from requirements.txt): " + str(err)
        ) from None
    return wiredtiger


def wiredtiger_version() -> str:
    """'11.2.0' (major.minor.patch of the loaded library)."""
    _, major, minor, patch = wiredtiger_module().wiredtiger_version()
    return f"{major}.{minor}.{patch}"
