"""What the LLM is shown: every memory a fact may replace, by any signal, under one budget.

With an LLM configured the model is the reader. Measured from outside (issue 27), most of the
supersessions a capable model left stale were routing: the model was never shown the memory
being replaced. A threshold of one signal dropped another's candidate: the cosine's novel cut
marked a message novel although its words had found the old memory; a topic label read wrong
filtered a memory out; a fact that shares no word with what it replaces ("User is single" /
"been seeing someone since april") was ADDed with no call. So the decider is shown the union,
in this order, up to `decision_memories`:

1. the memories of the fact's (subject, attribute) and its kindred attributes, and the one a
   topic rule would have settled on (with a reader, a rule only proposes: the model decides);
2. retrieval's best by words (BM25) and, with an embedder, by meaning (cosine), interleaved
   rank by rank, so neither ranking's head is cut by the other;
3. the user's profile: their newest memory of each single-valued attribute (residence,
   employer, relationship status, diet, phone ... and whatever the model labelled so), and
   the memories no reader could label ("User's mobile provider is giffgaff": about anything,
   as far as memman can tell), newest first, so a fact meets the memory it replaces even when
   they share no word.

Only what the cheap tiers settle for certain costs no call: the same text (hash), a near-copy
(the router's DUPLICATE) and a restatement the topic tier reads as a NOOP. Offline nothing
here runs: the offline decider cannot read what the rules could not.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import sqlalchemy as sa

from memman.language.reader import READER, USER
from memman.models import Memory
from memman.scope import Scope
from memman.storage.store import Store
from memman.write.retrieval import Retrieved


def user_profile(
    store: Store, conn: sa.Connection, scope: Scope, single_valued: Iterable[str], limit: int
) -> list[Memory]:
    """The user's newest active memory of each single-valued attribute and their newest
    unlabelled memories, newest first, at most `limit`. One seek of the topic index per
    attribute (0.2 ms CPU for 29 attributes in a 100k scope: RESULTS.md, "Conflict suite and
    everyday probes") and one for the unlabelled, inside the write transaction."""
    newest = [
        memory
        for attribute in sorted(single_valued)
        for memory in store.active_by_topic(conn, scope, USER, attribute, 1)
    ]
    # What no reader could label may be about anything: the model reads it.
    newest += store.active_unlabelled(conn, scope, limit)
    newest.sort(key=lambda m: m.observed_at or m.updated_at, reverse=True)
    return newest[:limit]


def shown_union(
    text: str,
    *,
    first: list[Memory],
    by_words: list[Retrieved],
    by_meaning: list[Retrieved],
    profile: list[Memory],
    limit: int,
) -> list[Retrieved]:
    """The memories to show, each once, in the module docstring's order, at most `limit`.

    A retrieved memory keeps the scores that found it (the audit trail records them); one
    found by topic or profile only gets its Jaccard."""
    tokens = READER.content_tokens(text)
    found = {r.memory.id: r for r in by_words}
    for r in by_meaning:  # found by both: the BM25 of one and the cosine of the other
        known = found.get(r.memory.id)
        found[r.memory.id] = r if known is None else replace(known, cosine=r.cosine)

    def scored(memory: Memory) -> Retrieved:
        known = found.get(memory.id)
        if known is not None:
            return known
        return Retrieved(
            memory, bm25=None, jaccard=READER.jaccard(tokens, READER.content_tokens(memory.content))
        )

    interleaved = [found[r.memory.id] for r in rank_by_rank([by_words, by_meaning])]
    ordered = [
        *(scored(m) for m in first),
        *interleaved,
        *(scored(m) for m in profile),
    ]
    shown: dict[str, Retrieved] = {}
    for r in ordered:
        if len(shown) >= limit:
            break
        shown.setdefault(r.memory.id, r)
    return list(shown.values())


def rank_by_rank(rankings: list[list[Retrieved]]) -> list[Retrieved]:
    """The rankings interleaved, first of each, then second of each ..., each memory once
    (where it ranks first): no ranking's head is cut by another's tail."""
    merged: dict[str, Retrieved] = {}
    for rank in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if rank < len(ranking):
                merged.setdefault(ranking[rank].memory.id, ranking[rank])
    return list(merged.values())
