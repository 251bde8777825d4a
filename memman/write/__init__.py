"""The write path, one way through: candidate -> retrieve -> route -> decide -> apply.

candidate.py validates and hashes a fact and reads its topic; retrieval.py finds the memories
it may touch (words, topic, vectors; meaning.py matches an attribute by meaning); supersede.py,
takeback.py, replaced.py and route.py settle what rules can; decide.py asks the LLM what they
cannot; apply.py writes the change and its audit event. writepath.py runs one fact through
the stages, chunkwalk.py a chunk of update_many.
"""
