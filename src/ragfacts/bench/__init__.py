"""Judging the judges against gold labels: metrics, the papers' tables, stratified samples, cascade trade-offs."""
