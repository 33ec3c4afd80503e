"""Generators of the documentation pages that are derived, not written: the CLI and method references, and the
tables of `benchmarks/results/*.json`; and the check of every figure typed into prose against its results file.
`docs/_hooks.py` runs them on every `mkdocs build`."""
