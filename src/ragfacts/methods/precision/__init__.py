"""The precision side: L-Face4RAG and its ablations, split into decomposition, stages, aggregation, strategies.

The public API is `ragfacts.methods.lface4rag`.
"""
