"""Trained heads shipped with ragfacts: one JSON file per model (see ragfacts.methods.precision.head)."""
