"""Generators of the documentation pages that are derived, not written: the CLI and method references, and
the tables of `benchmarks/results/*.json`. `docs/_hooks.py` runs them on every `mkdocs build`."""
