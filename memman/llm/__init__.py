"""Talking to an LLM: one structured call and the prompts it renders.

client.py is the one place memman calls an OpenAI-compatible endpoint; structured.py is
memman's own structured-output engine (instructor is optional); prompts.py finds and
renders the Jinja templates.
"""
