"""What each study measures, in the report's words (title, source article, one paragraph): from the
studies' declarations (costlab.registry), in the registry's order (the report's sections)."""
from __future__ import annotations

from costlab.registry import REGISTRY
from costlab.study import Study as StudyInfo

STUDIES: dict[str, StudyInfo] = dict(REGISTRY)
