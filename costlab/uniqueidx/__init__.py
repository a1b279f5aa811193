"""Study uniqueidx: the walkthrough of "Unique Indexes Quirks and Unique Documents In an Array of
Documents" as an executable conformance check. Each of the six steps runs against any server
and records what the article says happens, what this server did, and pass / fail / error.
"""
