"""Study docsize: what a two-field projection still reads as documents grow from 1 to 64 KB.

Modules: generate (orders as BSON bytes), model (server-free sizes), load (one collection per
dataset), run (the three query shapes and the three runs), tables, figures.
"""
