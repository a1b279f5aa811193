"""Study flatnested: the same fake-person data stored flat (`home_zip`) or structured (`home.zip`).

"Improving Storage and Read Performance for Free: Flat vs Structured Schemas": a query for a
field no document has makes the server walk every top-level field of every document; the
structured layout has fewer top-level fields (and repeats fewer name bytes), so it should be
faster to walk and smaller. Modules: shapes (which layouts), generate (values and documents),
model (BSON sizes, server-free), run (load and measure), tables, figures.
"""
