"""What each study measures, in the report's words (title, source article, one paragraph)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StudyInfo:
    name: str
    title: str
    source: str
    measured: str


# Order of the sections in the report (the design sheet's order).
STUDIES: dict[str, StudyInfo] = {info.name: info for info in (
    StudyInfo(
        "docsize",
        "Projection and large documents",
        '"Projection and large documents: what MongoDB still reads, measured"',
        "Four collections of orders whose size (1 to 64 KB) comes from a history array, one index "
        "{createdAt: 1, total: 1}; time windows read three ways (whole document, two-field projection, "
        "covered by the index), with the default cache and with a 256 MB cache in a 1 GB memory limit, "
        "windows in sequence and at random. Client time, server time, bytes read into the WiredTiger "
        "cache and the plan.",
    ),
    StudyInfo(
        "appversions",
        "The cost of not knowing MongoDB",
        '"The Cost of Not Knowing MongoDB", Introduction and Parts 1-3',
        "One fraud-report application built 14 ways (appV1 to appV6R4): for each schema the number of "
        "documents, document and data sizes, storage and index size per event, and a phased load test "
        "of Bulk Upsert and Get Reports (rates reached and latencies).",
    ),
    StudyInfo(
        "arraygrowth",
        "Linear array growth",
        '"Linear array growth in MongoDB"',
        "Pushing N timestamps into one document's array versus inserting N documents: the WiredTiger "
        "journal bytes written, which the article finds grow quadratically with N on a standalone and "
        "linearly on a single-node replica set.",
    ),
    StudyInfo(
        "flatnested",
        "Flat vs structured schemas",
        '"Improving Storage and Read Performance for Free: Flat vs Structured Schemas"',
        "The same documents stored with a flat field layout and with fields grouped into nested "
        "sub-documents: storage size and the time to walk every field.",
    ),
    StudyInfo(
        "uniqueidx",
        "Unique index quirks",
        '"Unique Indexes Quirks and Unique Documents in an Array of Documents"',
        "A step-by-step conformance check of six unique-index behaviours: missing fields as null, "
        "compound keys over arrays, duplicates within one document, partial indexes, and a validator "
        "that keeps the documents of an array unique.",
    ),
)}
