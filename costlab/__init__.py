"""costlab: reproduce published MongoDB schema and storage studies on your own server."""

__version__ = "0.1.0"

STUDIES = ("docsize", "appversions", "arraygrowth", "flatnested", "uniqueidx")
