"""`python -m ragfacts`: the command line."""

from ragfacts.cli import run

run()
