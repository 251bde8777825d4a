"""The optional semantic tier: embedders and the in-process vector index.

embed.py and local_model.py produce vectors (the core never imports torch); vectors.py
keeps the index current through the change log; reindex.py fills missing vectors.
"""
