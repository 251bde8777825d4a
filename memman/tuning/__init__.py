"""Measuring memman's own settings on labelled data: above the API, beside the CLI.

calibrate.py picks the Jaccard and cosine thresholds for a target false-merge rate on
labelled pairs; evaluate.py runs labelled decision cases through a MemoryManager's decider
to compare prompts. Both serve `memman calibrate` and `memman eval`.
"""
