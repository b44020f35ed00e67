"""The page builders behind docs/gen_reference.py, one module per kind of generated page."""
