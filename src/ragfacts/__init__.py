"""ragfacts: is a RAG answer faithful to its reference (L-Face4RAG), and does it recall the expected facts (FaaF)?"""

__version__ = "0.1.0"
