"""The compared layouts: flat N fields vs structured N/5 sub-documents of 5 fields each."""
from __future__ import annotations

from dataclasses import dataclass

FIELDS_PER_GROUP = 5
# The widest published shape (100 fields / 20x5); generate.GROUPS holds exactly this many groups.
# Kept here, not derived from GROUPS, so the workflow can plan shapes without importing faker.
MAX_GROUPS = 20
MAX_FIELDS = MAX_GROUPS * FIELDS_PER_GROUP
LAYOUTS = ("flat", "structured")


@dataclass(frozen=True)
class Shape:
    layout: str       # "flat" or "structured"
    fields: int       # leaf fields per document (10, 25, 50, 100)

    @property
    def groups(self) -> int:
        return self.fields // FIELDS_PER_GROUP

    @property
    def name(self) -> str:
        """Dataset, collection and wildcard name: flat_10, structured_2x5."""
        if self.layout == "flat":
            return f"flat_{self.fields}"
        return f"structured_{self.groups}x{FIELDS_PER_GROUP}"

    @property
    def label(self) -> str:
        """How the article names the shape: '10' or '2x5'."""
        return str(self.fields) if self.layout == "flat" else f"{self.groups}x{FIELDS_PER_GROUP}"


def check_field_count(fields: int, max_fields: int) -> int:
    if (
        not isinstance(fields, int)
        or fields < FIELDS_PER_GROUP
        or fields % FIELDS_PER_GROUP
        or fields > max_fields
    ):
        raise ValueError(f"flatnested field count {fields!r} is not allowed: use a multiple of "
                         f"{FIELDS_PER_GROUP} between {FIELDS_PER_GROUP} and {max_fields}")
    return fields


def shapes_for(flat_fields: list[int], max_fields: int) -> list[Shape]:
    """Both layouts for every configured field count, flat first (pairs stay adjacent)."""
    return [Shape(layout, check_field_count(n, max_fields)) for n in flat_fields for layout in LAYOUTS]


def parse_shape(name: str, max_fields: int) -> Shape:
    """Inverse of Shape.name, with a clear error for anything else."""
    layout, _, size = name.partition("_")
    try:
        if layout == "flat":
            return Shape("flat", check_field_count(int(size), max_fields))
        if layout == "structured":
            groups, per_group = (int(part) for part in size.split("x"))
            if per_group == FIELDS_PER_GROUP:
                return Shape("structured", check_field_count(groups * per_group, max_fields))
    except ValueError:
        pass
    raise ValueError(f"unknown flatnested shape {name!r}; allowed: flat_<N> or structured_<N/5>x5 "
                     f"with N a multiple of {FIELDS_PER_GROUP} up to {max_fields}")
