"""'Did you mean' for a mistyped name: the closest allowed one (difflib), said at the end of a one-line
error. Standard library only: the config check, the registries and the declarations all use it."""
from __future__ import annotations

import difflib
from typing import Iterable


def closest(value: object, allowed: Iterable[object]) -> str | None:
    """The allowed name closest to `value` (case aside first: appv4 -> appV4), or None when none is near."""
    if not isinstance(value, str) or not value:
        return None
    names = [str(a) for a in allowed]
    folded = {name.lower(): name for name in names}
    if value.lower() in folded and folded[value.lower()] != value:
        return folded[value.lower()]
    match = difflib.get_close_matches(value.lower(), list(folded), n=1, cutoff=0.6)
    return folded[match[0]] if match else None


def did_you_mean(value: object, allowed: Iterable[object]) -> str:
    """'; did you mean 'x'?' for the closest allowed name, or '' (appended to a one-line error)."""
    name = closest(value, allowed)
    return f"; did you mean {name!r}?" if name is not None else ""


__all__ = ["closest", "did_you_mean"]
