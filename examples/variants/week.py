"""A bucket of one ISO week (Monday to Sunday): a key's week of events in one document.

Name this file as a variant's layout_file and the bucket `week` in its declaration (docs/variants.md):

    appversions:
      variants:
        appV5R3_week: {base: appV5R3, bucket: week, layout_file: examples/variants/week.py}
"""
from costlab.appversions.buckets import Bucket


class Week(Bucket):
    name = "week"
    every = "1w"            # the days one document holds: polars dt.truncate("1w"), weeks starting on Mondays
    code_format = "%G%V"    # its code in the _id: the ISO year and week, YYYYWW (3 bytes, as YYYYMM)
    within = None           # a week may cross a month and a year (item names DD, MMDD repeat in it)
