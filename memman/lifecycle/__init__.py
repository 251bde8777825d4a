"""What happens to memories around the write path: observe, short-term, consolidate, recall.

observe.py, utterance.py and pieces.py turn chat messages into candidate facts (pieces.py:
a message's clauses that stand alone, and the plans for now that are short-term);
shortterm.py and buffer.py hold them per session; consolidate.py extracts and
promotes them into long-term memory through the write path, and runs the phases that share
run.py's context: merge.py merges what near_duplicates.py finds, decay.py ages memories;
recall.py builds the prompt block; erase.py and manual.py are the user's own changes.
"""
