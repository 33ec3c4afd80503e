"""Live RAG services: how to ask one a question over HTTP and read its answer and retrieved contexts.

This package knows no method, dataset or run directory; `ragfacts.runs.collect` asks a whole dataset's
questions with it and stores the answers in the run directory.
"""

from ragfacts.endpoints.client import Answer, EndpointClient
from ragfacts.endpoints.options import EndpointError, EndpointOptions, EndpointRequest, public_url, resolve
from ragfacts.endpoints.paths import PathError, ReplyPath, parse_path

__all__ = [
    "Answer",
    "EndpointClient",
    "EndpointError",
    "EndpointOptions",
    "EndpointRequest",
    "PathError",
    "ReplyPath",
    "parse_path",
    "public_url",
    "resolve",
]
