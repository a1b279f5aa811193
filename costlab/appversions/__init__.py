"""Study `appversions`: the 14 application versions of "The Cost of Not Knowing MongoDB".

events: the event generator; versions: the registry (schema, Bulk Upsert, Get Reports, indexes,
collection options per version); model: server-free collection sizes and expected reports;
correctness: Get Reports of a loaded collection vs the model.
"""
