"""costlab: reproduce published MongoDB schema and storage studies on your own server."""

# The studies' names, in the report's order: declared once, in costlab/registry.py.
from costlab.registry import STUDY_NAMES as STUDIES

__version__ = "0.1.0"
__all__ = ["STUDIES"]
