"""costlab: reproduce published MongoDB schema and storage studies on your own server."""

# The studies' names, in the report's order: declared once, in costlab/registry.py.
from costlab.registry import KEPT_RULES as _KEPT_RULES
from costlab.registry import STUDY_NAMES as STUDIES

__version__ = "0.1.0"
__all__ = ["STUDIES"]

# A Snakemake script job (costlab/jobs.py): signals run its cleanup, a failure is in its log.
from costlab.jobs import install_if_job as _install_if_job  # noqa: E402

_install_if_job(_KEPT_RULES)
