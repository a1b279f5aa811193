"""Study `appversions`: the 14 application versions of "The Cost of Not Knowing MongoDB".

events: the event generator; versions: the registry (schema, Bulk Upsert, Get Reports, indexes,
collection options per version); statements: the Bulk Upsert as raw BSON update statements and
their checked sender (what the loader and the load test send); model: server-free collection
sizes and expected reports; correctness: Get Reports of a loaded collection vs the model.
"""
