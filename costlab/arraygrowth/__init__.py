"""Study `arraygrowth`: WiredTiger journal bytes of a growing array, standalone vs replica set.

Source: "Linear array growth in MongoDB" (../shared/seeds/004_57aab6fbec664121.txt).
Modules: workloads (what is sent to the server), run (measuring jobs -> raw rows),
model (server-free size conditions of WiredTiger's delta path), fit (power-law exponent),
tables and figures (what the report shows), published (the article's numbers).
"""
